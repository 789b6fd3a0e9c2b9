package exoscale

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

const (
	testKey    = "EXOtestkey1234567890abcd"
	testSecret = "test-secret-must-never-leak-0123456789"
	testZone   = "ch-gva-2"
)

// testEnv is a provider bound to a seeded fake Exoscale API.
type testEnv struct {
	fake     *fakeapi.Server
	clock    *fakecloud.ManualClock
	provider *cloudProvider
	// ids of the seeded resources
	clusterID, workersPool, systemPool, batchPool, gpuPool, controlPlane string
}

type envOptions struct {
	fake    fakeapi.Options
	specs   []string
	cluster string
	workers int // size of nodepool "workers"
	noGPU   bool
	// env are further environment variables.
	env map[string]string
	// build is what main would pass from its flags.
	build registry.BuildOptions
}

func defaultEnvOptions() envOptions {
	return envOptions{
		fake:    fakeapi.Options{ProvisionDelay: time.Minute, RemovalDelay: 30 * time.Second, QuotaLimit: 2000},
		specs:   []string{"1:20:workers", "1:10:batch", "0:3:gpu"},
		cluster: "prod",
		workers: 3,
	}
}

// newTestEnv seeds: SKS cluster "prod" with nodepools "workers" (3 running),
// "system" (2, no spec) and "gpu" (0, tainted), a plain pool "batch" (2) and
// one unmanaged control-plane instance.
func newTestEnv(t *testing.T, o envOptions) *testEnv {
	t.Helper()
	clock := fakecloud.NewManualClock(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))
	o.fake.Now = clock.Now
	o.fake.APIKey, o.fake.APISecret, o.fake.Zone = testKey, testSecret, testZone
	fake := fakeapi.New(o.fake)
	watchSpec(t, fake)
	e := &testEnv{fake: fake, clock: clock}
	medium := fake.AddInstanceType(exoapi.InstanceType{Family: "standard", Size: "medium", CPUs: 2, MemoryBytes: 4 << 30})
	gpu := fake.AddInstanceType(exoapi.InstanceType{Family: "gpua5000", Size: "small", CPUs: 12, MemoryBytes: 56 << 30, GPUs: 1})
	e.clusterID = fake.AddSKSCluster("prod")
	_, e.workersPool = fake.AddNodepool(e.clusterID, fakeapi.PoolSeed{Name: "workers", Size: o.workers, InstanceTypeID: medium, DiskSizeGiB: 50, Labels: map[string]string{"role": "worker"}})
	_, e.systemPool = fake.AddNodepool(e.clusterID, fakeapi.PoolSeed{Name: "system", Size: 2, InstanceTypeID: medium})
	if !o.noGPU {
		_, e.gpuPool = fake.AddNodepool(e.clusterID, fakeapi.PoolSeed{
			Name: "gpu", Size: 0, InstanceTypeID: gpu, DiskSizeGiB: 100, Labels: map[string]string{"role": "gpu"},
			Taints: []exoapi.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}},
		})
	}
	e.batchPool = fake.AddInstancePool(fakeapi.PoolSeed{Name: "batch", Size: 2, InstanceTypeID: medium})
	e.controlPlane = fake.AddInstance("control-plane", medium)
	endpoint := fake.Start()
	t.Cleanup(fake.Close)

	env := map[string]string{EnvAPIKey: testKey, EnvAPISecret: testSecret, EnvZone: testZone, EnvAPIEndpoint: endpoint, EnvSKSCluster: o.cluster, EnvRefreshInterval: "0s"}
	maps.Copy(env, o.env)
	cfg, err := LoadConfig(registry.BuildOptions{NodeGroupSpecs: o.specs}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	if o.build.UserAgent == "" {
		o.build.UserAgent = "ca-test/1.0"
	}
	p, err := newProvider(cfg, providerDeps{
		build: o.build,
		now:   clock.Now,
		retry: cloudhttp.RetryOptions{Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }},
	})
	if err != nil {
		t.Fatalf("newProvider: %v", err)
	}
	// As Build does.
	p.useOptions(o.build)
	e.provider = p
	return e
}

