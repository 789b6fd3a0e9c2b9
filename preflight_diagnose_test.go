package main

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	exofake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	volcfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
	vultrfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// noDNS is a dialer under which no name resolves, as a resolver answers
// for a name under .invalid: the error the real dialer returns, without a
// lookup.
func noDNS(t *testing.T) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(_ context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			t.Errorf("dial %q: %v", addr, err)
		}
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}
}

// viaProxy is a proxy rule sending every request to proxy.
func viaProxy(proxy string) func(*http.Request) (*url.URL, error) {
	return func(*http.Request) (*url.URL, error) { return url.Parse(proxy) }
}

// untrustedTLS is an HTTPS server whose certificate no system trusts.
func untrustedTLS(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("a request passed an untrusted certificate")
		w.WriteHeader(http.StatusTeapot)
	}))
	// The refused handshakes are the point, not news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func hooked(t *testing.T, hooks preflightHooks, args ...string) (int, string, string) {
	t.Helper()
	if hooks.timeout == 0 {
		hooks.timeout = 60 * time.Second
	}
	var out, errb strings.Builder
	code := preflightWith(context.Background(), append([]string{"--cloud-provider"}, args...), &out, &errb, hooks)
	return code, out.String(), errb.String()
}

// lacks fails when the one error line mentions any of words: advice that
// does not fit the provider.
func lacks(t *testing.T, stderr string, words ...string) {
	t.Helper()
	for _, l := range errorLines(stderr) {
		for _, w := range words {
			if strings.Contains(l, w) {
				t.Errorf("error line mentions %q: %s", w, l)
			}
		}
	}
}

func vultrCfg(t *testing.T, clusterID, apiURL string) string {
	cfg := `{"cluster_id": "` + clusterID + `", "token": "k-123"`
	if apiURL != "" {
		cfg += `, "api_url": "` + apiURL + `"`
	}
	return writeFile(t, "vultr.json", cfg+"}")
}

func volcCfg(t *testing.T, endpoint, scheme string) string {
	return writeFile(t, "volc.conf", "[Global]\nregion-id = cn-beijing\naccess-key = AKLTdiag\nsecret-key = s\nendpoint = "+endpoint+"\nscheme = "+scheme+"\n")
}

