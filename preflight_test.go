package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	volcfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// vultrSimClusterID is the cluster the Vultr simulation seeds.
const vultrSimClusterID = "5e3d6a1c-0c5b-4f4e-9d55-5a1b2c3d4e5f"

// fakeCloud starts provider's fake cloud (the one --simulate uses, with the
// credentials in the environment at this point) and returns its URL. The
// preflight under test then reaches it through the real builder, with the
// configuration an operator would write.
func fakeCloud(t *testing.T, provider string) string {
	t.Helper()
	reg, ok := registry.Lookup(provider)
	if !ok {
		t.Skipf("%s is not compiled in", provider)
	}
	sim, err := reg.Simulate(context.Background(), registry.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sim.Provider.Cleanup(context.Background())
		sim.Close()
	})
	return sim.URL
}

// closedPort returns a loopback URL nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return "http://" + addr
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func vultrConfig(t *testing.T, token, url string) string {
	return writeFile(t, "vultr.json", `{"cluster_id": "`+vultrSimClusterID+`", "token": "`+token+`", "api_url": "`+url+`"}`)
}

// preflightRun runs preflight with a deadline, so a check that hangs fails
// the test instead of stalling it.
func preflightRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb strings.Builder
	code := run(ctx, append([]string{PreflightCommand}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// errorLines are the "error:" lines of stderr: each problem is one.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "error: ") {
			out = append(out, l)
		}
	}
	return out
}

func wantOneError(t *testing.T, code int, stderr string, wantCode int, wants ...string) {
	t.Helper()
	lines := errorLines(stderr)
	if code != wantCode || len(lines) != 1 {
		t.Fatalf("exit %d with %d error lines, want %d and one line:\n%s", code, len(lines), wantCode, stderr)
	}
	for _, w := range wants {
		if !strings.Contains(lines[0], w) {
			t.Errorf("error line lacks %q: %s", w, lines[0])
		}
	}
}

// TestPreflightAgainstEachFakeCloud: with the configuration an operator
// writes, preflight reads each fake cloud and prints the groups, what each
// spec found, the calls made and what it could not check, then exits 0.
func TestPreflightAgainstEachFakeCloud(t *testing.T) {
	t.Run("vultr", func(t *testing.T) {
		t.Setenv("VULTR_API_KEY", "preflight-test-key")
		url := fakeCloud(t, "vultr")
		code, out, stderr := preflightRun(t, "--cloud-provider", "vultr", "--cloud-config", vultrConfig(t, "preflight-test-key", url), "--nodes", "1:4:static")
		checkSummary(t, code, out, stderr, "vultr", "--nodes 1:4:static -> ", "GET /v2/kubernetes/clusters/{id}/node-pools 200")
	})
	t.Run("exoscale", func(t *testing.T) {
		t.Setenv("EXOSCALE_API_KEY", "EXOpreflighttest00000000")
		t.Setenv("EXOSCALE_API_SECRET", "preflight-secret")
		url := fakeCloud(t, "exoscale")
		t.Setenv("EXOSCALE_ZONE", "ch-gva-2")
		t.Setenv("EXOSCALE_API_ENDPOINT", url)
		t.Setenv("EXOSCALE_SKS_CLUSTER", "demo")
		code, out, stderr := preflightRun(t, "--cloud-provider", "exoscale", "--nodes", "1:10:workers", "--nodes", "1:4:batch")
		checkSummary(t, code, out, stderr, "exoscale", "--nodes 1:10:workers -> ", "GET /v2/instance-pool 200")
	})
	t.Run("volcengine", func(t *testing.T) {
		t.Setenv("ACCESS_KEY", "AKLTpreflight")
		url := fakeCloud(t, "volcengine")
		cfg := writeFile(t, "volc.conf", "[Global]\nregion-id = cn-beijing\naccess-key = AKLTpreflight\nsecret-key = preflight-secret\nendpoint = "+url+"\nscheme = http\n")
		code, out, stderr := preflightRun(t, "--cloud-provider", "volcengine", "--cloud-config", cfg, "--node-group-auto-discovery", "asg:tag=k8s.io/cluster-autoscaler/enabled=true")
		checkSummary(t, code, out, stderr, "volcengine", "--node-group-auto-discovery asg:tag=k8s.io/cluster-autoscaler/enabled=true -> scg-sim-general, scg-sim-gpu", "DescribeScalingGroups 200")
	})
}

func checkSummary(t *testing.T, code int, out, stderr, provider string, wants ...string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	wants = append(wants, "Preflight of "+provider+" against the cloud", "Node groups:", "template: cpu ",
		"Not checked: write permissions", "Grant them as "+permissionsPage(provider)+" lists.", "preflight OK for "+provider+": ")
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("summary lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(stderr, "error:") {
		t.Errorf("stderr has an error:\n%s", stderr)
	}
}

