package examples

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// secretEnv is what each generate-secret.sh reads. The values are distinctive
// so the test can look for leaks.
var secretEnv = map[string]map[string]string{
	"vultr":      {"VULTR_API_KEY": "tok-VULTR-5ecret-9f3a"},
	"volcengine": {"VOLCENGINE_ACCESS_KEY": "AKLT-volc-5ecret-11aa", "VOLCENGINE_SECRET_KEY": "sk-volc-5ecret-22bb"},
	"exoscale":   {"EXOSCALE_API_KEY": "EXO-5ecret-33cc", "EXOSCALE_API_SECRET": "exo-5ecret-44dd"},
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

func TestGenerateSecretScripts(t *testing.T) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			ok := runGenerateSecret(t, p, secretEnv[p])
			if ok.code != 0 || ok.secret == nil {
				t.Fatalf("exit %d, output %q", ok.code, ok.output)
			}
			if ok.secret.Namespace != "kube-system" || ok.secret.Name != p+"-credentials" {
				t.Errorf("Secret %s/%s, want kube-system/%s-credentials", ok.secret.Namespace, ok.secret.Name, p)
			}
			if len(ok.secret.Data) != len(secretEnv[p]) {
				t.Errorf("Secret has keys %v for %d variables", keys(ok.secret.Data), len(secretEnv[p]))
			}
			for name, v := range secretEnv[p] {
				if strings.Contains(ok.output, v) {
					t.Errorf("the script printed the value of %s", name)
				}
				if strings.Contains(ok.args, v) {
					t.Errorf("the value of %s was on kubectl's command line", name)
				}
				var found bool
				for _, data := range ok.secret.Data {
					found = found || string(data) == v
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
				for _, v := range env {
					if strings.Contains(bad.output, v) {
						t.Errorf("without %s: the script printed another variable's value", missing)
					}
				}
			}
		})
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

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