// TestPreflightVultrCauses: every way a Vultr call fails is named with its
// chained cause and a fix about api.vultr.com or api_url, never a zone or
// region (Vultr has neither).
func TestPreflightVultrCauses(t *testing.T) {
	t.Parallel()
	fake := vultrfake.New(vultrfake.Options{Token: "k-123"})
	fake.AddCluster(vultrfake.ClusterSpec{ID: vultrSimClusterID, Region: "ewr"})
	fakeURL := fake.Start()
	t.Cleanup(fake.Close)
	refused := closedPort(t)
	tls := untrustedTLS(t)
	hanging := vultrfake.New(vultrfake.Options{Token: "k-123"})
	hanging.AddCluster(vultrfake.ClusterSpec{ID: vultrSimClusterID, Region: "ewr"})
	hanging.AddFault(fakecloud.Fault{Hang: true, Times: 100})
	hangURL := hanging.Start()
	t.Cleanup(hanging.Close)
	forbidden := vultrfake.New(vultrfake.Options{Token: "k-123"})
	forbidden.AddCluster(vultrfake.ClusterSpec{ID: vultrSimClusterID, Region: "ewr"})
	forbidden.AddFault(fakecloud.Fault{Status: http.StatusForbidden, Message: "Unauthorized IP address", Times: 100})
	forbiddenURL := forbidden.Start()
	t.Cleanup(forbidden.Close)

	cases := []struct {
		name   string
		hooks  preflightHooks
		config string
		wants  []string
	}{
		{"no DNS, default host", preflightHooks{dial: noDNS(t)}, vultrCfg(t, vultrSimClusterID, ""),
			[]string{"the API host api.vultr.com does not resolve (lookup api.vultr.com: no such host)", "calls go to api.vultr.com (api_url in --cloud-config overrides it)"}},
		{"no DNS, api_url", preflightHooks{dial: noDNS(t)}, vultrCfg(t, vultrSimClusterID, "https://api.vultr.invalid"),
			[]string{"the API host api.vultr.invalid does not resolve", "api_url in --cloud-config sets this host"}},
		{"refused", preflightHooks{}, vultrCfg(t, vultrSimClusterID, refused),
			[]string{"nothing accepts connections at " + strings.TrimPrefix(refused, "http://"), "connect: connection refused"}},
		{"TLS", preflightHooks{}, vultrCfg(t, vultrSimClusterID, tls.URL),
			[]string{"TLS with " + strings.TrimPrefix(tls.URL, "https://") + " failed", "x509: certificate signed by unknown authority"}},
		{"timeout", preflightHooks{timeout: 300 * time.Millisecond}, vultrCfg(t, vultrSimClusterID, hangURL),
			[]string{"no answer from 127.0.0.1", "in time (", "deadline exceeded"}},
		{"proxy", preflightHooks{proxy: viaProxy(refused)}, vultrCfg(t, vultrSimClusterID, fakeURL),
			[]string{"the proxy " + strings.TrimPrefix(refused, "http://") + " (HTTPS_PROXY/HTTP_PROXY) failed", "connection refused", "NO_PROXY"}},
		{"403", preflightHooks{}, vultrCfg(t, vultrSimClusterID, forbiddenURL),
			[]string{"permission refused (HTTP 403: Unauthorized IP address)", "docs/providers/vultr.md#permissions"}},
		{"404 on the cluster", preflightHooks{}, vultrCfg(t, "c0ffee00-0000-4000-8000-0000000000ff", fakeURL),
			[]string{"the cloud knows no such resource (HTTP 404", "check the id in cluster_id in --cloud-config"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := hooked(t, tc.hooks, "vultr", "--cloud-config", tc.config)
			wantOneError(t, code, stderr, 1, append([]string{"error: vultr: GET /v2/kubernetes/clusters/"}, tc.wants...)...)
			lacks(t, stderr, "zone", "region", "k-123")
		})
	}
}

// TestPreflightVolcengineCauses: Volcengine keeps the chained network
// error (the SDK hides it behind OrigErr) and names its one gateway or the
// endpoint override.
func TestPreflightVolcengineCauses(t *testing.T) {
	t.Parallel()
	refused := closedPort(t)
	tls := untrustedTLS(t)
	newFake := func(fault fakecloud.Fault) string {
		f := volcfake.New(volcfake.Options{AccessKey: "AKLTdiag"})
		f.AddFault(fault)
		u := f.Start()
		t.Cleanup(f.Close)
		return u
	}
	hangURL := newFake(fakecloud.Fault{Hang: true, Times: 100})
	forbiddenURL := newFake(fakecloud.Fault{Status: http.StatusForbidden, Code: "AccessDenied", Message: "not allowed", Times: 100})
	okURL := newFake(fakecloud.Fault{Operation: "none"})

	cases := []struct {
		name   string
		hooks  preflightHooks
		config string
		wants  []string
	}{
		{"no DNS, default gateway", preflightHooks{dial: noDNS(t)}, volcCfg(t, "open.volcengineapi.com", "https"),
			[]string{"DescribeScalingGroups: the API host open.volcengineapi.com does not resolve (", "lookup open.volcengineapi.com: no such host)", "calls go to open.volcengineapi.com (endpoint in --cloud-config (or ENDPOINT) overrides it)"}},
		{"no DNS, endpoint", preflightHooks{dial: noDNS(t)}, volcCfg(t, "open.volc.invalid", "https"),
			[]string{"the API host open.volc.invalid does not resolve", "endpoint in --cloud-config (or ENDPOINT) sets this host"}},
		{"refused", preflightHooks{}, volcCfg(t, refused, "http"),
			[]string{"nothing accepts connections at " + strings.TrimPrefix(refused, "http://"), "connection refused"}},
		{"TLS", preflightHooks{}, volcCfg(t, strings.TrimPrefix(tls.URL, "https://"), "https"),
			[]string{"TLS with " + strings.TrimPrefix(tls.URL, "https://") + " failed", "x509: certificate signed by unknown authority"}},
		{"timeout", preflightHooks{timeout: 300 * time.Millisecond}, volcCfg(t, hangURL, "http"),
			[]string{"no answer from 127.0.0.1", "in time (", "deadline exceeded"}},
		{"proxy", preflightHooks{proxy: viaProxy(refused)}, volcCfg(t, okURL, "http"),
			[]string{"the proxy " + strings.TrimPrefix(refused, "http://") + " (HTTPS_PROXY/HTTP_PROXY) failed"}},
		{"403", preflightHooks{}, volcCfg(t, forbiddenURL, "http"),
			[]string{"DescribeScalingGroups: permission refused (HTTP 403 AccessDenied: not allowed)", "docs/providers/volcengine.md#permissions"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := hooked(t, tc.hooks, "volcengine", "--cloud-config", tc.config, "--nodes", "1:3:scg-diag")
			wantOneError(t, code, stderr, 1, append([]string{"error: volcengine: "}, tc.wants...)...)
			lacks(t, stderr, "zone", "invalid argument", "cloud unavailable")
		})
	}
}

