package providertest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// The credentials and zone the fake accepts.
const (
	exoAPIKey    = "EXOtestkey1234567890abcd"
	exoAPISecret = "test-secret-must-never-leak-0123456789"
	exoZone      = "ch-gva-2"
)

// exoscaleDescription is loaded once per test binary and only read after that.
var exoscaleDescription = apispec.Once(apispec.Exoscale)

// ExoscaleVariant is a plausible behaviour of the Exoscale API where it is
// undocumented (a busy pool, which members a shrinking :scale removes, how
// a scale past the quota is refused).
type ExoscaleVariant struct {
	Name string
	Set  func(*fakeapi.Options)
}

// ExoscaleVariants lists the behaviours the kit runs under.
func ExoscaleVariants() []ExoscaleVariant {
	return []ExoscaleVariant{
		{"default", func(*fakeapi.Options) {}},
		// The kit makes several changes to one pool in a row, as CA does
		// only across loops; without provisioning lag the pool is running
		// again by the next one. The provider's own tests cover the busy
		// pool itself.
		{"busy-queued+oldest-first", func(o *fakeapi.Options) {
			o.Busy, o.ScaleDownOldestFirst, o.ProvisionDelay, o.RemovalDelay = fakeapi.BusyQueue, true, 0, 0
		}},
		{"busy-refused", func(o *fakeapi.Options) { o.Busy, o.ProvisionDelay, o.RemovalDelay = fakeapi.BusyRefuse, 0, 0 }},
		{"quota-as-failed-operation", func(o *fakeapi.Options) { o.QuotaAsFailedOperation = true }},
	}
}

// exoscaleEnv is one provider bound to a freshly seeded fake, with the ids
// of the seeded pools (the node groups).
type exoscaleEnv struct {
	fake                                        *fakeapi.Server
	clock                                       *fakecloud.ManualClock
	p                                           cloudprovider.CloudProvider
	workersPool, systemPool, gpuPool, batchPool string
	// policy is the role policy the fake enforces.
	policy *fakecloud.Permissions
}

// newExoscaleEnv seeds SKS cluster "prod" with nodepools "workers" (3 running),
// "system" (2, no spec) and "gpu" (0, tainted), a plain pool "batch" (2)
// and one unmanaged control-plane instance, checks every exchange with the
// fake against Exoscale's API description, and builds the provider from
// opts with specs as its --nodes (the kit's own when nil), configured from
// the environment as upstream's provider is. It makes no cloud call.
func newExoscaleEnv(t *testing.T, v ExoscaleVariant, policy *fakecloud.Permissions, opts registry.BuildOptions, specs []string) (*exoscaleEnv, error) {
	t.Helper()
	clock := fakecloud.NewManualClock(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))
	fo := fakeapi.Options{ProvisionDelay: time.Minute, RemovalDelay: 30 * time.Second, QuotaLimit: 2000}
	v.Set(&fo)
	fo.Now, fo.APIKey, fo.APISecret, fo.Zone, fo.Policy = clock.Now, exoAPIKey, exoAPISecret, exoZone, policy
	fake := fakeapi.New(fo)
	exoscaleDescription.Watch(t, fake.API, nil)
	e := &exoscaleEnv{fake: fake, clock: clock, policy: policy}
	medium := fake.AddInstanceType(exoapi.InstanceType{Family: "standard", Size: "medium", CPUs: 2, MemoryBytes: 4 << 30})
	gpu := fake.AddInstanceType(exoapi.InstanceType{Family: "gpua5000", Size: "small", CPUs: 12, MemoryBytes: 56 << 30, GPUs: 1})
	cluster := fake.AddSKSCluster("prod")
	_, e.workersPool = fake.AddNodepool(cluster, fakeapi.PoolSeed{Name: "workers", Size: 3, InstanceTypeID: medium, DiskSizeGiB: 50, Labels: map[string]string{"role": "worker"}})
	_, e.systemPool = fake.AddNodepool(cluster, fakeapi.PoolSeed{Name: "system", Size: 2, InstanceTypeID: medium})
	_, e.gpuPool = fake.AddNodepool(cluster, fakeapi.PoolSeed{
		Name: "gpu", Size: 0, InstanceTypeID: gpu, DiskSizeGiB: 100, Labels: map[string]string{"role": "gpu"},
		Taints: []exoapi.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}},
	})
	e.batchPool = fake.AddInstancePool(fakeapi.PoolSeed{Name: "batch", Size: 2, InstanceTypeID: medium})
	fake.AddInstance("control-plane", medium)
	endpoint := fake.Start()
	t.Cleanup(fake.Close)

	if specs == nil {
		specs = []string{"1:20:workers", "1:10:batch", "0:3:gpu"}
	}
	opts.NodeGroupSpecs = specs
	environment := map[string]string{
		exoscale.EnvAPIKey: exoAPIKey, exoscale.EnvAPISecret: exoAPISecret, exoscale.EnvZone: exoZone,
		exoscale.EnvAPIEndpoint: endpoint, exoscale.EnvSKSCluster: "prod", exoscale.EnvRefreshInterval: "0s",
	}
	opts.Getenv = func(k string) string { return environment[k] }
	opts.Now = clock.Now
	opts.RetrySleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	if opts.UserAgent == "" {
		opts.UserAgent = "conformance-kit"
	}
	var err error
	e.p, err = exoscale.Build(context.Background(), opts)
	return e, err
}

