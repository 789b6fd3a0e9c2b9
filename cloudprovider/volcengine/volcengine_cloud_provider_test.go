package volcengine

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

const (
	testAccessKey = "AKLTsecretaccesskeyvalue42"
	testSecretKey = "TWFueSBoYW5kcyBtYWtlIGxpZ2h0IHdvcms="
	mainGroupID   = fakeapi.StandardMainGroup
	otherGroupID  = fakeapi.StandardOtherGroup
)

// testEnv is a provider bound to a seeded fake Volcengine API.
type testEnv struct {
	fake  *fakeapi.Server
	clock *fakecloud.ManualClock
	p     *cloudProvider
	url   string
}

type envOption func(*envConfig)

type envConfig struct {
	static    []string
	discovery []string
	fakeOpts  fakeapi.Options
	seed      func(f *fakeapi.Server)
	// firstRefreshErr, when set, is what the initial Refresh must wrap.
	firstRefreshErr error
	// build is what main would pass from its flags.
	build registry.BuildOptions
}

// withFirstRefreshError expects the initial Refresh to fail with err.
func withFirstRefreshError(err error) envOption {
	return func(c *envConfig) { c.firstRefreshErr = err }
}

func withStatic(specs ...string) envOption { return func(c *envConfig) { c.static = specs } }
func withDiscovery(specs ...string) envOption {
	return func(c *envConfig) { c.static, c.discovery = nil, specs }
}
func withSeed(fn func(f *fakeapi.Server)) envOption { return func(c *envConfig) { c.seed = fn } }
func withStrictMin() envOption                      { return func(c *envConfig) { c.fakeOpts.LenientMinOnRemove = false } }

// seedStandard is the fake's standard seed (fakeapi.Server.SeedStandard).
func seedStandard(f *fakeapi.Server) { f.SeedStandard() }

func newEnv(t *testing.T, opts ...envOption) *testEnv {
	t.Helper()
	cfg := envConfig{static: []string{"1:10:" + mainGroupID, "0:5:" + otherGroupID}, seed: seedStandard}
	for _, o := range opts {
		o(&cfg)
	}
	clock := fakecloud.NewManualClock(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))
	cfg.fakeOpts.Now = clock.Now
	// Lag is driven by the fake clock (tests advance it or call Settle).
	cfg.fakeOpts.ProvisionDelay = time.Minute
	cfg.fakeOpts.RemoveDelay = time.Minute
	fake := fakeapi.New(cfg.fakeOpts)
	watchSpec(t, fake)
	cfg.seed(fake)
	url := fake.Start()
	t.Cleanup(fake.Close)
	static, err := groupconfig.ParseNodeGroupSpecs(cfg.static)
	if err != nil {
		t.Fatal(err)
	}
	selectors, err := parseDiscoverySpecs(cfg.discovery)
	if err != nil {
		t.Fatal(err)
	}
	o := options{
		cfg:        Config{Region: "cn-beijing", AccessKey: testAccessKey, SecretKey: testSecretKey, Endpoint: url, Scheme: "http"},
		static:     static,
		selectors:  selectors,
		retrySleep: func(context.Context, time.Duration) error { return nil },
		now:        clock.Now,
	}
	if cfg.build.UserAgent == "" {
		cfg.build.UserAgent = "volcengine-test"
	}
	p, err := build(context.Background(), cfg.build, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := fake.RequestCount(); n != 0 {
		t.Fatalf("build made %d cloud calls, want 0", n)
	}
	if err := p.Refresh(testCtx(t)); cfg.firstRefreshErr != nil {
		if !errors.Is(err, cfg.firstRefreshErr) {
			t.Fatalf("initial Refresh = %v, want %v", err, cfg.firstRefreshErr)
		}
		if err := p.Refresh(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	return &testEnv{fake: fake, clock: clock, p: p, url: url}
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func nodeFor(providerID string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: strings.TrimPrefix(providerID, ProviderIDPrefix), Labels: map[string]string{}},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
	}
}

func (e *testEnv) group(t *testing.T, id string) cloudprovider.NodeGroup {
	t.Helper()
	gs, err := e.p.NodeGroups(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if g.Id(testCtx(t)) == id {
			return g
		}
	}
	t.Fatalf("group %s not served", id)
	return nil
}

func TestSteadyStateRefreshCallCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opts   []envOption
		groups int
	}{
		{name: "static", groups: 2},
		{name: "discovery", opts: []envOption{withDiscovery("asg:tag=ca=on")}, groups: 2},
		{name: "one static group", opts: []envOption{withStatic("1:10:" + mainGroupID)}, groups: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.opts...)
			if err := e.p.Refresh(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			e.fake.ResetRequests()
			const loops = 5
			for i := 0; i < loops; i++ {
				if err := e.p.Refresh(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				// Reads between refreshes must not call the cloud.
				gs, _ := e.p.NodeGroups(testCtx(t))
				for _, g := range gs {
					_, _ = g.TargetSize(testCtx(t))
					_, _ = g.Nodes(testCtx(t))
					_, _ = g.TemplateNodeInfo(testCtx(t))
					_, _ = g.GetOptions(testCtx(t), cloudprovider.NodeGroupAutoscalingOptions{})
				}
				_, _ = e.p.GetAvailableGPUTypes(testCtx(t))
				_, _ = e.p.NodeGroupForNode(testCtx(t), nodeFor("volcengine://i-unknown"))
			}
			// Nothing changed: 1 DescribeScalingGroups per refresh, plus one
			// lookup of the unknown node the first time (a refresh that
			// also finds nothing changed); it stays known as not ours.
			if got, want := e.fake.RequestCount(), loops+1; got != want {
				t.Fatalf("%d cloud calls for %d unchanged refreshes of %d groups, want %d (1 each, 1 lookup)", got, loops, tc.groups, want)
			}
			if n := len(e.p.m.groupList()); n != tc.groups {
				t.Fatalf("%d groups served, want %d", n, tc.groups)
			}
		})
	}
}