// TestPreflightExoscaleCauses: Exoscale's zone decides its host, so a
// failure names the zone's endpoint, or says the zone is unknown; an
// override names EXOSCALE_API_ENDPOINT instead. Not parallel: the
// configuration is the environment.
func TestPreflightExoscaleCauses(t *testing.T) {
	t.Setenv("EXOSCALE_API_KEY", "EXOdiag000000000000000000")
	t.Setenv("EXOSCALE_API_SECRET", "diag-secret")
	t.Setenv("EXOSCALE_SKS_CLUSTER", "")
	refused := closedPort(t)
	tls := untrustedTLS(t)
	newFake := func(fault fakecloud.Fault) string {
		f := exofake.New(exofake.Options{APIKey: "EXOdiag000000000000000000", APISecret: "diag-secret"})
		f.AddFault(fault)
		u := f.Start()
		t.Cleanup(f.Close)
		return u
	}
	hangURL := newFake(fakecloud.Fault{Hang: true, Times: 100})
	forbiddenURL := newFake(fakecloud.Fault{Status: http.StatusForbidden, Message: "Forbidden: list-instance-pools", Times: 100})
	okURL := newFake(fakecloud.Fault{Operation: "none"})

	cases := []struct {
		name           string
		hooks          preflightHooks
		zone, endpoint string
		wants          []string
	}{
		{"no DNS, known zone", preflightHooks{dial: noDNS(t)}, "de-fra-1", "",
			[]string{"the API host api-de-fra-1.exoscale.com does not resolve (", "zone de-fra-1's endpoint is api-de-fra-1.exoscale.com"}},
		{"no DNS, unknown zone", preflightHooks{dial: noDNS(t)}, "xx-bad-9", "",
			[]string{`zone "xx-bad-9" is not a known zone (its endpoint would be api-xx-bad-9.exoscale.com): check EXOSCALE_ZONE`}},
		{"refused, override", preflightHooks{}, "ch-gva-2", refused + "/v2",
			[]string{"nothing accepts connections at " + strings.TrimPrefix(refused, "http://"), "EXOSCALE_API_ENDPOINT sets this host"}},
		{"TLS, override", preflightHooks{}, "ch-gva-2", tls.URL + "/v2",
			[]string{"TLS with " + strings.TrimPrefix(tls.URL, "https://") + " failed", "x509: certificate signed by unknown authority"}},
		{"timeout", preflightHooks{timeout: 300 * time.Millisecond}, "ch-gva-2", hangURL,
			[]string{"no answer from 127.0.0.1", "in time (", "deadline exceeded"}},
		{"proxy", preflightHooks{proxy: viaProxy(refused)}, "ch-gva-2", okURL,
			[]string{"the proxy " + strings.TrimPrefix(refused, "http://") + " (HTTPS_PROXY/HTTP_PROXY) failed"}},
		{"403", preflightHooks{}, "ch-gva-2", forbiddenURL,
			[]string{"ListInstancePools: permission refused (HTTP 403: Forbidden: list-instance-pools)", "docs/providers/exoscale.md#permissions"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("EXOSCALE_ZONE", tc.zone)
			t.Setenv("EXOSCALE_API_ENDPOINT", tc.endpoint)
			code, _, stderr := hooked(t, tc.hooks, "exoscale")
			wantOneError(t, code, stderr, 1, append([]string{"error: exoscale: "}, tc.wants...)...)
			lacks(t, stderr, "diag-secret", "region")
		})
	}
}

