package providertest

import (
	"context"
	"encoding/json"
	"net/http"
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
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// The seeded VKE cluster and its pools' ids.
const (
	vultrCluster    = "c0ffee00-0000-4000-8000-000000000001"
	vultrMainPool   = "a-main"   // auto_scaler, min 2, 3 nodes, max 8
	vultrGPUPool    = "b-gpu"    // auto_scaler, min 1, 2 nodes, max 4, GPU plan, tainted
	vultrStaticPool = "c-static" // no auto_scaler, 1 node: not served
	vultrMetalPool  = "d-metal"  // auto_scaler, bare-metal plan
)

// vultrDescription is loaded once per test binary and only read after that.
var vultrDescription = apispec.Once(apispec.Vultr)

// VultrBusy lists the plausible behaviours of a VKE pool while nodes are
// created, which Vultr does not document (fakeapi.Options.Busy); the kit
// runs under each.
func VultrBusy() []fakeapi.BusyPolicy {
	return []fakeapi.BusyPolicy{fakeapi.BusyNever, fakeapi.BusyPending, fakeapi.BusyRefuse}
}

// vultrEnv is one provider bound to a freshly seeded fake.
type vultrEnv struct {
	fake  *fakeapi.Server
	clock *fakecloud.ManualClock
	p     cloudprovider.CloudProvider
}

// newVultrEnv seeds a fake VKE API whose lag runs on a manual clock, checks every
// exchange with it against Vultr's API description, and builds the provider
// from opts with specs as its --nodes, as main builds it. It makes no cloud
// call: the kit takes the first snapshot.
func newVultrEnv(t *testing.T, busy fakeapi.BusyPolicy, opts registry.BuildOptions, specs []string) (*vultrEnv, error) {
	t.Helper()
	clock := fakecloud.NewManualClock(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))
	fo := fakeapi.Options{Now: clock.Now, ActiveAfter: 90 * time.Second, CloseLinger: 30 * time.Second, Seed: 42, Busy: busy}
	if busy == fakeapi.BusyRefuse {
		// The kit changes one pool several times in a row, as CA does
		// only across loops; without provisioning lag the pool is active
		// again by the next change. The provider's own tests cover the
		// refusal itself.
		fo.ActiveAfter = 0
	}
	fake := fakeapi.New(fo)
	vultrDescription.Watch(t, fake.API, nil)
	fake.Start()
	t.Cleanup(fake.Close)
	fake.AddPlans(fakeapi.StandardPlans()...)
	fake.AddMetalPlans(fakeapi.StandardMetalPlans()...)
	fake.AddCluster(fakeapi.ClusterSpec{ID: vultrCluster, Label: "test", Region: "ams", Version: "v1.33.0+1"})
	for _, p := range []fakeapi.PoolSpec{
		{ID: vultrMainPool, Label: "main", Plan: "vc2-2c-4gb", Quantity: 3, Min: 2, Max: 8, AutoScaler: true, Labels: map[string]string{"tier": "web"}},
		{ID: vultrGPUPool, Label: "gpu", Plan: "vcg-a16-6c-64g-16vram", Quantity: 2, Min: 1, Max: 4, AutoScaler: true,
			Taints: []fakeapi.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}},
		{ID: vultrStaticPool, Label: "static", Plan: "vhf-4c-16gb", Quantity: 1, Min: 1, Max: 1},
		{ID: vultrMetalPool, Label: "metal", Plan: "vbm-8c-132gb", Quantity: 1, Min: 1, Max: 2, AutoScaler: true},
	} {
		if _, err := fake.AddPool(vultrCluster, p); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := json.Marshal(map[string]string{"cluster_id": vultrCluster, "token": fake.Token(), "api_url": fake.URL()})
	if err != nil {
		t.Fatal(err)
	}
	opts.CloudConfig = filepath.Join(t.TempDir(), "cloud-config.json")
	if err := os.WriteFile(opts.CloudConfig, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	opts.NodeGroupSpecs = specs
	// The process's environment is not the fake's.
	opts.Getenv = func(string) string { return "" }
	opts.Now = clock.Now
	opts.RetrySleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	if opts.UserAgent == "" {
		opts.UserAgent = "conformance-kit"
	}
	p, err := vultr.Build(context.Background(), opts)
	return &vultrEnv{fake: fake, clock: clock, p: p}, err
}

// VultrHarness builds every Env of the kit from a fake VKE API whose
// pools behave as busy says while nodes are created.
func VultrHarness(busy fakeapi.BusyPolicy) cloudprovidertest.Harness {
	return harness(func(t *testing.T, opts registry.BuildOptions, specs []string) (*vultrEnv, error) {
		return newVultrEnv(t, busy, opts, specs)
	}, map[cloudprovidertest.Hook]string{
		cloudprovidertest.HookAddFailedInstance:     "VKE reports no node that failed to start: a node is pending, active, suspended or closed (instanceStatus)",
		cloudprovidertest.HookFailNextScaleUp:       "VKE reports no failed scale-up, so the provider shows no failed slots: requested nodes not listed yet count only in TargetSize",
		cloudprovidertest.HookFailEnrichmentLookups: "plans are the template itself, not an enrichment: the provider makes no lookup that only enriches a template",
		cloudprovidertest.HookRefuseForQuota:        "Vultr documents no quota or capacity answer to a node-pool resize",
		cloudprovidertest.HookReportMutationFailed:  "VKE reports a failed change only as an HTTP error status, never inside a success answer; DefiniteRefusalNotQuarantined checks that",
		cloudprovidertest.HookPermissions:           "a Vultr API key carries no per-operation rights: it acts with all of its user's (docs/providers/vultr.md#permissions)",
	})
}

// provider is the provider under test.
func (e *vultrEnv) provider() cloudprovider.CloudProvider { return e.p }

// kitEnv is the kit's view of e; the gpu pool carries an option override
// in its labels.
func (e *vultrEnv) kitEnv(t *testing.T) *cloudprovidertest.Env {
	return cloudprovidertest.WithOptionsGroup(&cloudprovidertest.Env{
		Provider:   e.p,
		CloudCalls: e.fake.RequestCount,
		Node: func(inst cloudprovider.Instance) *corev1.Node {
			id := strings.TrimPrefix(inst.Id, vultr.ProviderIDPrefix)
			return &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "node-" + id, Labels: map[string]string{vultr.LabelNodeID: id}},
				Spec:       corev1.NodeSpec{ProviderID: inst.Id},
			}
		},
		Settle:        e.fake.Settle,
		FailNextCalls: e.fake.FailNext,
		InjectMutationFault: cloudprovidertest.MutationSelectors{
			cloudprovidertest.MutationIncreaseSize:       {Method: http.MethodPatch, PathContains: "/node-pools/"},
			cloudprovidertest.MutationDecreaseTargetSize: {Method: http.MethodPatch, PathContains: "/node-pools/"},
			cloudprovidertest.MutationDeleteNodes:        {Method: http.MethodDelete, PathContains: "/nodes/"},
		}.Injector(e.fake.AddFault),
		AddUnseenInstance: func(groupID string) string {
			n, err := e.fake.LaunchInstance(vultrCluster, groupID)
			if err != nil {
				t.Fatal(err)
			}
			return vultr.ProviderIDPrefix + n.ID
		},
		ListScaleUpLate: func(groupID string) {
			if err := e.fake.ListScaleUpLate(vultrCluster, groupID); err != nil {
				t.Fatal(err)
			}
		},
		HoldRemoval: func(providerID string) { e.fake.HoldRemoval(strings.TrimPrefix(providerID, vultr.ProviderIDPrefix)) },
		// Refresh reads every pool's node_quantity from the pool list.
		InjectListingFault: func(f fakecloud.Fault) {
			f.Method, f.Operation = http.MethodGet, "GET /v2/kubernetes/clusters/{id}/node-pools"
			e.fake.AddFault(f)
		},
		ClearFaults: e.fake.ClearFaults,
		// Pool labels land on the nodes: options and resources in the
		// node-label spelling, hinted labels and taints as the pool's own.
		SetGroupSettings: func(groupID string, seed cloudprovidertest.SettingsSeed) {
			var taints []fakeapi.Taint
			for _, t := range seed.Taints {
				taints = append(taints, fakeapi.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
			}
			if err := e.fake.SetPoolLabels(vultrCluster, groupID, seed.NodeLabels(), taints); err != nil {
				t.Fatal(err)
			}
		},
		Clock: e.clock,
		// One node-pool list carries every pool's nodes.
		Budget: &cloudprovidertest.RefreshBudget{Unchanged: 1},
		// Every Refresh reads every node: a node launched behind the
		// provider's back is a change like any other.
		ChangeUnseen: func(groupID string) (func([]cloudprovider.Instance) bool, string) {
			n, err := e.fake.LaunchInstance(vultrCluster, groupID)
			if err != nil {
				t.Fatal(err)
			}
			return listsInstance(vultr.ProviderIDPrefix + n.ID), "a node launched in the pool"
		},
		// A spec names a pool by id or by its label.
		SpecNames: func(groupID string) []string {
			v, ok := e.fake.Pool(vultrCluster, groupID)
			if !ok {
				t.Fatalf("fake has no pool %s", groupID)
			}
			return []string{v.Label}
		},
		// Every autoscaled pool's plan is known (c-static is not served).
		TemplateGroups: []string{vultrMainPool, vultrGPUPool, vultrMetalPool},
	}, vultrGPUPool)
}