func TestTemplateRefetchedAfterTTL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.ResetRequests()
	e.clock.Advance(templateTTL + time.Second)
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.CountOperation(fakeapi.ActionDescribeScalingConfigurations); n != 1 {
		t.Fatalf("%d DescribeScalingConfigurations after the TTL, want 1 (batched for all groups)", n)
	}
	if n := e.fake.CountOperation(fakeapi.ActionDescribeInstanceTypes); n != 1 {
		t.Fatalf("%d DescribeInstanceTypes after the TTL, want 1", n)
	}
	// 1 + G, plus one batched call each for configurations, instance types,
	// subnets and images.
	if n := e.fake.RequestCount(); n != 1+2+4 {
		t.Fatalf("%d calls in the Refresh after the TTL, want 7", n)
	}
}

func TestNodeGroupForNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	main := e.fake.Instances(mainGroupID)
	unmanaged := e.fake.Instances("scg-unmanaged")
	tests := []struct {
		name       string
		providerID string
		want       string
		// calls: an instance of this cloud missing from the snapshot costs
		// one lookup (a refresh, 1 call when nothing changed) per refresh,
		// for all such nodes together.
		calls int
	}{
		{name: "own instance", providerID: ProviderIDPrefix + main[0].ID, want: mainGroupID},
		{name: "instance of an unmanaged group", providerID: ProviderIDPrefix + unmanaged[0].ID, calls: 1},
		{name: "unknown instance", providerID: ProviderIDPrefix + "i-nope"},
		{name: "other cloud", providerID: "aws:///us-east-1a/i-123"},
		{name: "empty", providerID: ""},
		{name: "prefix only", providerID: ProviderIDPrefix},
	}
	for _, tc := range tests {
		// Not parallel: each case counts the cloud calls of one shared environment.
		t.Run(tc.name, func(t *testing.T) {
			calls := e.fake.RequestCount()
			g, err := e.p.NodeGroupForNode(testCtx(t), nodeFor(tc.providerID))
			if err != nil {
				t.Fatalf("error %v; not-ours must be (nil, nil)", err)
			}
			got := ""
			if g != nil {
				got = g.Id(testCtx(t))
			}
			if got != tc.want {
				t.Fatalf("group = %q, want %q", got, tc.want)
			}
			if n := e.fake.RequestCount() - calls; n != tc.calls {
				t.Fatalf("NodeGroupForNode made %d cloud calls, want %d", n, tc.calls)
			}
		})
	}
}

func TestGPULabelAndTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	label, err := e.p.GPULabel(testCtx(t))
	if err != nil || label != GPULabel {
		t.Fatalf("GPULabel = %q, %v", label, err)
	}
	types, err := e.p.GetAvailableGPUTypes(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := types["NVIDIA-A10"]; !ok || len(types) != 1 {
		t.Fatalf("GPU types = %v, want {NVIDIA-A10}", types)
	}
	if _, err := e.p.Pricing(testCtx(t)); !errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Fatalf("Pricing error = %v", err)
	}
	if err := e.p.Cleanup(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if len(e.p.m.groupList()) != 2 {
		t.Fatal("Cleanup dropped state")
	}
}

