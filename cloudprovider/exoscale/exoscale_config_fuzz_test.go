package exoscale

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// Planted as the key pair (in the environment or in the key files); never to
// come back in errors or printed configs.
const (
	fuzzAPIKey    = "EXOFUZZkey0123456789abcdef"
	fuzzAPISecret = "FUZZexoSecret9876543210zyxw"
)

// FuzzLoadConfig feeds arbitrary environment values and --nodes specs
// around a known key pair, given directly or through files.
func FuzzLoadConfig(f *testing.F) {
	f.Add("ch-gva-2", "", "", "demo", "", "", "1:3:pool", false)
	f.Add("nowhere", "api", "ftp://x", "", "0", "-1s", "5:2:p", true)
	f.Add("de-fra-1", "Bad Env", "http://127.0.0.1:1/v2", "c", "abc", "soon", "", false)
	f.Add("", "", "", "", "", "", "x", true)
	f.Fuzz(func(t *testing.T, zone, environment, endpoint, cluster, maxSize, interval, nodes string, viaFiles bool) {
		for _, s := range []string{zone, environment, endpoint, cluster, maxSize, interval, nodes} {
			if strings.Contains(s, "FUZZ") {
				return
			}
		}
		env := map[string]string{
			EnvZone: zone, EnvAPIEnvironment: environment, EnvAPIEndpoint: endpoint, EnvSKSCluster: cluster,
			EnvUnlimitedMaxSize: maxSize, EnvRefreshInterval: interval,
		}
		if viaFiles {
			dir := t.TempDir()
			for name, v := range map[string]string{EnvAPIKeyFile: fuzzAPIKey, EnvAPISecretFile: fuzzAPISecret} {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				env[name] = p
			}
		} else {
			env[EnvAPIKey], env[EnvAPISecret] = fuzzAPIKey, fuzzAPISecret
		}
		opts := registry.BuildOptions{}
		if nodes != "" {
			opts.NodeGroupSpecs = []string{nodes}
		}
		cfg, err := LoadConfig(opts, func(k string) string { return env[k] })
		if err != nil {
			checkNoSecrets(t, "LoadConfig error", err.Error())
			return
		}
		checkNoSecrets(t, "String", cfg.String())
		checkNoSecrets(t, "fmt", fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg))
		if cfg.APIKey != fuzzAPIKey || cfg.APISecret != fuzzAPISecret {
			t.Fatalf("key pair not loaded (via files: %v)", viaFiles)
		}
	})
}

func checkNoSecrets(t *testing.T, where, s string) {
	t.Helper()
	for _, secret := range []string{fuzzAPIKey, fuzzAPISecret, base64.StdEncoding.EncodeToString([]byte(fuzzAPISecret))} {
		if strings.Contains(s, secret) {
			t.Fatalf("%s leaks a credential: %s", where, s)
		}
	}
}
