package examples

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"maps"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// secretEnv is what each generate-secret.sh reads: the in-tree providers'
// variable names where they have them. The values are distinctive so the
// test can look for leaks.
var secretEnv = map[string]map[string]string{
	"vultr":      {"VULTR_API_KEY": "tok-VULTR-5ecret-9f3a", "VULTR_CLUSTER_ID": "6b8b7c8e-7314-4d17-bb0c-fcc9777230fa"},
	"volcengine": {"ACCESS_KEY": "AKLT-volc-5ecret-11aa", "SECRET_KEY": "sk-volc-5ecret-22bb", "REGION_ID": "cn-shanghai"},
	"exoscale":   {"EXOSCALE_API_KEY": "EXO-5ecret-33cc", "EXOSCALE_API_SECRET": "exo-5ecret-44dd", "EXOSCALE_ZONE": "de-fra-1"},
}

// notSecret are the variables of secretEnv that name a place, not a
// credential: error messages may quote them.
var notSecret = map[string]bool{"VULTR_CLUSTER_ID": true, "REGION_ID": true, "EXOSCALE_ZONE": true}

// credentials returns the secret values of secretEnv[p].
func credentials(p string) []string {
	var out []string
	for k, v := range secretEnv[p] {
		if !notSecret[k] {
			out = append(out, v)
		}
	}
	return out
}

// fakeKubectl stands in for kubectl: "create secret generic" prints the
// Secret it was asked for (reading --from-file paths like kubectl does) and
// "apply -f -" stores what it is given. Its arguments are recorded so the
// test can prove no secret value was passed on a command line.
const fakeKubectl = `#!/usr/bin/env bash
set -euo pipefail
printf '%s\n' "$@" >> "$KUBECTL_ARGS"
case "$1" in
create)
  name="$4"; ns=default; data=""
  shift 4
  while [ $# -gt 0 ]; do
    case "$1" in
      --namespace|-n) ns="$2"; shift 2 ;;
      --from-file=*)
        spec="${1#--from-file=}"
        data="${data}  ${spec%%=*}: $(base64 < "${spec#*=}" | tr -d '\n')"$'\n'
        shift ;;
      *) shift ;;
    esac
  done
  printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\ntype: Opaque\ndata:\n%s' "$name" "$ns" "$data"
  ;;
apply)
  cat > "$KUBECTL_CAPTURE"
  echo "secret configured"
  ;;
*) echo "fake kubectl: unexpected $1" >&2; exit 3 ;;
esac
`

type scriptRun struct {
	code           int
	output         string
	args           string
	secret         *corev1.Secret
	secretDocument string
}

func runGenerateSecret(t *testing.T, provider string, env map[string]string) scriptRun {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found; generate-secret.sh needs it")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(fakeKubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	capture, argsFile := filepath.Join(dir, "capture.yaml"), filepath.Join(dir, "args")
	cmd := exec.Command(bash, filepath.Join(provider, "generate-secret.sh"))
	cmd.Env = []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "KUBECTL_CAPTURE=" + capture, "KUBECTL_ARGS=" + argsFile}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	run := scriptRun{output: string(out)}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		run.code = ee.ExitCode()
	}
	if b, err := os.ReadFile(argsFile); err == nil {
		run.args = string(b)
	}
	if b, err := os.ReadFile(capture); err == nil {
		run.secretDocument = string(b)
		o := newObjects()
		if err := decodeInto(o, b); err != nil {
			t.Fatalf("generate-secret.sh applied something that is not a Secret: %v", err)
		}
		for _, s := range o.secrets {
			run.secret = s
		}
	}
	return run
}

// TestGenerateSecretScripts: each script makes the in-tree provider's Secret
// (name and keys from upstreamShapes) holding every value it was given, with
// no value on kubectl's command line or in its output, and refuses to run
// without one of them, naming it.
func TestGenerateSecretScripts(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			up := upstreamShapes[p]
			ok := runGenerateSecret(t, p, secretEnv[p])
			if ok.code != 0 || ok.secret == nil {
				t.Fatalf("exit %d, output %q", ok.code, ok.output)
			}
			if ok.secret.Namespace != up.namespace || ok.secret.Name != up.secret {
				t.Errorf("Secret %s/%s, want the in-tree %s/%s", ok.secret.Namespace, ok.secret.Name, up.namespace, up.secret)
			}
			if got := keys(ok.secret.Data); !slices.Equal(got, up.secretKeys) {
				t.Errorf("Secret keys %v, want the in-tree %v", got, up.secretKeys)
			}
			for name, v := range secretEnv[p] {
				if !notSecret[name] && strings.Contains(ok.output, v) {
					t.Errorf("the script printed the value of %s", name)
				}
				if strings.Contains(ok.args, v) {
					t.Errorf("the value of %s was on kubectl's command line", name)
				}
				var found bool
				for _, data := range ok.secret.Data {
					found = found || string(data) == v || (p == "vultr" && strings.Contains(string(data), `"`+v+`"`))
				}
				if !found {
					t.Errorf("the value of %s is not in the Secret", name)
				}
			}

			for missing := range secretEnv[p] {
				env := map[string]string{}
				for k, v := range secretEnv[p] {
					if k != missing {
						env[k] = v
					}
				}
				bad := runGenerateSecret(t, p, env)
				if bad.code == 0 || bad.secretDocument != "" {
					t.Errorf("without %s: exit %d and applied %q; want a refusal", missing, bad.code, bad.secretDocument)
				}
				if !strings.Contains(bad.output, missing) {
					t.Errorf("without %s: output %q does not name it", missing, bad.output)
				}
				for k, v := range env {
					if !notSecret[k] && strings.Contains(bad.output, v) {
						t.Errorf("without %s: the script printed another variable's value", missing)
					}
				}
			}
		})
	}
}