func TestGroupsFromSpecAndCloud(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    []envOption
		want    map[string][2]int
		wantErr bool
	}{
		{name: "min and max come from the group, not the spec", opts: []envOption{withStatic("0:99:" + mainGroupID)}, want: map[string][2]int{mainGroupID: {1, 10}}},
		{name: "missing static group fails the first listing, then is skipped", opts: []envOption{withStatic("1:3:scg-gone", "0:5:"+otherGroupID),
			withFirstRefreshError(cloudprovider.ErrConfig)}, want: map[string][2]int{otherGroupID: {0, 5}}},
		{name: "discovery by key only", opts: []envOption{withDiscovery("asg:tag=pool")}, want: map[string][2]int{mainGroupID: {1, 10}, otherGroupID: {0, 5}}},
		{name: "discovery by key and value", opts: []envOption{withDiscovery("asg:tag=pool=gpu")}, want: map[string][2]int{otherGroupID: {0, 5}}},
		{name: "discovery ANDs tags", opts: []envOption{withDiscovery("asg:tag=pool=gpu,ca=off")}, want: map[string][2]int{}},
		{name: "discovery ORs specs", opts: []envOption{withDiscovery("asg:tag=pool=gpu", "asg:tag=pool=main")}, want: map[string][2]int{mainGroupID: {1, 10}, otherGroupID: {0, 5}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.opts...)
			gs, err := e.p.NodeGroups(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][2]int{}
			for _, g := range gs {
				got[g.Id(testCtx(t))] = [2]int{g.MinSize(testCtx(t)), g.MaxSize(testCtx(t))}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("groups = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestConfigWarnings: each --nodes id not shaped scg-... warns once,
// naming the spec and the form of a scaling group id; scg- ids and
// malformed specs (an error elsewhere) warn of nothing.
func TestConfigWarnings(t *testing.T) {
	t.Parallel()
	got := configWarnings(registry.BuildOptions{NodeGroupSpecs: []string{"1:3:asg-1", "0:5:scg-ok", "2:4:general"}})
	want := []string{
		`--nodes 1:3:asg-1: "asg-1" is not shaped like a scaling group id (scg- and letters or digits`,
		`--nodes 2:4:general: "general" is not shaped like a scaling group id`,
	}
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) || strings.Contains(got[i], "\n") {
			t.Errorf("warning %q, want one line containing %q", got[i], w)
		}
	}
	if got := configWarnings(registry.BuildOptions{NodeGroupSpecs: []string{"5:1:asg-1"}}); len(got) != 0 {
		t.Errorf("a malformed spec warns %q, want nothing", got)
	}
}

// TestGroupIDNotShapedScg: a --nodes id of another form is asked of
// DescribeScalingGroups and served when the group exists.
func TestGroupIDNotShapedScg(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withStatic("1:3:asg-1"), withSeed(func(f *fakeapi.Server) {
		f.SeedStandard()
		f.AddConfiguration(fakeapi.Configuration{ID: "scc-asg", GroupID: "asg-1", InstanceTypes: []string{"ecs.g3i.xlarge"}, ImageID: "image-linux"})
		f.AddGroup(fakeapi.Group{ID: "asg-1", Name: "asg", Min: 1, Max: 3, Desired: 2, ActiveConfigID: "scc-asg", SubnetIDs: []string{"subnet-a"}})
		f.Reconcile()
		f.Settle()
	}))
	g := e.group(t, "asg-1")
	nodes, err := g.Nodes(testCtx(t))
	if n, _ := g.TargetSize(testCtx(t)); n != 2 || err != nil || len(nodes) != 2 {
		t.Fatalf("target %d with %d instances (%v), want 2 of both", n, len(nodes), err)
	}
	if _, err := g.TemplateNodeInfo(testCtx(t)); err != nil {
		t.Fatalf("template: %v", err)
	}
}

func TestUnrelatedGroupsForUnknownIDsIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withStatic("1:3:scg-gone"), withFirstRefreshError(cloudprovider.ErrConfig),
		func(c *envConfig) { c.fakeOpts.UnrelatedForUnknownIDs = true })
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if gs, _ := e.p.NodeGroups(testCtx(t)); len(gs) != 0 {
		t.Fatalf("served %d groups for an unknown id; the API's unrelated answer must be ignored", len(gs))
	}
}

