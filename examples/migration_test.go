package examples

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// upstreamLayout is how the in-tree provider's example manifests
// (kubernetes/autoscaler, cluster-autoscaler/cloudprovider/<p>/examples)
// hand credentials to CA, and the change docs/providers/<p>.md documents to
// use that Secret, unchanged, with our example.
type upstreamLayout struct {
	// secret is upstream's Secret, with the keys its example sets.
	secret *corev1.Secret
	// credentialsSecret is the Secret our credentials volume names after the
	// change.
	credentialsSecret string
	// cloudConfig is the provider's --cloud-config after the change ("" keeps it).
	cloudConfig string
	// docLines must appear in docs/providers/<p>.md: the change, as written there.
	docLines []string
}

func upstreamSecret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

var upstreamLayouts = map[string]upstreamLayout{
	"exoscale": {
		secret: upstreamSecret("exoscale-api-credentials", map[string]string{
			"api-key": "EXO-5ecret-33cc", "api-secret": "exo-5ecret-44dd", "api-zone": "ch-gva-2"}),
		credentialsSecret: "exoscale-api-credentials",
		docLines:          []string{"secretName: exoscale-api-credentials", "credentialsSecret=exoscale-api-credentials"},
	},
	"volcengine": {
		secret: upstreamSecret("cloud-config", map[string]string{
			"access-key": "AKLT-volc-5ecret-11aa", "secret-key": "sk-volc-5ecret-22bb", "region-id": "cn-beijing", "endpoint": "open.volcengineapi.com"}),
		credentialsSecret: "cloud-config",
		docLines:          []string{"secretName: cloud-config", "credentialsSecret=cloud-config"},
	},
	"vultr": {
		secret: upstreamSecret("cluster-autoscaler-cloud-config", map[string]string{
			"cloud-config": `{"cluster_id": "6b8b7c8e-7314-4d17-bb0c-fcc9777230fa", "token": "tok-VULTR-5ecret-9f3a"}`}),
		credentialsSecret: "cluster-autoscaler-cloud-config",
		cloudConfig:       "/etc/vultr/credentials/cloud-config",
		docLines:          []string{"secretName: cluster-autoscaler-cloud-config", "--cloud-config=/etc/vultr/credentials/cloud-config"},
	},
}

// TestUpstreamSecretsWithTheDocumentedChange: an operator moving from the
// in-tree provider keeps the Secret upstream's example made; with the change
// docs/providers/<p>.md gives (the credentials volume names that Secret, and
// for Vultr --cloud-config its file), the real binary accepts the sidecar's
// arguments and files. The same example without the change fails, so the
// change is what makes it work.
func TestUpstreamSecretsWithTheDocumentedChange(t *testing.T) {
	bin := providerBinary(t)
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			up := upstreamLayouts[p]
			doc, err := os.ReadFile(filepath.Join("..", "docs", "providers", p+".md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range up.docLines {
				if !strings.Contains(string(doc), line) {
					t.Errorf("docs/providers/%s.md does not give the change %q", p, line)
				}
			}
			o := build(t, p)
			secrets := map[string]*corev1.Secret{up.secret.Name: up.secret}
			d, c := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })

			// Unchanged, our example does not find upstream's Secret.
			if code, _, _ := checkConfigTolerant(t, bin, o, secrets, d, c); code == 0 {
				t.Fatal("the example accepts upstream's Secret without the change; the migration table is wrong")
			}

			v := volume(d, "credentials")
			if v == nil || v.Secret == nil {
				t.Fatal("no credentials Secret volume")
			}
			v.Secret.SecretName = up.credentialsSecret
			if up.cloudConfig != "" {
				c.Args = slices.Clone(c.Args)
				for i, a := range c.Args {
					if strings.HasPrefix(a, "--cloud-config=") {
						c.Args[i] = "--cloud-config=" + up.cloudConfig
					}
				}
			}
			code, stdout, stderr := checkConfig(t, bin, o, secrets, d, c)
			if code != 0 || !strings.Contains(stdout, "configuration OK for "+p) {
				t.Fatalf("with upstream's Secret and the documented change: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}

// checkConfigTolerant is checkConfig for a pod whose Secret volume names a
// Secret that does not exist: the kubelet would not start it, which is a
// failure as much as the binary's refusal.
func checkConfigTolerant(t *testing.T, bin string, o *objects, secrets map[string]*corev1.Secret, d0 *appsv1.Deployment, c corev1.Container) (int, string, string) {
	t.Helper()
	if v := volume(d0, "credentials"); v != nil && v.Secret != nil && secrets[v.Secret.SecretName] == nil {
		return 1, "", "Secret " + v.Secret.SecretName + " does not exist"
	}
	return checkConfig(t, bin, o, secrets, d0, c)
}
