package providertest

import (
	"context"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// The seeded scaling groups and the credentials the fake accepts.
const (
	volcMainGroup  = fakeapi.StandardMainGroup
	volcOtherGroup = fakeapi.StandardOtherGroup
	volcRegion     = "cn-beijing"
	volcAccessKey  = "AKLTsecretaccesskeyvalue42"
	volcSecretKey  = "TWFueSBoYW5kcyBtYWtlIGxpZ2h0IHdvcms="
)

// volcengineDescription is loaded once per test binary and only read after that.
var volcengineDescription = apispec.Once(apispec.Volcengine)

// seedVolcengine is the fake's standard seed (fakeapi.Server.SeedStandard).
func seedVolcengine(f *fakeapi.Server) { f.SeedStandard() }

// volcengineEnv is one provider bound to a freshly seeded fake.
type volcengineEnv struct {
	fake  *fakeapi.Server
	clock *fakecloud.ManualClock
	p     cloudprovider.CloudProvider
	// policy is the IAM policy the fake enforces.
	policy *fakecloud.Permissions
}

// newVolcengineEnv seeds a fake whose lag runs on a manual clock, checks every
// exchange with it against Volcengine's API description, and builds the
// provider from opts with specs as its --nodes (both groups by id when
// nil), configured as upstream's provider is (credentials, region and
// endpoint in the environment). It makes no cloud call.
func newVolcengineEnv(t *testing.T, oldestFirst bool, policy *fakecloud.Permissions, opts registry.BuildOptions, specs []string) (*volcengineEnv, error) {
	t.Helper()
	clock := fakecloud.NewManualClock(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))
	fake := fakeapi.New(fakeapi.Options{
		Now: clock.Now, ProvisionDelay: time.Minute, RemoveDelay: time.Minute,
		ActivitiesOldestFirst: oldestFirst, Policy: policy,
	})
	volcengineDescription.Watch(t, fake.API, nil)
	seedVolcengine(fake)
	endpoint, err := url.Parse(fake.Start())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	if specs == nil {
		specs = []string{"1:10:" + volcMainGroup, "0:5:" + volcOtherGroup}
	}
	opts.NodeGroupSpecs = specs
	opts.CloudConfig = filepath.Join(t.TempDir(), "cloud-config")
	if err := os.WriteFile(opts.CloudConfig, []byte("[Global]\nscheme = http\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environment := map[string]string{"ACCESS_KEY": volcAccessKey, "SECRET_KEY": volcSecretKey, "REGION_ID": volcRegion, "ENDPOINT": endpoint.Host}
	opts.Getenv = func(k string) string { return environment[k] }
	opts.Now = clock.Now
	opts.RetrySleep = func(context.Context, time.Duration) error { return nil }
	if opts.UserAgent == "" {
		opts.UserAgent = "conformance-kit"
	}
	p, err := volcengine.Build(context.Background(), opts)
	return &volcengineEnv{fake: fake, clock: clock, p: p, policy: policy}, err
}

// VolcengineHarness builds every Env of the kit from a fake that lists scaling
// activities oldest first or newest first (the API does not document the
// order), under the deployment example's IAM policy.
func VolcengineHarness(oldestFirst bool) cloudprovidertest.Harness {
	return harness(func(t *testing.T, opts registry.BuildOptions, specs []string) (*volcengineEnv, error) {
		return newVolcengineEnv(t, oldestFirst, examplePolicy(t, fakeapi.ExamplePolicy), opts, specs)
	}, map[cloudprovidertest.Hook]string{
		cloudprovidertest.HookSpecNames: "--nodes names scaling groups by id only",
	})
}

// provider is the provider under test.
func (e *volcengineEnv) provider() cloudprovider.CloudProvider { return e.p }

// kitEnv is the kit's view of e; the other group carries an option
// override in its tags.
func (e *volcengineEnv) kitEnv(t *testing.T) *cloudprovidertest.Env {
	policy := e.policy
	return cloudprovidertest.WithOptionsGroup(&cloudprovidertest.Env{
		Provider:   e.p,
		CloudCalls: e.fake.RequestCount,
		Node: func(inst cloudprovider.Instance) *corev1.Node {
			return &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: strings.TrimPrefix(inst.Id, volcengine.ProviderIDPrefix), Labels: map[string]string{}},
				Spec:       corev1.NodeSpec{ProviderID: inst.Id},
			}
		},
		Settle:        e.fake.Settle,
		FailNextCalls: e.fake.FailNext,
		InjectMutationFault: cloudprovidertest.MutationSelectors{
			cloudprovidertest.MutationIncreaseSize:       {Operation: fakeapi.ActionModifyScalingGroup},
			cloudprovidertest.MutationDecreaseTargetSize: {Operation: fakeapi.ActionModifyScalingGroup},
			cloudprovidertest.MutationDeleteNodes:        {Operation: fakeapi.ActionRemoveInstances},
		}.Injector(e.fake.AddFault),
		AddUnseenInstance: func(groupID string) string {
			id, err := e.fake.LaunchInstance(groupID)
			if err != nil {
				t.Fatal(err)
			}
			return volcengine.ProviderIDPrefix + id
		},
		AddFailedInstance: func(groupID string) string {
			// An Error instance counts in the desired number, as when the
			// service launched it for the group and its start failed.
			g, _ := e.fake.Group(groupID)
			id := e.fake.AddInstance(groupID, fakeapi.StatusError)
			e.fake.SetGroupBounds(groupID, g.Min, g.Max, g.Desired+1)
			return volcengine.ProviderIDPrefix + id
		},
		FailNextScaleUp: func(groupID string) {
			// The service starts no instance (out of stock): the slot stays
			// unfilled and the provider shows a placeholder.
			e.fake.SetCreateFailure(groupID, &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "no stock", NoInstances: true})
		},
		// The service launches instances at its periodic check, which may
		// come after the change of the desired number.
		ListScaleUpLate: func(groupID string) {
			if err := e.fake.LaunchLate(groupID); err != nil {
				t.Fatal(err)
			}
		},
		HoldRemoval: func(providerID string) {
			e.fake.HoldRemoval(strings.TrimPrefix(providerID, volcengine.ProviderIDPrefix))
		},
		// Refresh reads each group's desired number from DescribeScalingGroups.
		InjectListingFault: func(f fakecloud.Fault) {
			f.Operation = fakeapi.ActionDescribeScalingGroups
			e.fake.AddFault(f)
		},
		// Keys without vpc:DescribeSubnets or ecs:DescribeImages (upstream
		// never needed them) get AccessDenied on every call. The kit calls
		// it before the provider's first Refresh, as for a provider started
		// with such a key.
		FailEnrichmentLookups: func() {
			for _, action := range []string{fakeapi.ActionDescribeSubnets, fakeapi.ActionDescribeImages} {
				e.fake.AddFault(fakecloud.Fault{Operation: action, Status: http.StatusForbidden, Code: "AccessDenied", Times: math.MaxInt32})
			}
		},
		ClearFaults:          e.fake.ClearFaults,
		RemovesOnlyInService: true,
		// Volcengine's gateway answers some refusals with HTTP 200 and its
		// error object in ResponseMetadata.Error.
		ReportMutationFailed: func(kind cloudprovidertest.Mutation) {
			action := fakeapi.ActionModifyScalingGroup
			if kind == cloudprovidertest.MutationDeleteNodes {
				action = fakeapi.ActionRemoveInstances
			}
			e.fake.AddFault(fakecloud.Fault{Operation: action, Status: http.StatusOK,
				Code: "InvalidScalingGroup.InvalidStatus", Message: "the scaling group is busy"})
		},
		RefuseForQuota: func() {
			e.fake.AddFault(fakecloud.Fault{Operation: fakeapi.ActionModifyScalingGroup, Status: http.StatusBadRequest,
				Code: "QuotaExceeded.Instance", Message: "instance quota exceeded", Times: math.MaxInt32})
		},
		// Tags stay in the cloud: every setting in the AWS spelling, next to
		// the group's other tags.
		SetGroupSettings: func(groupID string, seed cloudprovidertest.SettingsSeed) {
			g, _ := e.fake.Group(groupID)
			tags := maps.Clone(g.Tags)
			maps.Copy(tags, seed.AWSKeys())
			e.fake.SetGroupTags(groupID, tags)
		},
		Clock: e.clock,
		Budget: &cloudprovidertest.RefreshBudget{
			// One page of DescribeScalingGroups (in rotation beyond 50
			// groups).
			Unchanged: 1,
			// DescribeScalingInstances pages at volcapi.PageSize.
			GroupPages: func(groupID string) int {
				return max(1, (len(e.fake.Instances(groupID))+volcapi.PageSize-1)/volcapi.PageSize)
			},
		},
		// The health check's swap keeps desired and total: only a new
		// listing of the group shows it, which the provider skips until the
		// listing reaches the bound.
		ChangeUnseen: func(groupID string) (func([]cloudprovider.Instance) bool, string) {
			id, err := e.fake.ReplaceInstance(groupID)
			if err != nil {
				t.Fatal(err)
			}
			return func(in []cloudprovider.Instance) bool {
				for _, i := range in {
					if i.Id == volcengine.ProviderIDPrefix+id {
						return true
					}
				}
				return false
			}, "an instance replaced by the health check at unchanged totals"
		},
		// Both served groups have a launch configuration with a known
		// instance type (scg-unmanaged is not served).
		TemplateGroups: []string{volcMainGroup, volcOtherGroup},
		Permissions:    policy,
	}, volcOtherGroup)
}