func ctx5s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (e *testEnv) refresh(t *testing.T) {
	t.Helper()
	if err := e.provider.Refresh(ctx5s(t)); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
}

func (e *testEnv) group(t *testing.T, id string) *nodeGroup {
	t.Helper()
	g := e.provider.m.group(id)
	if g == nil {
		t.Fatalf("no node group %s", id)
	}
	return g
}

// node returns the Node an instance's kubelet registers.
func node(providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: strings.TrimPrefix(providerID, ProviderIDPrefix), Labels: map[string]string{"role": "worker"}},
		Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestDiscovery(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	ctx := ctx5s(t)
	want := map[string][2]int{
		e.workersPool: {1, 20},   // spec by nodepool name
		e.systemPool:  {1, 2000}, // cluster nodepool without spec: min 1, max = quota
		e.batchPool:   {1, 10},   // plain pool named by --nodes
		e.gpuPool:     {0, 3},    // min 0 allowed: a template exists
	}
	groups, _ := e.provider.NodeGroups(ctx)
	if len(groups) != len(want) {
		t.Fatalf("NodeGroups = %d groups, want %d", len(groups), len(want))
	}
	for _, g := range groups {
		w, ok := want[g.Id(ctx)]
		if !ok {
			t.Fatalf("unexpected group %s", g.Id(ctx))
		}
		if g.MinSize(ctx) != w[0] || g.MaxSize(ctx) != w[1] {
			t.Errorf("group %s: min/max %d/%d, want %d/%d", g.Debug(ctx), g.MinSize(ctx), g.MaxSize(ctx), w[0], w[1])
		}
	}
}

