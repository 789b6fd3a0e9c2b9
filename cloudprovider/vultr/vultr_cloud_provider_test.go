package vultr

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

const testClusterID = "c0ffee00-0000-4000-8000-000000000001"

// testEnv is a provider wired to a freshly seeded fake Vultr API whose
// provisioning lag runs on a manual clock.
type testEnv struct {
	t        *testing.T
	fake     *fakeapi.Server
	clock    *fakecloud.ManualClock
	p        *cloudProvider
	main     fakeapi.PoolView // auto_scaler, min 2, 3 nodes, max 8
	second   fakeapi.PoolView // auto_scaler, min 1, 2 nodes, max 4, GPU plan
	static   fakeapi.PoolView // no auto_scaler, 1 node
	metal    fakeapi.PoolView // auto_scaler, bare-metal plan
	sleeps   []time.Duration
	noMetal  bool
	specs    []string
	fakeOpts fakeapi.Options
	build    registry.BuildOptions
}

type envOption func(*testEnv)

func withSpecs(s ...string) envOption             { return func(e *testEnv) { e.specs = s } }
func withFake(f func(*fakeapi.Options)) envOption { return func(e *testEnv) { f(&e.fakeOpts) } }
func withoutMetalPool() envOption                 { return func(e *testEnv) { e.noMetal = true } }
func withBuildOptions(o registry.BuildOptions) envOption {
	return func(e *testEnv) { e.build = o }
}

func newTestEnv(t *testing.T, opts ...envOption) *testEnv {
	t.Helper()
	e := &testEnv{t: t, clock: fakecloud.NewManualClock(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))}
	e.fakeOpts = fakeapi.Options{Now: e.clock.Now, ActiveAfter: 90 * time.Second, CloseLinger: 30 * time.Second, Seed: 42}
	for _, o := range opts {
		o(e)
	}
	e.fake = fakeapi.New(e.fakeOpts)
	watchSpec(t, e.fake)
	e.fake.Start()
	t.Cleanup(e.fake.Close)
	e.fake.AddPlans(fakeapi.StandardPlans()...)
	e.fake.AddMetalPlans(fakeapi.StandardMetalPlans()...)
	e.fake.AddCluster(fakeapi.ClusterSpec{ID: testClusterID, Label: "test", Region: "ams", Version: "v1.33.0+1"})
	add := func(p fakeapi.PoolSpec) fakeapi.PoolView {
		v, err := e.fake.AddPool(testClusterID, p)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	e.main = add(fakeapi.PoolSpec{ID: "a-main", Label: "main", Plan: "vc2-2c-4gb", Quantity: 3, Min: 2, Max: 8, AutoScaler: true,
		Labels: map[string]string{"tier": "web"}})
	e.second = add(fakeapi.PoolSpec{ID: "b-gpu", Label: "gpu", Plan: "vcg-a16-6c-64g-16vram", Quantity: 2, Min: 1, Max: 4, AutoScaler: true,
		Taints: []fakeapi.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}})
	e.static = add(fakeapi.PoolSpec{ID: "c-static", Label: "static", Plan: "vhf-4c-16gb", Quantity: 1, Min: 1, Max: 1})
	if !e.noMetal {
		e.metal = add(fakeapi.PoolSpec{ID: "d-metal", Label: "metal", Plan: "vbm-8c-132gb", Quantity: 1, Min: 1, Max: 2, AutoScaler: true})
	}
	specs, err := groupconfig.ParseNodeGroupSpecs(e.specs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{ClusterID: testClusterID, Token: credential.Secret(e.fake.Token()), APIURL: e.fake.URL()}
	retry := cloudhttp.RetryOptions{Sleep: func(ctx context.Context, d time.Duration) error {
		e.sleeps = append(e.sleeps, d)
		return ctx.Err()
	}}
	if e.build.UserAgent == "" {
		e.build.UserAgent = "test-agent"
	}
	p, err := newProvider(context.Background(), cfg, specs, e.build, retry, e.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	e.p = p
	e.refresh()
	return e
}

func (e *testEnv) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

func (e *testEnv) refresh() {
	e.t.Helper()
	if err := e.p.Refresh(e.ctx()); err != nil {
		e.t.Fatalf("Refresh: %v", err)
	}
}

func (e *testEnv) group(id string) *nodeGroup {
	e.t.Helper()
	g, ok := e.p.m.group(id)
	if !ok {
		e.t.Fatalf("no node group %s", id)
	}
	return g
}

func (e *testEnv) pool(id string) fakeapi.PoolView {
	e.t.Helper()
	v, ok := e.fake.Pool(testClusterID, id)
	if !ok {
		e.t.Fatalf("fake has no pool %s", id)
	}
	return v
}

// realNode is the Node VKE registers for a node of pool.
func realNode(pool fakeapi.PoolView, n fakeapi.NodeView) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Label, Labels: map[string]string{LabelNodeID: n.ID, LabelNodePool: pool.Label}},
		Spec:       corev1.NodeSpec{ProviderID: ProviderIDPrefix + n.ID},
	}
}