// TestConfigErrorsComeFirst: a configuration preflight refuses is the one
// line printed, exit 2, no header and no cloud call, in --check-config's
// words.
func TestConfigErrorsComeFirst(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"malformed JSON": {"vultr", "--cloud-config", writeFile(t, "v.json", "{\"cluster_id\": \""+vultrSimClusterID+"\",\n \"token\": 5}")},
		"volcengine INI": {"volcengine", "--cloud-config", writeFile(t, "volc.conf", "[Global]\nregion-id cn-beijing\n")},
	}
	wants := map[string]string{
		"malformed JSON": `v.json:2:11: expected a string for "token", got a number`,
		"volcengine INI": "volc.conf:2:",
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := hooked(t, preflightHooks{dial: func(context.Context, string, string) (net.Conn, error) {
				t.Error("a configuration error made a cloud call")
				return nil, net.ErrClosed
			}}, args...)
			wantOneError(t, code, stderr, 2, wants[name])
			if out != "" {
				t.Errorf("stdout has a header before the configuration error:\n%s", out)
			}
			lacks(t, stderr, "invalid argument")
			checkCode, _, checkErr := runArgs(t, append([]string{"--check-config", "--cloud-provider"}, args...)...)
			if checkCode != 2 || errorLines(checkErr)[0] != errorLines(stderr)[0] {
				t.Errorf("--check-config: exit %d, %q; preflight said %q", checkCode, checkErr, stderr)
			}
		})
	}
}

// TestUnknownZoneWarnsInBoth: --check-config and preflight print the same
// warning for a zone outside the known list and both exit 0 for it.
func TestUnknownZoneWarnsInBoth(t *testing.T) {
	t.Setenv("EXOSCALE_API_KEY", "EXOdiag000000000000000000")
	t.Setenv("EXOSCALE_API_SECRET", "diag-secret")
	t.Setenv("EXOSCALE_ZONE", "xx-bad-9")
	f := exofake.New(exofake.Options{APIKey: "EXOdiag000000000000000000", APISecret: "diag-secret"})
	t.Setenv("EXOSCALE_API_ENDPOINT", f.Start())
	t.Cleanup(f.Close)
	const warning = `warning: zone "xx-bad-9" (EXOSCALE_ZONE) is not a known exoscale zone (known: ch-gva-2, `
	code, out, stderr := runArgs(t, "--cloud-provider", "exoscale", "--check-config")
	if code != 0 || !strings.Contains(stderr, warning) || !strings.Contains(out, "configuration OK for exoscale (1 warning above)") {
		t.Fatalf("--check-config: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, pstderr := hooked(t, preflightHooks{}, "exoscale")
	if code != 0 || !strings.Contains(pstderr, warning) {
		t.Fatalf("preflight: exit %d\n%s\n%s", code, out, pstderr)
	}
	if w := strings.SplitN(stderr, "\n", 2)[0]; !strings.Contains(pstderr, w) {
		t.Errorf("the two warnings differ:\n%s\n%s", stderr, pstderr)
	}
}