func TestDefaultMaxFromQuota(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		limit int64
		want  int
	}{
		{"limited", 40, 40},
		{"unlimited uses the documented cap", -1, defaultUnlimitedMaxSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := defaultEnvOptions()
			o.fake.QuotaLimit = tc.limit
			e := newTestEnv(t, o)
			e.refresh(t)
			if got := e.group(t, e.systemPool).MaxSize(ctx5s(t)); got != tc.want {
				t.Fatalf("max of a group without spec = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestRefreshCallBudget(t *testing.T) {
	t.Parallel()
	for _, nodes := range []int{5, 500} {
		t.Run(fmt.Sprintf("%d nodes", nodes), func(t *testing.T) {
			t.Parallel()
			o := defaultEnvOptions()
			o.workers = nodes
			e := newTestEnv(t, o)
			e.refresh(t) // warm-up: quota and instance types
			for i := 0; i < 3; i++ {
				e.fake.ResetRequests()
				e.refresh(t)
				calls := e.fake.OperationCounts()
				// Nothing changed, and the pool list shows it.
				want := map[string]int{"GET /v2/instance-pool": 1}
				if fmt.Sprint(calls) != fmt.Sprint(want) {
					t.Fatalf("steady-state Refresh made %v, want %v", calls, want)
				}
			}
			// Once the other lists reach the staleness bound they are read
			// again, so a change the pool list cannot show is served within it.
			e.clock.Advance(refresh.DefaultMaxStaleness)
			e.fake.ResetRequests()
			e.refresh(t)
			want := map[string]int{"GET /v2/sks-cluster": 1, "GET /v2/instance-pool": 1, "GET /v2/instance": 1}
			if calls := e.fake.OperationCounts(); fmt.Sprint(calls) != fmt.Sprint(want) {
				t.Fatalf("Refresh at the staleness bound made %v, want %v", calls, want)
			}
			if n := len(e.group(t, e.workersPool).Read().Instances); n != nodes {
				t.Fatalf("workers has %d members, want %d", n, nodes)
			}
		})
	}
}

// TestNodepoolSettingsWithinBound: a nodepool's labels carry its group's
// settings and leave no trace in the pool list, so a change shows once the
// nodepool list reaches --max-staleness, not at every Refresh.
func TestNodepoolSettingsWithinBound(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	ctx := ctx5s(t)
	g := e.group(t, e.workersPool)
	unneeded := groupconfig.NodeLabelOptionKey(groupconfig.OptionScaleDownUnneededTime)
	e.fake.AddLabels(e.workersPool, map[string]string{unneeded: "7m"}, nil)
	e.clock.Advance(refresh.DefaultMaxStaleness - time.Second)
	e.refresh(t)
	if _, err := g.GetOptions(ctx, cloudprovider.NodeGroupAutoscalingOptions{}); !errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Fatalf("GetOptions before the bound: %v, want the nodepool list not re-read (ErrNotImplemented)", err)
	}
	e.clock.Advance(time.Second)
	e.refresh(t)
	got, err := g.GetOptions(ctx, cloudprovider.NodeGroupAutoscalingOptions{})
	if err != nil || got.ScaleDownUnneededTime != 7*time.Minute {
		t.Fatalf("GetOptions at the bound = %+v, %v; want the nodepool's 7m", got, err)
	}
}

// TestNewNodepoolReadsNodepoolList: a pool the last nodepool list did not
// show makes the next Refresh read it at once, so a new nodepool is a group
// at the next loop, not at the bound.
func TestNewNodepoolReadsNodepoolList(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	_, pool := e.fake.AddNodepool(e.clusterID, fakeapi.PoolSeed{Name: "extra", Size: 1})
	e.fake.ResetRequests()
	e.refresh(t)
	if n := e.fake.OperationCounts()["GET /v2/sks-cluster"]; n != 1 {
		t.Fatalf("nodepool list read %d times after a pool appeared, want 1", n)
	}
	if g := e.group(t, pool); !g.record().sks {
		t.Fatalf("new nodepool's group %s is not an SKS group", pool)
	}
}

func TestNodeGroupForNodeIsServedFromIndex(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.workers = 500
	o.specs = []string{"1:600:workers"}
	e := newTestEnv(t, o)
	e.refresh(t)
	ctx := ctx5s(t)
	members, _ := e.group(t, e.workersPool).Nodes(ctx)
	e.fake.ResetRequests()
	for _, in := range members {
		g, err := e.provider.NodeGroupForNode(ctx, node(in.Id))
		if err != nil || g == nil || g.Id(ctx) != e.workersPool {
			t.Fatalf("NodeGroupForNode(%s) = %v, %v", in.Id, g, err)
		}
	}
	if n := e.fake.RequestCount(); n != 0 {
		t.Fatalf("NodeGroupForNode for %d known nodes made %d cloud calls, want 0", len(members), n)
	}

	// The unmanaged control plane and a gone instance cost one instance
	// listing together, then none until --max-staleness has passed since.
	e.fake.ResetRequests()
	cp := node(ProviderIDPrefix + e.controlPlane)
	ghost := node(ProviderIDPrefix + "00000000-dead-4000-8000-000000000000")
	lookups := func() int { return e.fake.OperationCounts()["GET /v2/instance"] }
	for i := 0; i < 3; i++ {
		for _, n := range []*corev1.Node{cp, ghost, cp, ghost} {
			if g, err := e.provider.NodeGroupForNode(ctx, n); g != nil || err != nil {
				t.Fatalf("%s: %v, %v; want nil, nil", n.Spec.ProviderID, g, err)
			}
		}
		if i == 0 && lookups() != 1 {
			t.Fatalf("first round: %d instance listings, want 1", lookups())
		}
		e.clock.Advance(10 * time.Second)
		e.refresh(t)
	}
	if n := e.fake.OperationCounts()["GET /v2/instance/{id}"]; n != 0 {
		t.Fatalf("%d GETs of single instances, want 0: one listing answers for all", n)
	}
	e.fake.ResetRequests()
	e.clock.Advance(refresh.DefaultMaxStaleness)
	e.refresh(t)
	before := lookups()
	for _, n := range []*corev1.Node{cp, ghost, cp, ghost} {
		if g, err := e.provider.NodeGroupForNode(ctx, n); g != nil || err != nil {
			t.Fatalf("%s past the bound: %v, %v; want nil, nil", n.Spec.ProviderID, g, err)
		}
	}
	if n := lookups() - before; n != 1 {
		t.Fatalf("past the bound: %d instance listings for two remembered instances, want 1", n)
	}
}

func TestLearnedPoolStaysVisibleWhenEmptied(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.specs = nil
	o.cluster = ""
	e := newTestEnv(t, o)
	e.refresh(t)
	ctx := ctx5s(t)
	if gs, _ := e.provider.NodeGroups(ctx); len(gs) != 0 {
		t.Fatalf("no cluster and no specs: NodeGroups = %d, want 0", len(gs))
	}
	pool, _ := e.fake.Pool(e.batchPool)
	g, err := e.provider.NodeGroupForNode(ctx, node(ProviderIDPrefix+pool.Members[0].ID))
	if err != nil || g == nil || g.Id(ctx) != e.batchPool {
		t.Fatalf("NodeGroupForNode of a batch member = %v, %v", g, err)
	}
	if gs, _ := e.provider.NodeGroups(ctx); len(gs) != 1 {
		t.Fatalf("learnt group not listed by NodeGroups: %d groups", len(gs))
	}
	// Empty the pool (min 1 protects registered nodes, so use fake nodes).
	var fakes []*corev1.Node
	for _, m := range pool.Members {
		n := node(ProviderIDPrefix + m.ID)
		n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "unregistered"}
		fakes = append(fakes, n)
	}
	if err := g.DeleteNodes(ctx, fakes); err != nil {
		t.Fatalf("DeleteNodes: %v", err)
	}
	e.fake.Settle()
	e.refresh(t)
	g2 := e.provider.m.group(e.batchPool)
	if g2 == nil {
		t.Fatal("emptied learnt pool disappeared from NodeGroups")
	}
	if n, _ := g2.TargetSize(ctx); n != 0 {
		t.Fatalf("target of emptied pool = %d, want 0", n)
	}
}

// TestWhyEachPoolIsManaged: every group says why it is managed (the SKS
// cluster's nodepools, --nodes, a pool learnt from a node lookup), and a
// learnt pool takes EXOSCALE_LEARNT_POOL_BOUNDS or upstream's 1..quota;
// with EXOSCALE_LEARN_POOLS=false a node of a pool nobody named is in no
// group, and the pool never becomes one.
func TestWhyEachPoolIsManaged(t *testing.T) {
	t.Parallel()
	cluster := cloudprovider.Management{By: cloudprovider.ManagedByCluster, Detail: "SKS cluster prod"}
	learnt := cloudprovider.Management{By: cloudprovider.ManagedByLearnt}
	for _, tc := range []struct {
		name      string
		env       map[string]string
		specs     []string
		wantBatch *[2]int // min, max after the lookup; nil: no group
		batchWhy  cloudprovider.Management
	}{
		{name: "learnt with upstream's bounds", specs: []string{"1:20:workers"}, wantBatch: &[2]int{1, 2000}, batchWhy: learnt},
		{name: "learnt with the bounds set", env: map[string]string{EnvLearntPoolBounds: "2:6"}, specs: []string{"1:20:workers"}, wantBatch: &[2]int{2, 6}, batchWhy: learnt},
		{name: "learning off", env: map[string]string{EnvLearnPools: "false"}, specs: []string{"1:20:workers"}},
		{name: "learning off, named by --nodes", env: map[string]string{EnvLearnPools: "false"}, specs: []string{"1:20:workers", "1:10:batch"}, wantBatch: &[2]int{1, 10},
			batchWhy: cloudprovider.Management{By: cloudprovider.ManagedByNodes, Detail: "1:10:batch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := defaultEnvOptions()
			o.specs, o.env = tc.specs, tc.env
			e := newTestEnv(t, o)
			e.refresh(t)
			ctx := ctx5s(t)
			for pool, want := range map[string]cloudprovider.Management{
				e.workersPool: {By: cloudprovider.ManagedByNodes, Detail: "1:20:workers"},
				e.systemPool:  cluster,
			} {
				if got := e.provider.m.group(pool).Status(ctx).Managed; got != want {
					t.Errorf("group %s managed %v, want %v", pool, got, want)
				}
			}
			pool, _ := e.fake.Pool(e.batchPool)
			member := node(ProviderIDPrefix + pool.Members[0].ID)
			for _, when := range []string{"lookup", "refresh after it"} {
				if when != "lookup" {
					e.refresh(t)
				}
				g, err := e.provider.NodeGroupForNode(ctx, member)
				if err != nil {
					t.Fatalf("%s: NodeGroupForNode: %v", when, err)
				}
				if tc.wantBatch == nil {
					if g != nil || e.provider.m.group(e.batchPool) != nil {
						t.Fatalf("%s: a node of an unnamed pool with learning off is in group %v, want none", when, g)
					}
					continue
				}
				if g == nil || g.Id(ctx) != e.batchPool {
					t.Fatalf("%s: NodeGroupForNode of a batch member = %v, want the batch pool", when, g)
				}
				if got := [2]int{g.MinSize(ctx), g.MaxSize(ctx)}; got != *tc.wantBatch {
					t.Errorf("%s: batch bounds %d:%d, want %d:%d", when, got[0], got[1], tc.wantBatch[0], tc.wantBatch[1])
				}
				if got := g.Status(ctx).Managed; got != tc.batchWhy {
					t.Errorf("%s: batch managed %v, want %v", when, got, tc.batchWhy)
				}
			}
		})
	}
}

func TestGPUAndTemplate(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	ctx := ctx5s(t)
	label, _ := e.provider.GPULabel(ctx)
	if label != LabelGPUType {
		t.Fatalf("GPULabel = %q", label)
	}
	types, _ := e.provider.GetAvailableGPUTypes(ctx)
	if _, ok := types["gpua5000"]; !ok || len(types) != 1 {
		t.Fatalf("GetAvailableGPUTypes = %v, want {gpua5000}", types)
	}
	n, err := e.group(t, e.gpuPool).TemplateNodeInfo(ctx)
	if err != nil {
		t.Fatalf("TemplateNodeInfo: %v", err)
	}
	if q := n.Status.Capacity[groupconfig.ResourceGPU]; q.Value() != 1 {
		t.Fatalf("template GPU capacity = %v", q.String())
	}
	if n.Labels[LabelGPUType] != "gpua5000" || n.Labels["role"] != "gpu" || len(n.Spec.Taints) != 1 {
		t.Fatalf("template labels/taints wrong: %v %v", n.Labels, n.Spec.Taints)
	}
	// Scale from zero.
	if err := e.group(t, e.gpuPool).IncreaseSize(ctx, 1); err != nil {
		t.Fatalf("IncreaseSize from zero: %v", err)
	}
	if p, _ := e.fake.Pool(e.gpuPool); p.Size != 1 {
		t.Fatalf("gpu pool size in the cloud = %d, want 1", p.Size)
	}
}

func TestPricingAndOptions(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	ctx := ctx5s(t)
	if _, err := e.provider.Pricing(ctx); !errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Fatalf("Pricing error = %v, want ErrNotImplemented", err)
	}
	if o, err := e.group(t, e.workersPool).GetOptions(ctx, cloudprovider.NodeGroupAutoscalingOptions{}); o != nil || !errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Fatalf("GetOptions = %v, %v; want ErrNotImplemented (CA's defaults)", o, err)
	}
	if err := e.provider.Cleanup(ctx); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if gs, _ := e.provider.NodeGroups(ctx); len(gs) == 0 {
		t.Fatal("Cleanup dropped the snapshot")
	}
}