// unregisteredNode is CA's fake node for an instance that never registered.
func unregisteredNode(id string) *corev1.Node {
	pid := ProviderIDPrefix + id
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: pid, Labels: map[string]string{},
			Annotations: map[string]string{cloudprovider.FakeNodeReasonAnnotation: "unregistered"}},
		Spec: corev1.NodeSpec{ProviderID: pid},
	}
}

func countRequests(reqs []fakecloud.RecordedRequest, method, pathPart string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method && strings.Contains(r.Path, pathPart) {
			n++
		}
	}
	return n
}

// busyVariants are the plausible behaviours of a VKE pool while nodes are
// created, which Vultr does not document (fakeapi.Options.Busy); the
// provider's tests run under each.
var busyVariants = []fakeapi.BusyPolicy{fakeapi.BusyNever, fakeapi.BusyPending, fakeapi.BusyRefuse}

func TestBuildReadsConfigAndRegisters(t *testing.T) {
	t.Parallel()
	reg, ok := registry.Lookup(ProviderName)
	if !ok || reg.Build == nil || reg.Simulate == nil || reg.CheckConfig == nil {
		t.Fatalf("provider %q not fully registered: %+v", ProviderName, ok)
	}
	fake := fakeapi.New(fakeapi.Options{Token: "secret-build-token"})
	watchSpec(t, fake)
	fake.Start()
	defer fake.Close()
	fake.AddCluster(fakeapi.ClusterSpec{ID: testClusterID, Region: "ewr"})
	fake.AddPlans(fakeapi.StandardPlans()...)
	if _, err := fake.AddPool(testClusterID, fakeapi.PoolSpec{ID: "p1", Label: "one", Plan: "vc2-1c-2gb", Quantity: 1, Min: 1, Max: 3, AutoScaler: true}); err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, `{"cluster_id":"`+testClusterID+`","token":"secret-build-token","api_url":"`+fake.URL()+`"}`)

	tests := []struct {
		name    string
		opts    registry.BuildOptions
		wantErr string
		groups  int
	}{
		{name: "ok", opts: registry.BuildOptions{CloudConfig: path}, groups: 1},
		{name: "no config", opts: registry.BuildOptions{}, wantErr: "no cloud config"},
		{name: "bad --nodes", opts: registry.BuildOptions{CloudConfig: path, NodeGroupSpecs: []string{"x"}}, wantErr: "min:max:name"},
	}
	for _, tc := range tests {
		// Not parallel: the cases count the calls of one fake, whose
		// requests are checked after them.
		t.Run(tc.name, func(t *testing.T) {
			if err := reg.CheckConfig(tc.opts); (err != nil) != (tc.wantErr != "") {
				t.Fatalf("CheckConfig = %v, want error %q", err, tc.wantErr)
			}
			p, err := reg.Build(context.Background(), tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Build error = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := fake.RequestCount(); n != 0 {
				t.Fatalf("Build made %d cloud calls; the server takes the first snapshot", n)
			}
			if err := p.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			gs, _ := p.NodeGroups(context.Background())
			if len(gs) != tc.groups {
				t.Fatalf("NodeGroups after the first Refresh = %d, want %d", len(gs), tc.groups)
			}
		})
	}
	for _, r := range fake.Requests() {
		if ua := r.Header.Get("User-Agent"); ua == "" {
			t.Fatalf("request %s %s without User-Agent", r.Method, r.Path)
		}
	}
}

