package volcengine

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Planted in every input; never to come back in errors or printed configs.
const (
	fuzzAccessKey = "AKLTFUZZaccess1234567890"
	fuzzSecretKey = "FUZZsecret0987654321zyx"
)

// FuzzLoadConfig builds INI cloud configs around known keys from fuzzed
// fields, a fuzzed quoting of the keys and fuzzed extra lines that may break
// the syntax, and checks the keys never come back in errors or printouts.
func FuzzLoadConfig(f *testing.F) {
	f.Add("cn-beijing", "open.volcengineapi.com", "https", uint8(0), "")
	f.Add("", "", "gopher", uint8(1), "unknown-key = 1")
	f.Add("cn-beijing", "http://127.0.0.1:1", "http", uint8(2), "[Other]\nx = y")
	f.Add("r", "e", "s", uint8(3), "[Global")
	f.Add("r", "e", "s", uint8(4), "access-key = again")
	f.Fuzz(func(t *testing.T, region, endpoint, scheme string, quoting uint8, extra string) {
		for _, s := range []string{region, endpoint, scheme, extra} {
			if strings.Contains(s, "FUZZ") || strings.Contains(s, "AKLT") {
				return
			}
		}
		q := map[uint8]string{0: "%s", 1: `"%s"`, 2: `"%s`, 3: "%s \\", 4: `"%s\"`}[quoting%5]
		data := fmt.Sprintf("[Global]\nregion-id = %s\naccess-key = %s\nsecret-key = %s\nendpoint = %s\nscheme = %s\n%s\n",
			region, fmt.Sprintf(q, fuzzAccessKey), fmt.Sprintf(q, fuzzSecretKey), endpoint, scheme, extra)
		path := filepath.Join(t.TempDir(), "cloud.ini")
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(path, func(string) string { return "" })
		if err != nil {
			checkNoKeys(t, "LoadConfig error", err.Error())
			return
		}
		checkNoKeys(t, "String", cfg.String())
		checkNoKeys(t, "fmt", fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg))
	})
}

// FuzzParseDiscoverySpecs checks the auto-discovery parser: accepted specs
// have non-empty keys, and errors name the flag.
func FuzzParseDiscoverySpecs(f *testing.F) {
	for _, s := range []string{"asg:tag=k8s.io/cluster-autoscaler/enabled=true", "asg:tag=a,b=c", "asg:tag=", "asg:tag=a,a", "mig:tag=x", "asg:tag=a=b=c", "asg:tag= , "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		sels, err := parseDiscoverySpecs([]string{spec})
		if err != nil {
			if !strings.Contains(err.Error(), "--node-group-auto-discovery") {
				t.Fatalf("error does not name the flag: %v", err)
			}
			return
		}
		if len(sels) != 1 || len(sels[0].tags) == 0 {
			t.Fatalf("%q accepted as %+v", spec, sels)
		}
		for _, m := range sels[0].tags {
			if m.key == "" {
				t.Fatalf("%q accepted with an empty key", spec)
			}
		}
		// A selector matches the tags it names.
		tags := map[string]string{}
		for _, m := range sels[0].tags {
			tags[m.key] = m.value
		}
		if !sels[0].matches(tags) {
			t.Fatalf("%q does not match its own tags %v", spec, tags)
		}
	})
}

func checkNoKeys(t *testing.T, where, s string) {
	t.Helper()
	for _, secret := range []string{fuzzAccessKey, fuzzSecretKey, base64.StdEncoding.EncodeToString([]byte(fuzzSecretKey))} {
		if strings.Contains(s, secret) {
			t.Fatalf("%s leaks a key: %s", where, s)
		}
	}
}