// TestPreflightFailures: each way the cloud cannot be read exits 1 and each
// configuration mistake exits 2, with one line naming the cause.
func TestPreflightFailures(t *testing.T) {
	t.Run("wrong vultr key", func(t *testing.T) {
		t.Setenv("VULTR_API_KEY", "the-right-key")
		url := fakeCloud(t, "vultr")
		code, _, stderr := preflightRun(t, "--cloud-provider", "vultr", "--cloud-config", vultrConfig(t, "a-wrong-key", url))
		wantOneError(t, code, stderr, 1, "vultr: GET /v2/kubernetes/clusters/"+vultrSimClusterID+"/node-pools: authentication failed", "HTTP 401", "check the API key (token or token_file in --cloud-config, or VULTR_API_KEY)")
		if strings.Contains(stderr, "a-wrong-key") || strings.Contains(stderr, "the-right-key") {
			t.Errorf("a key is in the output:\n%s", stderr)
		}
	})
	t.Run("wrong exoscale secret", func(t *testing.T) {
		t.Setenv("EXOSCALE_API_KEY", "EXOpreflighttest00000000")
		t.Setenv("EXOSCALE_API_SECRET", "the-right-secret")
		url := fakeCloud(t, "exoscale")
		t.Setenv("EXOSCALE_API_SECRET", "a-wrong-secret")
		t.Setenv("EXOSCALE_ZONE", "ch-gva-2")
		t.Setenv("EXOSCALE_API_ENDPOINT", url)
		t.Setenv("EXOSCALE_SKS_CLUSTER", "demo")
		code, _, stderr := preflightRun(t, "--cloud-provider", "exoscale")
		wantOneError(t, code, stderr, 1, "exoscale: ListInstancePools: authentication failed", "HTTP 401", "check EXOSCALE_API_KEY and EXOSCALE_API_SECRET")
		if strings.Contains(stderr, "the-right-secret") || strings.Contains(stderr, "a-wrong-secret") {
			t.Errorf("a secret is in the output:\n%s", stderr)
		}
	})
	t.Run("wrong volcengine key", func(t *testing.T) {
		t.Setenv("ACCESS_KEY", "AKLTtheright")
		url := fakeCloud(t, "volcengine")
		t.Setenv("ACCESS_KEY", "")
		cfg := writeFile(t, "volc.conf", "[Global]\nregion-id = cn-beijing\naccess-key = AKLTawrongone\nsecret-key = s\nendpoint = "+url+"\nscheme = http\n")
		code, _, stderr := preflightRun(t, "--cloud-provider", "volcengine", "--cloud-config", cfg, "--nodes", "1:10:scg-sim-general")
		wantOneError(t, code, stderr, 1, "volcengine: DescribeScalingGroups: authentication failed", "HTTP 401 InvalidAccessKey", "check access-key and secret-key")
	})
	t.Run("unreachable endpoint", func(t *testing.T) {
		t.Setenv("VULTR_API_KEY", "")
		code, _, stderr := preflightRun(t, "--cloud-provider", "vultr", "--cloud-config", vultrConfig(t, "some-key", closedPort(t)))
		wantOneError(t, code, stderr, 1, "vultr: GET /v2/kubernetes/clusters/"+vultrSimClusterID+"/node-pools: nothing accepts connections at 127.0.0.1:", "connection refused", "api_url in --cloud-config sets this host")
	})
	t.Run("unknown exoscale zone", func(t *testing.T) {
		// The zone's endpoint is a closed port here, as api-<zone> of a zone
		// that does not exist answers nowhere, without a DNS lookup in a test.
		t.Setenv("EXOSCALE_API_KEY", "EXOpreflighttest00000000")
		t.Setenv("EXOSCALE_API_SECRET", "preflight-secret")
		t.Setenv("EXOSCALE_ZONE", "xx-bad-9")
		t.Setenv("EXOSCALE_API_ENDPOINT", closedPort(t)+"/v2")
		code, _, stderr := preflightRun(t, "--cloud-provider", "exoscale")
		wantOneError(t, code, stderr, 1, "exoscale: ListInstancePools: nothing accepts connections", "EXOSCALE_API_ENDPOINT sets this host")
		if !strings.Contains(stderr, `warning: zone "xx-bad-9" (EXOSCALE_ZONE) is not a known exoscale zone (known: ch-gva-2, `) {
			t.Errorf("no warning about the unpublished zone:\n%s", stderr)
		}
	})
	t.Run("spec matching nothing", func(t *testing.T) {
		t.Setenv("VULTR_API_KEY", "preflight-test-key")
		url := fakeCloud(t, "vultr")
		code, _, stderr := preflightRun(t, "--cloud-provider", "vultr", "--cloud-config", vultrConfig(t, "preflight-test-key", url), "--nodes", "1:2:no-such-pool")
		wantOneError(t, code, stderr, 2, "--nodes 1:2:no-such-pool matches no node group")
	})
	t.Run("bad flag", func(t *testing.T) {
		code, _, stderr := preflightRun(t, "--cloud-provider", "vultr", "--max-staleness", "1s")
		wantOneError(t, code, stderr, 2, "--max-staleness")
	})
}