// ExoscaleHarness builds every Env of the kit from a fake that behaves as v says,
// under the deployment example's role policy.
func ExoscaleHarness(v ExoscaleVariant) cloudprovidertest.Harness {
	return harness(func(t *testing.T, opts registry.BuildOptions, specs []string) (*exoscaleEnv, error) {
		return newExoscaleEnv(t, v, examplePolicy(t, fakeapi.ExamplePolicy), opts, specs)
	}, map[cloudprovidertest.Hook]string{
		cloudprovidertest.HookFailEnrichmentLookups: "instance types are the template itself, not an enrichment: the provider makes no lookup that only enriches a template",
	})
}

// provider is the provider under test.
func (e *exoscaleEnv) provider() cloudprovider.CloudProvider { return e.p }

// kitEnv is the kit's view of e; the plain pool "batch" carries an option
// override in its labels.
func (e *exoscaleEnv) kitEnv(t *testing.T) *cloudprovidertest.Env {
	policy := e.policy
	ctx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), cloudprovidertest.CallDeadline)
	}
	return cloudprovidertest.WithOptionsGroup(&cloudprovidertest.Env{
		Provider:   e.p,
		CloudCalls: e.fake.RequestCount,
		Node: func(in cloudprovider.Instance) *corev1.Node {
			return &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: strings.TrimPrefix(in.Id, exoscale.ProviderIDPrefix), Labels: map[string]string{"role": "worker"}},
				Spec:       corev1.NodeSpec{ProviderID: in.Id},
			}
		},
		Settle:        e.fake.Settle,
		FailNextCalls: e.fake.FailNext,
		InjectMutationFault: cloudprovidertest.MutationSelectors{
			cloudprovidertest.MutationIncreaseSize:       {Method: http.MethodPut, PathContains: ":scale"},
			cloudprovidertest.MutationDecreaseTargetSize: {Method: http.MethodPut, PathContains: ":scale"},
			cloudprovidertest.MutationDeleteNodes:        {Method: http.MethodPut, PathContains: ":evict"},
		}.Injector(e.fake.AddFault),
		// Group ids are instance pool ids, for nodepools too.
		AddUnseenInstance: func(groupID string) string {
			id, err := e.fake.LaunchInstance(groupID)
			if err != nil {
				t.Fatal(err)
			}
			return exoscale.ProviderIDPrefix + id
		},
		// A member the pool counts in its size whose start failed.
		AddFailedInstance: func(groupID string) string {
			id, err := e.fake.LaunchInstance(groupID)
			if err != nil {
				t.Fatal(err)
			}
			e.fake.SetInstanceState(id, "error")
			return exoscale.ProviderIDPrefix + id
		},
		FailNextScaleUp: func(string) {
			e.fake.FailNextOperationLater(exoapi.OperationFailure, "busy", "instance pool is busy")
		},
		ListScaleUpLate: func(groupID string) {
			if err := e.fake.ListScaleUpLate(groupID); err != nil {
				t.Fatal(err)
			}
		},
		HoldRemoval: func(providerID string) { e.fake.HoldRemoval(strings.TrimPrefix(providerID, exoscale.ProviderIDPrefix)) },
		// Refresh reads every pool's size from the instance-pool list.
		InjectListingFault: func(f fakecloud.Fault) {
			f.Method, f.Operation = http.MethodGet, "GET /v2/instance-pool"
			e.fake.AddFault(f)
		},
		ClearFaults: e.fake.ClearFaults,
		// Exoscale refuses a scale past the organisation's instance quota
		// with a bare 400; the provider learns why from the quota it reads
		// at Refresh. With QuotaAsFailedOperation the scale is accepted and
		// its operation fails on submission: a refusal too, which CA must
		// see as ResourceExhausted.
		RefuseForQuota: func() {
			e.fake.SetQuotaLimit(1)
			e.clock.Advance(exoscale.QuotaTTL)
			c, cancel := ctx()
			defer cancel()
			if err := e.p.Refresh(c); err != nil {
				t.Fatal(err)
			}
		},
		// The next :scale or :evict is accepted and its operation ends in
		// "failure" on submission, the pool unchanged.
		ReportMutationFailed: func(cloudprovidertest.Mutation) {
			e.fake.FailNextOperation(exoapi.OperationFailure, "busy", "instance pool is busy")
		},
		SetGroupSettings: func(groupID string, seed cloudprovidertest.SettingsSeed) {
			p, _ := e.fake.Pool(groupID)
			if p.NodepoolID == "" {
				// A plain pool's labels stay in the cloud: AWS spelling.
				e.fake.AddLabels(groupID, seed.AWSKeys(), nil)
				return
			}
			// Nodepool labels land on the nodes: node-label spelling, and
			// hinted labels and taints as the nodepool's own.
			var taints []exoapi.Taint
			for _, tt := range seed.Taints {
				taints = append(taints, exoapi.Taint{Key: tt.Key, Value: tt.Value, Effect: string(tt.Effect)})
			}
			e.fake.AddLabels(groupID, seed.NodeLabels(), taints)
			// Nodepool labels leave no trace in the pool list: they are
			// served within --max-staleness (docs/providers/exoscale.md).
			e.clock.Advance(refresh.DefaultMaxStaleness)
		},
		Clock: e.clock,
		Budget: &cloudprovidertest.RefreshBudget{
			// The instance-pool list; the SKS nodepool list only at the
			// bound or when the pool list shows a new, gone or unmapped pool.
			Unchanged: 1,
			// One /instance list covers every pool's members.
			GroupPages: func(string) int { return 1 },
		},
		// A member that fails by itself: the instance-pool list still shows
		// the same members, only /instance shows the state.
		ChangeUnseen: func(groupID string) (func([]cloudprovider.Instance) bool, string) {
			p, _ := e.fake.Pool(groupID)
			if len(p.Members) == 0 {
				t.Fatalf("pool %s has no member to change", groupID)
			}
			id := p.Members[0].ID
			e.fake.SetInstanceState(id, "error")
			return func(in []cloudprovider.Instance) bool {
				for _, i := range in {
					if i.Id == exoscale.ProviderIDPrefix+id {
						return i.Status != nil && i.Status.ErrorInfo != nil
					}
				}
				return false
			}, "a member in state error"
		},
		// A spec names a pool by id, by its name, or by its nodepool's id or
		// name.
		SpecNames: func(groupID string) []string {
			p, _ := e.fake.Pool(groupID)
			return []string{p.Name, p.NodepoolID}
		},
		// Every served pool's instance type is known.
		TemplateGroups: []string{e.workersPool, e.systemPool, e.gpuPool, e.batchPool},
		Permissions:    policy,
	}, e.batchPool)
}
