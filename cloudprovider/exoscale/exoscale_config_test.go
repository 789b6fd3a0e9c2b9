package exoscale

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

func envFunc(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	full := map[string]string{EnvAPIKey: testKey, EnvAPISecret: testSecret, EnvZone: "de-fra-1"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range full {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		opts     registry.BuildOptions
		wantErr  []string
		endpoint string
		check    func(t *testing.T, c Config)
	}{
		{name: "defaults", env: full, endpoint: "https://api-de-fra-1.exoscale.com/v2", check: func(t *testing.T, c Config) {
			if c.Environment != "api" || c.UnlimitedMaxSize != defaultUnlimitedMaxSize || c.RefreshInterval != defaultRefreshInterval {
				t.Fatalf("defaults not applied: %v", c)
			}
			if !c.LearnPools || c.LearntPoolBounds != nil {
				t.Fatalf("pools are learnt with upstream's bounds by default: learn %v, bounds %v", c.LearnPools, c.LearntPoolBounds)
			}
		}},
		{name: "learning off", env: with(EnvLearnPools, "false"), check: func(t *testing.T, c Config) {
			if c.LearnPools || !strings.Contains(c.String(), "learntPools: off") {
				t.Fatalf("EXOSCALE_LEARN_POOLS=false left learning on: %v", c)
			}
		}},
		{name: "learnt bounds", env: with(EnvLearnPools, "true", EnvLearntPoolBounds, " 0:4 "), check: func(t *testing.T, c Config) {
			if !c.LearnPools || c.LearntPoolBounds == nil || *c.LearntPoolBounds != (Bounds{Min: 0, Max: 4}) || !strings.Contains(c.String(), "learntPools: 0:4") {
				t.Fatalf("learnt bounds: %v", c)
			}
		}},
		{name: "bad learning switch", env: with(EnvLearnPools, "no thanks"), wantErr: []string{`exoscale: EXOSCALE_LEARN_POOLS="no thanks": want true or false`}},
		{name: "learnt bounds min above max", env: with(EnvLearntPoolBounds, "5:2"), wantErr: []string{`exoscale: EXOSCALE_LEARNT_POOL_BOUNDS="5:2": want min:max such as 1:10`}},
		{name: "learnt bounds not a pair", env: with(EnvLearntPoolBounds, "10"), wantErr: []string{EnvLearntPoolBounds + `="10"`}},
		{name: "learnt bounds max zero", env: with(EnvLearntPoolBounds, "0:0"), wantErr: []string{EnvLearntPoolBounds + `="0:0"`}},
		{name: "learnt bounds negative", env: with(EnvLearntPoolBounds, "-1:3"), wantErr: []string{EnvLearntPoolBounds + `="-1:3"`}},
		{name: "learnt bounds without learning", env: with(EnvLearnPools, "false", EnvLearntPoolBounds, "1:3"), wantErr: []string{"EXOSCALE_LEARNT_POOL_BOUNDS is set but EXOSCALE_LEARN_POOLS=false learns no pools: drop one of them"}},
		{name: "all three missing, each named", env: map[string]string{}, wantErr: []string{"exoscale: EXOSCALE_API_KEY is not set", "exoscale: EXOSCALE_API_SECRET is not set", "exoscale: EXOSCALE_ZONE is not set"}},
		{name: "secret missing names its file alternative", env: with(EnvAPISecret, ""), wantErr: []string{"exoscale: EXOSCALE_API_SECRET is not set: set it, or EXOSCALE_API_SECRET_FILE to a file holding it"}},
		{name: "environment", env: with(EnvAPIEnvironment, "ppapi"), endpoint: "https://ppapi-de-fra-1.exoscale.com/v2"},
		{name: "endpoint override", env: with(EnvAPIEndpoint, "http://127.0.0.1:8080/v2/"), endpoint: "http://127.0.0.1:8080/v2"},
		{name: "bad endpoint", env: with(EnvAPIEndpoint, "api.exoscale.com"), wantErr: []string{EnvAPIEndpoint}},
		{name: "bad zone", env: with(EnvZone, "de-fra-1.evil.com/x"), wantErr: []string{"does not look like an Exoscale zone"}},
		{name: "bad environment", env: with(EnvAPIEnvironment, "API!"), wantErr: []string{EnvAPIEnvironment}},
		{name: "tunables", env: with(EnvUnlimitedMaxSize, "250", EnvRefreshInterval, "30s", EnvSKSCluster, "prod"), check: func(t *testing.T, c Config) {
			if c.UnlimitedMaxSize != 250 || c.RefreshInterval != 30*time.Second || c.SKSCluster != "prod" {
				t.Fatalf("tunables: %v", c)
			}
		}},
		{name: "bad tunables reported together", env: with(EnvUnlimitedMaxSize, "0", EnvRefreshInterval, "soon"), wantErr: []string{EnvUnlimitedMaxSize, EnvRefreshInterval}},
		{name: "specs", env: full, opts: registry.BuildOptions{NodeGroupSpecs: []string{"0:5:gpu", "2:9:pool:with:colons"}}, check: func(t *testing.T, c Config) {
			if len(c.NodeGroupSpecs) != 2 || c.NodeGroupSpecs[1].Name != "pool:with:colons" || c.NodeGroupSpecs[0].MinSize != 0 {
				t.Fatalf("specs %v", c.NodeGroupSpecs)
			}
		}},
		{name: "bad spec", env: full, opts: registry.BuildOptions{NodeGroupSpecs: []string{"5:1:x"}}, wantErr: []string{"below min"}},
		{name: "auto-discovery refused", env: full, opts: registry.BuildOptions{NodeGroupAutoDiscoverySpecs: []string{"x"}}, wantErr: []string{EnvSKSCluster}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(tc.opts, envFunc(tc.env))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatal("LoadConfig succeeded, want an error")
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), testSecret) {
					t.Fatalf("error leaks the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			if tc.endpoint != "" && cfg.APIEndpoint() != tc.endpoint {
				t.Fatalf("APIEndpoint = %q, want %q", cfg.APIEndpoint(), tc.endpoint)
			}
			if tc.check != nil {
				tc.check(t, cfg)
			}
		})
	}
}

func TestCredentialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile, secretFile := filepath.Join(dir, "api-key"), filepath.Join(dir, "api-secret")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretFile, []byte(testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(registry.BuildOptions{}, envFunc(map[string]string{EnvAPIKeyFile: keyFile, EnvAPISecretFile: secretFile, EnvZone: testZone}))
	if err != nil || cfg.APIKey != testKey || cfg.APISecret != testSecret {
		t.Fatalf("LoadConfig from files: %v (key set %v, secret set %v)", err, cfg.APIKey == testKey, cfg.APISecret == testSecret)
	}
}

// TestCredentialErrors: each credential problem is one line naming the
// provider, the variable and its *_FILE alternative; an unreadable file is
// reported once, as itself, not also as a missing variable.
func TestCredentialErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexistent")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"key file missing, secret unset", map[string]string{EnvAPIKeyFile: missing, EnvZone: testZone}, []string{
			"exoscale: EXOSCALE_API_KEY_FILE=" + missing + ": no such file or directory",
			"exoscale: EXOSCALE_API_SECRET is not set: set it, or EXOSCALE_API_SECRET_FILE to a file holding it",
		}},
		{"secret file missing", map[string]string{EnvAPIKey: testKey, EnvAPISecretFile: missing, EnvZone: testZone}, []string{
			"exoscale: EXOSCALE_API_SECRET_FILE=" + missing + ": no such file or directory",
		}},
		{"both files empty", map[string]string{EnvAPIKeyFile: empty, EnvAPISecretFile: empty, EnvZone: testZone}, []string{
			"exoscale: EXOSCALE_API_KEY_FILE=" + empty + ": the file is empty",
			"exoscale: EXOSCALE_API_SECRET_FILE=" + empty + ": the file is empty",
		}},
		{"nothing set", map[string]string{}, []string{
			"exoscale: EXOSCALE_API_KEY is not set: set it, or EXOSCALE_API_KEY_FILE to a file holding it",
			"exoscale: EXOSCALE_API_SECRET is not set: set it, or EXOSCALE_API_SECRET_FILE to a file holding it",
			"exoscale: EXOSCALE_ZONE is not set: give the zone of your cluster, e.g. ch-gva-2",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadConfig(registry.BuildOptions{}, envFunc(tc.env))
			if err == nil {
				t.Fatal("LoadConfig succeeded")
			}
			if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, tc.want) {
				t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestCloudConfigIgnoredOrRefused: the provider takes no file; an existing
// --cloud-config is ignored (and logged), a missing one is refused.
func TestCloudConfigIgnoredOrRefused(t *testing.T) {
	t.Parallel()
	env := envFunc(map[string]string{EnvAPIKey: testKey, EnvAPISecret: testSecret, EnvZone: testZone})
	existing := filepath.Join(t.TempDir(), "cloud-config")
	if err := os.WriteFile(existing, []byte("[Global]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(registry.BuildOptions{CloudConfig: existing}, env); err != nil {
		t.Fatalf("an existing --cloud-config is ignored, not refused: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nonexistent")
	_, err := LoadConfig(registry.BuildOptions{CloudConfig: missing}, env)
	if err == nil || !strings.HasPrefix(err.Error(), "exoscale: --cloud-config "+missing+": no such file or directory") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("missing --cloud-config: %v", err)
	}
}

func TestConfigRedaction(t *testing.T) {
	t.Parallel()
	cfg := Config{APIKey: testKey, APISecret: testSecret, Zone: "ch-gva-2", Environment: "api"}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(f, cfg)
		if strings.Contains(out, testSecret) || strings.Contains(out, testKey) {
			t.Fatalf("%s leaks a credential: %s", f, out)
		}
		if !strings.Contains(out, "[redacted]") || !strings.Contains(out, "ch-gva-2") {
			t.Fatalf("%s: %s", f, out)
		}
	}
	ptr := fmt.Sprintf("%+v", &cfg)
	if strings.Contains(ptr, testSecret) {
		t.Fatalf("pointer formatting leaks: %s", ptr)
	}
}

// TestUnlimitedMaxSizeErrorOnce: a malformed EXOSCALE_UNLIMITED_MAX_SIZE is
// one problem, named by its variable, not a second one about the value.
func TestUnlimitedMaxSizeErrorOnce(t *testing.T) {
	t.Parallel()
	env := map[string]string{EnvAPIKey: "EXOkey", EnvAPISecret: "secret", EnvZone: "ch-gva-2", EnvUnlimitedMaxSize: "lots"}
	_, err := LoadConfig(registry.BuildOptions{}, func(k string) string { return env[k] })
	if err == nil || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), EnvUnlimitedMaxSize+`="lots": want a positive integer`) {
		t.Fatalf("error = %v", err)
	}
}