func TestGroupLeavesAndReturns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withDiscovery("asg:tag=ca=on"))
	g := e.group(t, otherGroupID)
	e.fake.DeleteGroup(otherGroupID)
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.TargetSize(testCtx(t)); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Fatalf("TargetSize of a vanished group: %v, want ErrNodeGroupNotFound", err)
	}
	calls := e.fake.RequestCount()
	if err := g.IncreaseSize(testCtx(t), 1); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Fatalf("IncreaseSize of a vanished group: %v", err)
	}
	if e.fake.RequestCount() != calls {
		t.Fatal("IncreaseSize of a vanished group called the cloud")
	}
	if g.MinSize(testCtx(t)) != 0 || g.MaxSize(testCtx(t)) != 5 || g.Debug(testCtx(t)) == "" {
		t.Fatal("frozen min/max/debug lost")
	}
	if types, _ := e.p.GetAvailableGPUTypes(testCtx(t)); len(types) != 0 {
		t.Fatalf("GPU types %v still list the vanished GPU group", types)
	}
}

// TestSecretsNeverLogged builds, refreshes, fails and mutates at log level 10
// and checks that neither key appears in the logs or in any error.
func TestSecretsNeverLogged(t *testing.T) {
	// Not parallel: captures klog's process-wide output.
	var buf bytes.Buffer
	var mu sync.Mutex
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", "10")
	_ = fs.Set("logtostderr", "false")
	klog.SetOutput(&lockedWriter{w: &buf, mu: &mu})
	t.Cleanup(func() {
		_ = fs.Set("v", "0")
		_ = fs.Set("logtostderr", "true")
		klog.SetOutput(nil)
	})

	e := newEnv(t)
	var errs []error
	e.fake.AddFault(fakecloud.Fault{Status: 401, Code: "SignatureDoesNotMatch", Message: "bad signature"})
	errs = append(errs, e.p.Refresh(testCtx(t)))
	e.fake.FailNext(10)
	errs = append(errs, e.group(t, mainGroupID).IncreaseSize(testCtx(t), 1))
	e.fake.ClearFaults()
	errs = append(errs, e.group(t, mainGroupID).IncreaseSize(testCtx(t), 1))
	_, err := LoadConfig("/nonexistent/cloud-config", func(string) string { return "" })
	errs = append(errs, err)
	klog.Flush()

	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	if !strings.Contains(logs, "Cloud API call") {
		t.Fatalf("V(5) API logging not captured; the test would prove nothing. Logs:\n%s", logs)
	}
	for _, secret := range []string{testAccessKey, testSecretKey} {
		if strings.Contains(logs, secret) {
			t.Errorf("a key reached the logs")
		}
		for _, err := range errs {
			if err != nil && strings.Contains(fmt.Sprintf("%v %+v", err, err), secret) {
				t.Errorf("a key reached an error: %v", err)
			}
		}
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestCheckConfig(t *testing.T) {
	// Not parallel: t.Setenv changes the process environment.
	t.Setenv(envRegion, "cn-beijing")
	t.Setenv(envAccessKey, "ak")
	t.Setenv(envSecretKey, "sk")
	tests := []struct {
		name    string
		opts    registry.BuildOptions
		wantErr []string
	}{
		{name: "static ok", opts: registry.BuildOptions{NodeGroupSpecs: []string{"1:5:scg-a"}}},
		// Upstream asks DescribeScalingGroups for any id (configWarnings warns).
		{name: "static id not shaped scg-", opts: registry.BuildOptions{NodeGroupSpecs: []string{"1:3:asg-1"}}},
		{name: "discovery ok", opts: registry.BuildOptions{NodeGroupAutoDiscoverySpecs: []string{"asg:tag=k"}}},
		{name: "no groups", opts: registry.BuildOptions{}, wantErr: []string{"no node groups"}},
		{name: "all bad at once", opts: registry.BuildOptions{NodeGroupSpecs: []string{"5:1:scg-a"}, NodeGroupAutoDiscoverySpecs: []string{"mig:x"}},
			wantErr: []string{"max 1 is below min 5", "only asg: is supported"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckConfig(tc.opts)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	reg, ok := registry.Lookup(ProviderName)
	if !ok || reg.Build == nil || reg.Simulate == nil || reg.CheckConfig == nil {
		t.Fatalf("registration = %+v, %v", reg, ok)
	}
}

// TestProxyEnvDoesNotHijack sets proxy variables pointing nowhere: the SDK
// would copy them onto a bare *http.Transport (ignoring NO_PROXY); our wrapped
// transport keeps the standard rules, which never proxy loopback.
func TestProxyEnvDoesNotHijack(t *testing.T) {
	// Not parallel: t.Setenv changes the process environment.
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		t.Setenv(k, "http://127.0.0.1:1")
	}
	e := newEnv(t)
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatalf("Refresh through proxy env: %v", err)
	}
	if err := e.group(t, mainGroupID).IncreaseSize(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
}