func TestRefreshCallsPerLoop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		extraPool int // nodes in an extra pool
	}{
		{name: "3 pools", extraPool: 0},
		{name: "500 nodes", extraPool: 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, withoutMetalPool())
			if tc.extraPool > 0 {
				if _, err := e.fake.AddPool(testClusterID, fakeapi.PoolSpec{ID: "e-big", Label: "big", Plan: "vc2-1c-2gb",
					Quantity: tc.extraPool, Min: 1, Max: 600, AutoScaler: true}); err != nil {
					t.Fatal(err)
				}
			}
			e.refresh() // settles plans and region
			e.fake.ResetRequests()
			for i := 0; i < 3; i++ {
				e.refresh()
			}
			reqs := e.fake.Requests()
			if len(reqs) != 3 {
				t.Fatalf("3 steady-state Refreshes made %d cloud calls, want 3: %v", len(reqs), reqs)
			}
			for _, r := range reqs {
				if r.Method != http.MethodGet || r.Path != "/v2/kubernetes/clusters/"+testClusterID+"/node-pools" {
					t.Fatalf("unexpected call %s %s", r.Method, r.Path)
				}
			}
			// Reads are served from the snapshot: no calls however many.
			ctx := e.ctx()
			gs, _ := e.p.NodeGroups(ctx)
			for _, g := range gs {
				ins, _ := g.Nodes(ctx)
				for _, in := range ins {
					id := strings.TrimPrefix(in.Id, ProviderIDPrefix)
					node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelNodeID: id}}, Spec: corev1.NodeSpec{ProviderID: in.Id}}
					if got, err := e.p.NodeGroupForNode(ctx, node); err != nil || got == nil || got.Id(ctx) != g.Id(ctx) {
						t.Fatalf("NodeGroupForNode(%s) = %v, %v", in.Id, got, err)
					}
				}
				_, _ = g.TargetSize(ctx)
				_, _ = g.TemplateNodeInfo(ctx)
				_, _ = g.GetOptions(ctx, cloudprovider.NodeGroupAutoscalingOptions{})
			}
			_, _ = e.p.GPULabel(ctx)
			_, _ = e.p.GetAvailableGPUTypes(ctx)
			if n := e.fake.RequestCount(); n != 3 {
				t.Fatalf("reads made %d cloud calls", n-3)
			}
		})
	}
}

func TestNodeGroupSelection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		specs []string
		// want maps group id to min/max.
		want map[string][2]int
	}{
		{name: "auto_scaler pools only", want: map[string][2]int{"a-main": {2, 8}, "b-gpu": {1, 4}, "d-metal": {1, 2}}},
		{name: "--nodes by id adds a static pool", specs: []string{"1:3:c-static"},
			want: map[string][2]int{"a-main": {2, 8}, "b-gpu": {1, 4}, "c-static": {1, 3}, "d-metal": {1, 2}}},
		{name: "--nodes by label, min clamped to 1", specs: []string{"0:5:static"},
			want: map[string][2]int{"a-main": {2, 8}, "b-gpu": {1, 4}, "c-static": {1, 5}, "d-metal": {1, 2}}},
		{name: "--nodes overrides a flagged pool", specs: []string{"3:6:main"},
			want: map[string][2]int{"a-main": {3, 6}, "b-gpu": {1, 4}, "d-metal": {1, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, withSpecs(tc.specs...))
			gs, _ := e.p.NodeGroups(e.ctx())
			got := map[string][2]int{}
			for _, g := range gs {
				got[g.Id(e.ctx())] = [2]int{g.MinSize(e.ctx()), g.MaxSize(e.ctx())}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("groups %v, want %v", got, tc.want)
			}
			for id, mm := range tc.want {
				if got[id] != mm {
					t.Fatalf("group %s bounds %v, want %v (all: %v)", id, got[id], mm, got)
				}
			}
		})
	}
}

