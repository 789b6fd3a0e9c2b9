package vultr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

const secretToken = "VULTR-SECRET-abc123"

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cloud-config.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(vals map[string]string) func(string) string {
	return func(k string) string { return vals[k] }
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(secretToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	emptyFile := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(emptyFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		json      string
		env       map[string]string
		wantToken string
		wantURL   string
		wantErrs  []string
	}{
		{name: "upstream format", json: `{"cluster_id":"` + testClusterID + `","token":"` + secretToken + `"}`,
			wantToken: secretToken, wantURL: "https://api.vultr.com"},
		{name: "case-insensitive keys like upstream", json: `{"CLUSTER_ID":"` + testClusterID + `","Token":"` + secretToken + `"}`,
			wantToken: secretToken, wantURL: "https://api.vultr.com"},
		{name: "token_file", json: `{"cluster_id":"` + testClusterID + `","token_file":"` + tokenFile + `"}`, wantToken: secretToken},
		{name: "env fallback", json: `{"cluster_id":"` + testClusterID + `"}`, env: map[string]string{EnvAPIKey: secretToken}, wantToken: secretToken},
		{name: "token beats env", json: `{"cluster_id":"` + testClusterID + `","token":"` + secretToken + `"}`,
			env: map[string]string{EnvAPIKey: "other"}, wantToken: secretToken},
		{name: "api_url", json: `{"cluster_id":"` + testClusterID + `","token":"x","api_url":"http://127.0.0.1:8080"}`,
			wantToken: "x", wantURL: "http://127.0.0.1:8080"},
		{name: "every problem at once", json: `{"api_url":"ftp:/nope","token_file":"` + emptyFile + `"}`,
			wantErrs: []string{"cluster_id is required", "is empty", "api_url"}},
		{name: "missing everything, one line each", json: `{}`, wantErrs: []string{"cloud-config.json: cluster_id is required: give the VKE cluster's ID\nvultr: cloud config ", "cloud-config.json: no API key: set token_file (a file holding it) or token in the cloud config, or VULTR_API_KEY"}},
		{name: "empty file", json: " \n", wantErrs: []string{"file is empty"}},
		{name: "unreadable token_file, reported once", json: `{"cluster_id":"` + testClusterID + `","token_file":"/nonexistent/token"}`,
			wantErrs: []string{"cloud-config.json:1:67: token_file /nonexistent/token: no such file or directory"}},
		{name: "type error names the field and where", json: "{\"cluster_id\":\"" + testClusterID + "\",\n  \"token\": 123}", wantErrs: []string{`cloud-config.json:2:12: expected a string for "token", got a number`}},
		{name: "truncated", json: `{"cluster_id":"` + testClusterID + `","token":"` + secretToken + `"`, wantErrs: []string{"cloud-config.json:1:83: invalid JSON: the file ends inside the object"}},
		{name: "syntax error says what was expected", json: "{\"cluster_id\":\"" + testClusterID + "\",\n\"token\": \"" + secretToken + "\",, }", wantErrs: []string{"cloud-config.json:2:32: invalid JSON: expected a quoted key or }"}},
		{name: "unquoted token is not quoted back", json: "{\"token\": " + secretToken + "}", wantErrs: []string{"cloud-config.json:1:11: invalid JSON: expected a value"}},
		{name: "data after the object", json: `{"cluster_id":"` + testClusterID + `","token":"x"} {}`, wantErrs: []string{"cloud-config.json:1:67: invalid JSON: expected the end of the file"}},
		// Upstream takes any id (configWarnings warns).
		{name: "cluster_id not a UUID", json: `{"token":"x","cluster_id":"c1"}`, wantToken: "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(writeFile(t, tc.json), env(tc.env))
			if len(tc.wantErrs) > 0 {
				if err == nil {
					t.Fatalf("want errors %v, got config %v", tc.wantErrs, cfg)
				}
				for _, w := range tc.wantErrs {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("error %q does not mention %q", err, w)
					}
				}
				if strings.Contains(err.Error(), secretToken) {
					t.Fatalf("error leaks the token: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tok, err := cfg.TokenSource().Token()
			if err != nil || tok.AccessToken != tc.wantToken {
				t.Fatalf("token %v, %v; want %q", tok, err, tc.wantToken)
			}
			if tc.wantURL != "" && cfg.apiURL() != tc.wantURL {
				t.Fatalf("api url %q, want %q", cfg.apiURL(), tc.wantURL)
			}
		})
	}
}

// TestConfigWarnings: a cluster_id that is not a UUID warns once, naming
// the value, its place and the form of a VKE ID; a UUID, a missing file
// or a config with errors warn of nothing.
func TestConfigWarnings(t *testing.T) {
	t.Parallel()
	odd := writeFile(t, "{\"token\":\""+secretToken+"\",\n  \"cluster_id\": \"c1\"}")
	got := configWarnings(registry.BuildOptions{CloudConfig: odd})
	want := odd + `:2:17: cluster_id "c1" is not a UUID, the form of VKE cluster IDs (8-4-4-4-12 hex digits`
	if len(got) != 1 || !strings.Contains(got[0], want) || strings.Contains(got[0], "\n") || strings.Contains(got[0], secretToken) {
		t.Fatalf("warnings %q, want one line containing %q and not the token", got, want)
	}
	for name, path := range map[string]string{
		"uuid":     writeFile(t, `{"token":"x","cluster_id":"`+testClusterID+`"}`),
		"missing":  filepath.Join(t.TempDir(), "none.json"),
		"no id":    writeFile(t, `{"token":"x"}`),
		"bad json": writeFile(t, `{"cluster_id": 5}`),
	} {
		if got := configWarnings(registry.BuildOptions{CloudConfig: path}); len(got) != 0 {
			t.Errorf("%s: warnings %q, want none", name, got)
		}
	}
}

func TestConfigNeverPrintsToken(t *testing.T) {
	// Not parallel: captures klog's process-wide output.
	cfg := &Config{ClusterID: "c1", Token: secretToken, envToken: secretToken}
	var logBuf bytes.Buffer
	klog.LogToStderr(false)
	klog.SetOutput(&logBuf)
	defer func() { klog.LogToStderr(true); klog.SetOutput(os.Stderr) }()
	klog.InfoS("Config", "config", cfg, "token", cfg.Token)
	klog.Flush()
	outputs := map[string]string{
		"String": cfg.String(), "%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", *cfg),
		"%#v": fmt.Sprintf("%#v", *cfg), "%s": fmt.Sprintf("%s", cfg), "Secret %v": fmt.Sprintf("%v %+v %#v", cfg.Token, cfg.Token, cfg.Token),
		"klog": logBuf.String(), "wrapped error": fmt.Errorf("build: %v", cfg).Error(),
	}
	for how, out := range outputs {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			if strings.Contains(out, secretToken) {
				t.Fatalf("%s leaks the token: %s", how, out)
			}
		})
	}
	if !strings.Contains(cfg.String(), "c1") {
		t.Fatalf("String() lost the useful parts: %s", cfg.String())
	}
}