// TestGenerateSecretAliases: the variable names our earlier scripts read
// still work where the in-tree name differs, and the in-tree name wins
// when both are set.
func TestGenerateSecretAliases(t *testing.T) {
	t.Parallel()
	env := map[string]string{"VOLCENGINE_ACCESS_KEY": "AKLT-old-name", "VOLCENGINE_SECRET_KEY": "sk-old-name", "REGION_ID": "cn-beijing"}
	run := runGenerateSecret(t, "volcengine", env)
	if run.code != 0 || run.secret == nil {
		t.Fatalf("with the older names: exit %d, output %q", run.code, run.output)
	}
	if got := string(run.secret.Data["access-key"]); got != "AKLT-old-name" {
		t.Errorf("access-key from VOLCENGINE_ACCESS_KEY: %q", got)
	}
	if got := string(run.secret.Data["endpoint"]); got != "open.volcengineapi.com" {
		t.Errorf("endpoint without ENDPOINT: %q, want the default the in-tree Deployment needs", got)
	}
	env["ACCESS_KEY"] = "AKLT-new-name"
	env["ENDPOINT"] = "open.ap-southeast-1.byteplusapi.com"
	run = runGenerateSecret(t, "volcengine", env)
	if got := string(run.secret.Data["access-key"]); got != "AKLT-new-name" {
		t.Errorf("access-key with both names set: %q, want ACCESS_KEY's", got)
	}
	if got := string(run.secret.Data["endpoint"]); got != env["ENDPOINT"] {
		t.Errorf("endpoint: %q, want ENDPOINT's", got)
	}
	delete(env, "ACCESS_KEY")
	delete(env, "VOLCENGINE_ACCESS_KEY")
	run = runGenerateSecret(t, "volcengine", env)
	if run.code == 0 || !strings.Contains(run.output, "ACCESS_KEY (or VOLCENGINE_ACCESS_KEY)") {
		t.Errorf("without either name: exit %d, output %q; want both names", run.code, run.output)
	}
}

// TestGenerateSecretVultrJSON: the Vultr script writes upstream's JSON, and
// a value that would break it is escaped or refused.
func TestGenerateSecretVultrJSON(t *testing.T) {
	t.Parallel()
	run := runGenerateSecret(t, "vultr", map[string]string{"VULTR_API_KEY": `a"b\c`, "VULTR_CLUSTER_ID": "c-1"})
	if run.code != 0 || run.secret == nil {
		t.Fatalf("exit %d, output %q", run.code, run.output)
	}
	var cfg struct {
		ClusterID string `json:"cluster_id"`
		Token     string `json:"token"`
	}
	if err := json.Unmarshal(run.secret.Data["cloud-config"], &cfg); err != nil || cfg.ClusterID != "c-1" || cfg.Token != `a"b\c` {
		t.Errorf("cloud-config decodes to %+v (%v)", cfg, err)
	}
	bad := runGenerateSecret(t, "vultr", map[string]string{"VULTR_API_KEY": "tok-first\nsecond-line", "VULTR_CLUSTER_ID": "c-1"})
	if bad.code != 2 || bad.secretDocument != "" || !strings.Contains(bad.output, "VULTR_API_KEY") || strings.Contains(bad.output, "tok-first") {
		t.Errorf("a key with a newline: exit %d, output %q, applied %q; want exit 2 naming VULTR_API_KEY without its value", bad.code, bad.output, bad.secretDocument)
	}
}

// generatedSecrets returns the Secrets an operator creates for ex: the one
// generate-secret.sh makes, and for the standalone variant the ones
// cert-manager issues (real certificates, so the provider's TLS loading runs).
func generatedSecrets(t *testing.T, ex example) map[string]*corev1.Secret {
	t.Helper()
	run := runGenerateSecret(t, ex.provider, secretEnv[ex.provider])
	if run.secret == nil {
		t.Fatalf("generate-secret.sh made no Secret: %q", run.output)
	}
	out := map[string]*corev1.Secret{run.secret.Name: run.secret}
	if ex.standalone {
		o := build(t, ex.dir)
		for name, s := range issueCertificates(t, o) {
			out[name] = s
		}
	}
	return out
}

// issueCertificates plays cert-manager: one CA signs every non-CA
// Certificate; each Secret gets tls.crt, tls.key and ca.crt.
func issueCertificates(t *testing.T, o *objects) map[string]*corev1.Secret {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	out := map[string]*corev1.Secret{}
	for i, c := range o.certificates {
		if c.Spec.IsCA {
			out[c.Spec.SecretName] = tlsSecret(c.Spec.SecretName, caPEM, caKey, caPEM)
			continue
		}
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: c.Spec.CommonName},
			DNSNames: c.Spec.DNSNames, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature,
		}
		for _, u := range c.Spec.Usages {
			switch u {
			case "server auth":
				tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
			case "client auth":
				tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
			}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		out[c.Spec.SecretName] = tlsSecret(c.Spec.SecretName, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key, caPEM)
	}
	return out
}

func tlsSecret(name string, certPEM []byte, key *ecdsa.PrivateKey, caPEM []byte) *corev1.Secret {
	der, _ := x509.MarshalECPrivateKey(key)
	return &corev1.Secret{
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			"tls.crt": certPEM,
			"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
			"ca.crt":  caPEM,
		},
	}
}

// keys returns m's keys, sorted.
func keys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