// TestSecretsNeverPrinted formats every configuration-bearing value and
// captures logs at the highest verbosity through a full mutation cycle.
func TestSecretsNeverPrinted(t *testing.T) {
	// Not parallel: captures klog's process-wide output.
	var buf bytes.Buffer
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", "5")
	_ = fs.Set("logtostderr", "false")
	klog.SetOutput(&buf)
	t.Cleanup(func() {
		_ = fs.Set("v", "0")
		_ = fs.Set("logtostderr", "true")
		klog.SetOutput(os.Stderr)
	})

	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	ctx := ctx5s(t)
	g := e.group(t, e.workersPool)
	_ = g.IncreaseSize(ctx, 1)
	e.fake.AddFault(fakecloud.Fault{Status: 401, Message: "bad credentials"})
	err := g.IncreaseSize(ctx, 1)
	klog.Flush()
	outputs := []string{
		buf.String(), fmt.Sprint(err),
		fmt.Sprintf("%v", e.provider.cfg), fmt.Sprintf("%+v", e.provider.cfg), fmt.Sprintf("%#v", e.provider.cfg),
		fmt.Sprintf("%v", e.provider), fmt.Sprintf("%+v", e.provider),
		fmt.Sprintf("%v", e.provider.m.client), fmt.Sprintf("%+v", e.provider.m.client), fmt.Sprintf("%#v", e.provider.m.client),
		fmt.Sprintf("%+v", e.provider.m), fmt.Sprintf("%#v", e.provider.m), fmt.Sprintf("%#v", e.provider),
		fmt.Sprintf("%+v", g), fmt.Sprintf("%#v", g), fmt.Sprintf("%+v", []*nodeGroup{g}),
		fmt.Sprintf("%+v", exoapi.Options{APIKey: credential.FixedCredential(testKey), APISecret: credential.FixedCredential(testSecret)}),
		fmt.Sprintf("%#v", exoapi.Options{APIKey: credential.FixedCredential(testKey), APISecret: credential.FixedCredential(testSecret)}),
	}
	for i, out := range outputs {
		if strings.Contains(out, testSecret) || strings.Contains(out, testKey) {
			t.Fatalf("output %d leaks a credential: %s", i, out)
		}
	}
	if !strings.Contains(buf.String(), "Scaled up node group") || !strings.Contains(buf.String(), "Cloud API call") {
		t.Fatalf("log capture saw no mutation log; the test would not detect a leak:\n%s", buf.String())
	}
}