func TestFileTokenSourceRotation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "token")
	write := func(s string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write("first", base)
	ts := (&Config{TokenFile: path}).TokenSource()
	steps := []struct {
		name   string
		action func()
		want   string
	}{
		{name: "initial", action: func() {}, want: "first"},
		{name: "unchanged", action: func() {}, want: "first"},
		{name: "rotated", action: func() { write("second-token", base.Add(time.Minute)) }, want: "second-token"},
		{name: "file briefly missing keeps last key", action: func() { _ = os.Remove(path) }, want: "second-token"},
		{name: "back", action: func() { write("third", base.Add(2*time.Minute)) }, want: "third"},
	}
	for _, s := range steps {
		// Not parallel: the steps share one environment and run in order.
		t.Run(s.name, func(t *testing.T) {
			s.action()
			tok, err := ts.Token()
			if err != nil || tok.AccessToken != s.want {
				t.Fatalf("Token() = %v, %v; want %q", tok, err, s.want)
			}
		})
	}
	fresh := (&Config{TokenFile: filepath.Join(t.TempDir(), "absent")}).TokenSource()
	if _, err := fresh.Token(); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file error = %v", err)
	}
}

// TestInlineTokenRotation: with the in-tree layout (the token inside the
// cloud config, a mounted Secret), a rewritten file's token is used without
// a restart, and a rewrite without a token keeps the last good one.
func TestInlineTokenRotation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cloud-config")
	write := func(body string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write(`{"cluster_id": "`+testClusterID+`", "token": "first"}`, base)
	cfg, err := LoadConfig(path, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	ts := cfg.TokenSource()
	steps := []struct {
		name   string
		action func()
		want   string
	}{
		{name: "initial", action: func() {}, want: "first"},
		{name: "rotated", action: func() { write(`{"cluster_id": "`+testClusterID+`", "token": "second-token"}`, base.Add(time.Minute)) }, want: "second-token"},
		{name: "no token keeps the last", action: func() { write(`{"cluster_id": "`+testClusterID+`"}`, base.Add(2*time.Minute)) }, want: "second-token"},
		{name: "not JSON keeps the last", action: func() { write(`{"cluster_id": `, base.Add(3*time.Minute)) }, want: "second-token"},
		{name: "back", action: func() { write(`{"cluster_id": "`+testClusterID+`", "token": "third"}`, base.Add(4*time.Minute)) }, want: "third"},
	}
	for _, s := range steps {
		// Not parallel: the steps share one file and run in order.
		t.Run(s.name, func(t *testing.T) {
			s.action()
			tok, err := ts.Token()
			if err != nil || tok.AccessToken != s.want {
				t.Fatalf("Token() = %v, %v; want %q", tok, err, s.want)
			}
		})
	}
	// A token given only in a parsed config (no file) stays fixed.
	parsed, err := ParseConfig([]byte(`{"cluster_id": "` + testClusterID + `", "token": "fixed"}`))
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := parsed.TokenSource().Token(); err != nil || tok.AccessToken != "fixed" {
		t.Fatalf("Token() of a parsed config = %v, %v", tok, err)
	}
}

// TestTokenFileRotationEndToEnd rotates the key in the fake and in the file:
// the provider follows without a restart.
func TestTokenFileRotationEndToEnd(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	path := filepath.Join(t.TempDir(), "token")
	write := func(tok string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write(e.fake.Token(), base)
	cfg, err := LoadConfig(writeFile(t, `{"cluster_id":"`+testClusterID+`","token_file":"`+path+`","api_url":"`+e.fake.URL()+`"}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	p, err := newProvider(context.Background(), cfg, nil, registry.BuildOptions{}, cloudhttp.RetryOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Refresh(e.ctx()); err != nil {
		t.Fatal(err)
	}
	e.fake.SetToken("rotated-" + secretToken)
	err = p.Refresh(e.ctx())
	if !errors.Is(err, cloudprovider.ErrUnauthenticated) || strings.Contains(err.Error(), secretToken) {
		t.Fatalf("Refresh with the old key: %v", err)
	}
	write("rotated-"+secretToken, base.Add(time.Minute))
	if err := p.Refresh(e.ctx()); err != nil {
		t.Fatalf("Refresh after the file was rotated: %v", err)
	}
}