// TestPreflightZoneWarningOffline: a zone outside the SDK's list is a
// warning even offline, and a reachable cloud still passes.
func TestPreflightZoneWarningOffline(t *testing.T) {
	t.Setenv("EXOSCALE_API_KEY", "EXOpreflighttest00000000")
	t.Setenv("EXOSCALE_API_SECRET", "preflight-secret")
	url := fakeCloud(t, "exoscale")
	t.Setenv("EXOSCALE_ZONE", "ch-gva-9")
	t.Setenv("EXOSCALE_API_ENDPOINT", url)
	t.Setenv("EXOSCALE_SKS_CLUSTER", "demo")
	code, out, stderr := preflightRun(t, "--cloud-provider", "exoscale")
	if code != 0 || !strings.Contains(stderr, `warning: zone "ch-gva-9" (EXOSCALE_ZONE) is not a known exoscale zone`) {
		t.Fatalf("exit %d, want 0 with a zone warning:\n%s\n%s", code, stderr, out)
	}
}

// TestDemoNamesItsDeliberateMistake: each simulation says which of its
// settings is malformed on purpose, so the warning reads as an example.
func TestDemoNamesItsDeliberateMistake(t *testing.T) {
	for _, provider := range []string{"vultr", "volcengine", "exoscale"} {
		t.Run(provider, func(t *testing.T) {
			reg, ok := registry.Lookup(provider)
			if !ok {
				t.Skipf("%s is not compiled in", provider)
			}
			sim, err := reg.Simulate(context.Background(), registry.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			if len(sim.Deliberate) != 1 || !strings.Contains(sim.Deliberate[0], `maxnodeprovisiontime="soon" on purpose`) {
				t.Fatalf("Deliberate = %q", sim.Deliberate)
			}
		})
	}
}

// volcengineGateway puts a proxy in front of the fake Volcengine cloud that
// refuses action with 403 AccessDenied, as the gateway does for a key
// without that permission, and returns a cloud config pointing at it.
func volcengineGateway(t *testing.T, action string) string {
	t.Helper()
	t.Setenv("ACCESS_KEY", "AKLTpreflight")
	target, err := url.Parse(fakeCloud(t, "volcengine"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("Action") == action {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"ResponseMetadata":{"RequestId":"r-1","Action":"` + action + `","Version":"2020-04-01","Service":"ecs","Region":"cn-beijing","Error":{"Code":"AccessDenied","Message":"not allowed"}}}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gateway.Close)
	return writeFile(t, "volc.conf", "[Global]\nregion-id = cn-beijing\naccess-key = AKLTpreflight\nsecret-key = s\nendpoint = "+gateway.URL+"\nscheme = http\n")
}

// TestPreflightOptionalPermissionIsAWarning: a Volcengine key without
// ecs:DescribeImages still passes, with one warning naming the action.
func TestPreflightOptionalPermissionIsAWarning(t *testing.T) {
	cfg := volcengineGateway(t, "DescribeImages")
	code, out, stderr := preflightRun(t, "--cloud-provider", "volcengine", "--cloud-config", cfg, "--nodes", "1:10:scg-sim-general")
	if code != 0 || !strings.Contains(out, "preflight OK for volcengine") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "warning: the cloud refused the optional read GET /?Action=DescribeImages (HTTP 403)") || strings.Contains(stderr, "error:") {
		t.Fatalf("want one warning naming DescribeImages:\n%s", stderr)
	}
}

// TestPreflightRefusedReadNamesTheAction: a key without a permission the
// provider needs fails with one line naming the API action.
func TestPreflightRefusedReadNamesTheAction(t *testing.T) {
	cfg := volcengineGateway(t, "DescribeScalingGroups")
	code, _, stderr := preflightRun(t, "--cloud-provider", "volcengine", "--cloud-config", cfg, "--nodes", "1:10:scg-sim-general")
	wantOneError(t, code, stderr, 1, "volcengine: DescribeScalingGroups: permission refused (HTTP 403 AccessDenied", "docs/providers/volcengine.md#permissions")
}

// volcengineRegions starts a Volcengine fake serving only cn-beijing, with
// one tagged group there, that treats any other region by policy; it
// returns a cloud config signing for region.
func volcengineRegions(t *testing.T, policy volcfake.RegionPolicy, region string) string {
	t.Helper()
	if _, ok := registry.Lookup("volcengine"); !ok {
		t.Skip("volcengine is not compiled in")
	}
	t.Setenv("REGION_ID", "")
	f := volcfake.New(volcfake.Options{AccessKey: "AKLTpreflight", Regions: []string{"cn-beijing"}, OtherRegion: policy})
	f.AddInstanceType(volcfake.InstanceType{ID: "ecs.g3i.xlarge", Family: "ecs.g3i", CPUs: 4, MemoryMiB: 16384})
	f.AddImage(volcfake.Image{ID: "image-1", Architecture: "x86_64", OSType: "Linux"})
	f.AddConfiguration(volcfake.Configuration{ID: "scc-1", GroupID: "scg-1", InstanceTypes: []string{"ecs.g3i.xlarge"}, ImageID: "image-1"})
	f.AddGroup(volcfake.Group{ID: "scg-1", Name: "general", Min: 1, Max: 10, Desired: 0, ActiveConfigID: "scc-1",
		Tags: map[string]string{"k8s.io/cluster-autoscaler/enabled": "true"}})
	url := f.Start()
	t.Cleanup(f.Close)
	return writeFile(t, "volc.conf", "[Global]\nregion-id = "+region+"\naccess-key = AKLTpreflight\nsecret-key = s\nendpoint = "+url+"\nscheme = http\n")
}

// TestPreflightVolcengineRegion: a misspelt Volcengine region, which only
// the gateway can tell (no region list, one host for every region), is
// named under each answer the gateway may give: refused (exit 1), or served
// as empty (a spec matching nothing exits 2, discovery finding nothing
// warns); the right region passes against the same fake.
func TestPreflightVolcengineRegion(t *testing.T) {
	const discovery = "asg:tag=k8s.io/cluster-autoscaler/enabled=true"
	for name, policy := range map[string]volcfake.RegionPolicy{"refusing": volcfake.RefuseRegion, "serving empty": volcfake.EmptyRegion} {
		t.Run("right region, other regions "+name, func(t *testing.T) {
			cfg := volcengineRegions(t, policy, "cn-beijing")
			code, out, stderr := preflightRun(t, "--cloud-provider", "volcengine", "--cloud-config", cfg, "--nodes", "1:10:scg-1")
			if code != 0 || strings.Contains(stderr, "region") {
				t.Fatalf("exit %d, want 0 without a region line:\n%s\n%s", code, out, stderr)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		cfg := volcengineRegions(t, volcfake.RefuseRegion, "cn-bejing")
		code, _, stderr := preflightRun(t, "--cloud-provider", "volcengine", "--cloud-config", cfg, "--nodes", "1:10:scg-1")
		wantOneError(t, code, stderr, 1, `volcengine: the API refused region "cn-bejing" (region-id in --cloud-config)`, "HTTP 400", "check the spelling")
	})
	t.Run("refused, from REGION_ID", func(t *testing.T) {
		cfg := volcengineRegions(t, volcfake.RefuseRegion, "cn-beijing")
		cfg = writeFile(t, "volc.conf", strings.Replace(readFile(t, cfg), "region-id = cn-beijing\n", "", 1))
		t.Setenv("REGION_ID", "cn-bejing")
		code, _, stderr := preflightRun(t, "--cloud-provider", "volcengine", "--cloud-config", cfg, "--node-group-auto-discovery", discovery)
		wantOneError(t, code, stderr, 1, `volcengine: the API refused region "cn-bejing" (REGION_ID)`)
	})
	t.Run("empty, spec", func(t *testing.T) {
		cfg := volcengineRegions(t, volcfake.EmptyRegion, "cn-bejing")
		code, _, stderr := preflightRun(t, "--cloud-provider", "volcengine", "--cloud-config", cfg, "--nodes", "1:10:scg-1")
		wantOneError(t, code, stderr, 2, "--nodes 1:10:scg-1 matches no node group", `looked in region "cn-bejing" (region-id in --cloud-config)`)
	})
	t.Run("empty, discovery", func(t *testing.T) {
		cfg := volcengineRegions(t, volcfake.EmptyRegion, "cn-bejing")
		code, out, stderr := preflightRun(t, "--cloud-provider", "volcengine", "--cloud-config", cfg, "--node-group-auto-discovery", discovery)
		if code != 0 || len(errorLines(stderr)) != 0 ||
			!strings.Contains(stderr, `warning: no node groups are served in region "cn-bejing" (region-id in --cloud-config) with these --nodes/--node-group-auto-discovery flags: CA would do nothing; check region-id in --cloud-config and the flags`) {
			t.Fatalf("exit %d, want 0 with one warning naming the region:\n%s\n%s", code, out, stderr)
		}
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