func TestBuildAndRegistration(t *testing.T) {
	// Not parallel: t.Setenv changes the process environment.
	reg, ok := registry.Lookup(ProviderName)
	if !ok || reg.Build == nil || reg.Simulate == nil || reg.CheckConfig == nil {
		t.Fatalf("registration incomplete: %+v", reg)
	}
	fake := fakeapi.New(fakeapi.Options{APIKey: testKey, APISecret: testSecret})
	watchSpec(t, fake)
	endpoint := fake.Start()
	t.Cleanup(fake.Close)
	for k, v := range map[string]string{EnvAPIKey: "", EnvAPISecret: "", EnvZone: ""} {
		t.Setenv(k, v)
	}
	err := reg.CheckConfig(registry.BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "exoscale: EXOSCALE_API_KEY is not set") || !strings.Contains(err.Error(), "exoscale: EXOSCALE_ZONE is not set") {
		t.Fatalf("CheckConfig without env: %v", err)
	}
	if _, err := reg.Build(ctx5s(t), registry.BuildOptions{}); err == nil {
		t.Fatal("Build without env succeeded")
	}
	t.Setenv(EnvAPIKey, testKey)
	t.Setenv(EnvAPISecret, testSecret)
	t.Setenv(EnvZone, testZone)
	t.Setenv(EnvAPIEndpoint, endpoint)
	p, err := reg.Build(ctx5s(t), registry.BuildOptions{UserAgent: "ua/1"})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if n := fake.RequestCount(); n != 0 {
		t.Fatalf("Build made %d cloud calls, want 0", n)
	}
	if err := p.Refresh(ctx5s(t)); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if p.Name() != ProviderName || fake.RequestCount() != 4 {
		t.Fatalf("first Refresh made %d calls, want 4 (3 lists + quota)", fake.RequestCount())
	}
}