// TestUnmatchedSpecIsAConfigError: a --nodes name that matches no pool at
// the first listing is a configuration error main exits 2 on (it used to be
// ignored silently).
func TestUnmatchedSpecIsAConfigError(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	specs, err := groupconfig.ParseNodeGroupSpecs([]string{"1:2:nope"})
	if err != nil {
		t.Fatal(err)
	}
	var reported []int
	cfg := &Config{ClusterID: testClusterID, Token: credential.Secret(e.fake.Token()), APIURL: e.fake.URL()}
	p, err := newProvider(context.Background(), cfg, specs, registry.BuildOptions{ReportUnmatchedSpecs: func(n int) { reported = append(reported, n) }},
		cloudhttp.RetryOptions{}, e.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Refresh(e.ctx())
	if !errors.Is(err, cloudprovider.ErrConfig) || !strings.Contains(err.Error(), "1:2:nope") {
		t.Fatalf("first Refresh = %v, want ErrConfig naming the spec", err)
	}
	if err := p.Refresh(e.ctx()); err != nil {
		t.Fatalf("later Refresh = %v, want nil (an error log and the metric)", err)
	}
	if len(reported) != 2 || reported[1] != 1 {
		t.Fatalf("reported %v, want [1 1]", reported)
	}
}

func TestNodeGroupSelectionBadBounds(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	// min 0 is clamped to VKE's floor; max 0 then makes min > max: reported and skipped.
	if _, err := e.fake.AddPool(testClusterID, fakeapi.PoolSpec{ID: "z-broken", Label: "broken", Plan: "vc2-1c-2gb",
		Quantity: 1, Min: 0, Max: 0, AutoScaler: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.AddPool(testClusterID, fakeapi.PoolSpec{ID: "y-zero", Label: "zero", Plan: "vc2-1c-2gb",
		Quantity: 1, Min: 0, Max: 3, AutoScaler: true}); err != nil {
		t.Fatal(err)
	}
	e.refresh()
	if _, ok := e.p.m.group("z-broken"); ok {
		t.Fatal("pool with max 0 became a node group")
	}
	if g := e.group("y-zero"); g.MinSize(e.ctx()) != 1 {
		t.Fatalf("min_nodes 0 gave MinSize %d, want VKE's floor 1", g.MinSize(e.ctx()))
	}
	if got := e.p.m.reported["z-broken"]; !strings.Contains(got, "above max") {
		t.Fatalf("broken pool not reported: %q", got)
	}
}

func TestNodeGroupForNode(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	n0 := e.main.Nodes[0]
	tests := []struct {
		name string
		node *corev1.Node
		want string
	}{
		{name: "real node by label", node: realNode(e.main, n0), want: "a-main"},
		{name: "label only", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelNodeID: n0.ID}}}, want: "a-main"},
		{name: "fake node by providerID", node: unregisteredNode(e.second.Nodes[1].ID), want: "b-gpu"},
		// A node can write its own labels: the providerID decides.
		{name: "label of another pool's node", node: func() *corev1.Node {
			n := realNode(e.main, n0)
			n.Spec.ProviderID = ProviderIDPrefix + e.second.Nodes[0].ID
			return n
		}(), want: "b-gpu"},
		{name: "label of a node, providerID of another pool's node", node: func() *corev1.Node {
			n := realNode(e.second, e.second.Nodes[0])
			n.Spec.ProviderID = ProviderIDPrefix + n0.ID
			return n
		}(), want: "a-main"},
		{name: "label of a managed node, providerID of an unmanaged one", node: func() *corev1.Node {
			n := realNode(e.main, n0)
			n.Spec.ProviderID = ProviderIDPrefix + e.static.Nodes[0].ID
			return n
		}(), want: ""},
		{name: "unmanaged pool", node: realNode(e.static, e.static.Nodes[0]), want: ""},
		{name: "other cloud", node: &corev1.Node{Spec: corev1.NodeSpec{ProviderID: "aws:///eu-west-1a/i-1"}}, want: ""},
		{name: "no ids", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cp-1"}}, want: ""},
		{name: "nil", node: nil, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := e.fake.RequestCount()
			g, err := e.p.NodeGroupForNode(e.ctx(), tc.node)
			if err != nil {
				t.Fatal(err)
			}
			// Every node here was in the last listing: no lookup.
			if n := e.fake.RequestCount() - calls; n != 0 {
				t.Fatalf("%d cloud calls for a node the snapshot knows, want 0", n)
			}
			got := ""
			if g != nil {
				got = g.Id(e.ctx())
			}
			if got != tc.want {
				t.Fatalf("group %q, want %q", got, tc.want)
			}
		})
	}
}

func TestGPUAndCleanup(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	label, err := e.p.GPULabel(e.ctx())
	if err != nil || label != LabelGPUType {
		t.Fatalf("GPULabel = %q, %v", label, err)
	}
	types, err := e.p.GetAvailableGPUTypes(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := types["NVIDIA_A16"]; !ok || len(types) != 1 {
		t.Fatalf("GPU types %v, want only NVIDIA_A16", types)
	}
	if err := e.p.Cleanup(e.ctx()); err != nil {
		t.Fatal(err)
	}
	if gs, _ := e.p.NodeGroups(e.ctx()); len(gs) == 0 {
		t.Fatal("Cleanup dropped the snapshot")
	}
}

func TestGPUTypesBeforePlansLoaded(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	// A provider whose plan list failed must not answer an empty (cacheable) set.
	m := newManager(e.p.m.client, testClusterID, nil, groupstate.GuardOptions{}, e.clock.Now)
	p := &cloudProvider{m: m}
	_, err := p.GetAvailableGPUTypes(e.ctx())
	if !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Fatalf("GetAvailableGPUTypes before plans = %v, want ErrUnavailable", err)
	}
}
