package examples

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// upstreamShape is what the in-tree provider's example install
// (kubernetes/autoscaler, cluster-autoscaler/cloudprovider/<p>/examples and
// README, CA 1.36.1) leaves in a cluster, as far as applying our example
// over it depends on it. These are facts about upstream, written down here,
// not read from our manifests.
type upstreamShape struct {
	namespace, deployment string
	// selector is the Deployment's spec.selector.matchLabels, which the API
	// server refuses to change.
	selector map[string]string
	// secret and secretKeys: the Secret upstream's example makes, and its
	// keys (sorted).
	secret     string
	secretKeys []string
	// secretData is an example of that Secret's content, in upstream's shape.
	secretData map[string]string
	// serviceAccount is the ServiceAccount upstream's Deployment runs as.
	serviceAccount string
	// command is upstream's CA container command, for the server-side dry run.
	command []string
}

var upstreamShapes = map[string]upstreamShape{
	"vultr": {
		namespace: "kube-system", deployment: "cluster-autoscaler",
		selector:   map[string]string{"app": "cluster-autoscaler"},
		secret:     "cluster-autoscaler-cloud-config",
		secretKeys: []string{"cloud-config"},
		secretData: map[string]string{
			"cloud-config": `{"cluster_id": "6b8b7c8e-7314-4d17-bb0c-fcc9777230fa", "token": "tok-VULTR-5ecret-9f3a"}`,
		},
		serviceAccount: "cluster-autoscaler",
		command:        []string{"./cluster-autoscaler", "--v=2", "--cloud-provider=vultr", "--cloud-config=/config/cloud-config"},
	},
	"volcengine": {
		namespace: "kube-system", deployment: "cluster-autoscaler",
		selector: map[string]string{"app": "cluster-autoscaler"},
		secret:   "cloud-config",
		// The example Secret has endpoint; the README's has not.
		secretKeys: []string{"access-key", "endpoint", "region-id", "secret-key"},
		secretData: map[string]string{
			"access-key": "AKLT-volc-5ecret-11aa", "secret-key": "sk-volc-5ecret-22bb",
			"region-id": "cn-shanghai", "endpoint": "open.volcengineapi.com",
		},
		serviceAccount: "cluster-autoscaler-account",
		command:        []string{"./cluster-autoscaler", "--alsologtostderr", "--cloud-config=/config/cloud-config", "--cloud-provider=volcengine", "--nodes=1:10:scg-example"},
	},
	"exoscale": {
		namespace: "kube-system", deployment: "cluster-autoscaler",
		selector:   map[string]string{"app": "cluster-autoscaler"},
		secret:     "exoscale-api-credentials",
		secretKeys: []string{"api-key", "api-secret", "api-zone"},
		secretData: map[string]string{
			"api-key": "EXO-5ecret-33cc", "api-secret": "exo-5ecret-44dd", "api-zone": "de-fra-1",
		},
		serviceAccount: "cluster-autoscaler",
		command:        []string{"/cluster-autoscaler", "--cloud-provider=exoscale", "--stderrthreshold=info"},
	},
}

// upstreamSecretOf returns upstream's Secret for p, with data changed by edit.
func upstreamSecretOf(p string, edit func(map[string]string)) *corev1.Secret {
	up := upstreamShapes[p]
	data := maps.Clone(up.secretData)
	if edit != nil {
		edit(data)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: up.secret, Namespace: up.namespace}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// caDeployment returns the example's Deployment that runs CA.
func caDeployment(t *testing.T, o *objects) *appsv1.Deployment {
	t.Helper()
	d, _ := findContainer(t, o, func(c corev1.Container) bool {
		return strings.HasPrefix(c.Image, "registry.k8s.io/autoscaling/cluster-autoscaler:")
	})
	return d
}

// TestExamplesApplyOverTheInTreeInstall: every kustomize example names CA's
// Deployment as upstream does and selects exactly upstream's labels, which
// is what the API server checks (spec.selector is immutable); every other
// selector pointing at CA's pods holds for any pod of that selector; and
// the provider reads upstream's Secret by name and only keys it has.
func TestExamplesApplyOverTheInTreeInstall(t *testing.T) {
	t.Parallel()
	for _, ex := range allExamples() {
		t.Run(ex.dir, func(t *testing.T) {
			t.Parallel()
			up := upstreamShapes[ex.provider]
			o := build(t, ex.dir)
			ca := caDeployment(t, o)
			if ca.Namespace != up.namespace || ca.Name != up.deployment {
				t.Errorf("CA's Deployment is %s/%s, upstream's %s/%s: apply would add a second CA", ca.Namespace, ca.Name, up.namespace, up.deployment)
			}
			// The immutable-field rule: equal, not merely overlapping.
			if ca.Spec.Selector == nil || len(ca.Spec.Selector.MatchExpressions) > 0 || !maps.Equal(ca.Spec.Selector.MatchLabels, up.selector) {
				t.Errorf("selector %v, upstream's %v: the API server refuses the change (field is immutable)", ca.Spec.Selector, up.selector)
			}
			for k, v := range up.selector {
				if ca.Spec.Template.Labels[k] != v {
					t.Errorf("pod label %s=%q, want %q (upstream's selector)", k, ca.Spec.Template.Labels[k], v)
				}
			}
			checkSelectorsFollow(t, o, ca)

			_, provC := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })
			prov, _ := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })
			used := map[string][]string{}
			for _, m := range provC.VolumeMounts {
				if v := volume(prov, m.Name); v != nil && v.Secret != nil && !strings.HasSuffix(v.Secret.SecretName, "-tls") {
					used[v.Secret.SecretName] = append(used[v.Secret.SecretName], "(all keys as files)")
					for _, it := range v.Secret.Items {
						used[v.Secret.SecretName] = append(used[v.Secret.SecretName], it.Key)
					}
				}
			}
			for _, e := range provC.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					r := e.ValueFrom.SecretKeyRef
					used[r.Name] = append(used[r.Name], r.Key)
				}
			}
			if len(used) != 1 || used[up.secret] == nil {
				t.Fatalf("the provider reads Secrets %v, want only upstream's %s", slices.Collect(maps.Keys(used)), up.secret)
			}
			for _, k := range used[up.secret] {
				if k != "(all keys as files)" && !slices.Contains(up.secretKeys, k) {
					t.Errorf("the provider reads key %s of %s, which upstream's Secret does not have", k, up.secret)
				}
			}
		})
	}
}

// checkSelectorsFollow: a Service, PodDisruptionBudget or NetworkPolicy peer
// that selects CA's pods uses only the Deployment's own selector labels, so
// it selects every pod the Deployment owns, upstream's included.
func checkSelectorsFollow(t *testing.T, o *objects, ca *appsv1.Deployment) {
	t.Helper()
	sel := ca.Spec.Selector.MatchLabels
	subset := func(what string, m map[string]string) {
		for k, v := range m {
			if sel[k] != v {
				t.Errorf("%s selects CA's pods by %s=%s, which is not in the Deployment's selector %v", what, k, v, sel)
			}
		}
	}
	pod := labelsOf(ca)
	for _, s := range o.services {
		if len(s.Spec.Selector) > 0 && labelsSubset(s.Spec.Selector, pod) {
			subset("Service "+s.Name, s.Spec.Selector)
		}
	}
	for _, p := range o.pdbs {
		if p.Spec.Selector != nil && labelsSubset(p.Spec.Selector.MatchLabels, pod) {
			subset("PodDisruptionBudget "+p.Name, p.Spec.Selector.MatchLabels)
		}
	}
	for _, n := range o.netpols {
		for _, in := range n.Spec.Ingress {
			for _, peer := range in.From {
				if peer.PodSelector != nil && len(peer.PodSelector.MatchLabels) > 0 && labelsSubset(peer.PodSelector.MatchLabels, pod) {
					subset("NetworkPolicy "+n.Name, peer.PodSelector.MatchLabels)
				}
			}
		}
	}
}

func labelsSubset(sel, set map[string]string) bool {
	for k, v := range sel {
		if set[k] != v {
			return false
		}
	}
	return true
}

// TestInTreeSecretAsItIs: the real binary accepts the sidecar's arguments and
// files with upstream's Secret exactly as upstream's example makes it, and
// the zone, region and cluster id it uses are the Secret's: with that value
// taken out of the Secret, the same pod is refused (no ConfigMap fills it in).
func TestInTreeSecretAsItIs(t *testing.T) {
	t.Parallel()
	bin := providerBinary(t)
	place := map[string]struct {
		drop func(map[string]string)
		want string
	}{
		"vultr": {func(d map[string]string) {
			d["cloud-config"] = `{"token": "tok-VULTR-5ecret-9f3a"}`
		}, "cluster_id is required"},
		"volcengine": {func(d map[string]string) { delete(d, "region-id") }, "region is not set"},
		"exoscale":   {func(d map[string]string) { d["api-zone"] = "not-a-zone" }, `EXOSCALE_ZONE="not-a-zone"`},
	}
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			o := build(t, p)
			d, c := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })
			secrets := map[string]*corev1.Secret{upstreamShapes[p].secret: upstreamSecretOf(p, nil)}
			code, stdout, stderr := checkConfig(t, bin, o, secrets, d, c)
			if code != 0 || !strings.Contains(stdout, "configuration OK for "+p) {
				t.Fatalf("with upstream's Secret: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			secrets = map[string]*corev1.Secret{upstreamShapes[p].secret: upstreamSecretOf(p, place[p].drop)}
			code, _, stderr = checkConfig(t, bin, o, secrets, d, c)
			if code != 2 || !strings.Contains(stderr, place[p].want) {
				t.Errorf("without the Secret's location: exit %d, stderr %q; want exit 2 and %q", code, stderr, place[p].want)
			}
			for _, v := range credentials(p) {
				if strings.Contains(stderr, v) {
					t.Error("an error message contains a credential")
				}
			}
		})
	}
	t.Run("volcengine README Secret without endpoint", func(t *testing.T) {
		t.Parallel()
		o := build(t, "volcengine")
		d, c := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })
		s := upstreamSecretOf("volcengine", func(d map[string]string) { delete(d, "endpoint") })
		code, stdout, stderr := checkConfig(t, bin, o, map[string]*corev1.Secret{s.Name: s}, d, c)
		if code != 0 || !strings.Contains(stdout, "configuration OK") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
}

// TestInTreeRegionOverride: a region-id written into the provider's INI
// (the documented override) wins over the Secret's region-id.
func TestInTreeRegionOverride(t *testing.T) {
	t.Parallel()
	bin := providerBinary(t)
	o := build(t, "volcengine")
	d, c := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })
	cm := o.configMaps["volcengine-provider-config"]
	if cm == nil || strings.Contains(activeINI(cm.Data["cloud-config.ini"]), "region-id") {
		t.Fatal("the example's INI sets region-id, so the Secret's is not used")
	}
	s := upstreamSecretOf("volcengine", func(d map[string]string) { delete(d, "region-id") })
	secrets := map[string]*corev1.Secret{s.Name: s}
	cm.Data["cloud-config.ini"] = strings.Replace(cm.Data["cloud-config.ini"], "[Global]\n", "[Global]\nregion-id = cn-guangzhou\n", 1)
	code, stdout, stderr := checkConfig(t, bin, o, secrets, d, c)
	if code != 0 || !strings.Contains(stdout, "configuration OK") {
		t.Fatalf("region-id in the INI, none in the Secret: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// activeINI drops comment lines.
func activeINI(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, ";") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// dryRunEnv opts in to the server-side dry run: it creates (and deletes) a
// namespace holding upstream's Deployment on the cluster KUBECONFIG names.
const dryRunEnv = "CAP_MIGRATION_DRY_RUN"

// TestServerSideDryRunOverInTree asks a real API server: with upstream's
// Deployment in place, our rendered Deployment applies over it
// (kubectl apply --server-side --dry-run=server), and the one with the
// selector our earlier examples had is refused as immutable, which shows the
// server checks what the offline test above asserts.
func TestServerSideDryRunOverInTree(t *testing.T) {
	t.Parallel()
	if os.Getenv(dryRunEnv) != "1" {
		t.Skipf("not applicable: no API server (hack/apiserver/run.sh starts one; or set KUBECONFIG to a reachable cluster, %s=1, and put kubectl on PATH)", dryRunEnv)
	}
	// Asked for, so a missing server fails rather than skips.
	kubectl, err := exec.LookPath("kubectl")
	if err != nil || os.Getenv("KUBECONFIG") == "" {
		t.Fatalf("%s=1 but kubectl is not on PATH or KUBECONFIG is empty", dryRunEnv)
	}
	run := func(stdin []byte, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl, args...)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(nil, "get", "--raw", "/readyz"); err != nil {
		t.Fatalf("%s=1 but the API server KUBECONFIG names is not ready: %v: %s", dryRunEnv, err, strings.TrimSpace(out))
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	ns := "cap-migration-" + hex.EncodeToString(suffix)
	if out, err := run(nil, "create", "namespace", ns); err != nil {
		t.Fatalf("create namespace %s: %v: %s", ns, err, out)
	}
	t.Cleanup(func() { _, _ = run(nil, "delete", "namespace", ns, "--wait=false") })

	for _, p := range providers {
		up := upstreamShapes[p]
		zero := int32(0)
		old := &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: up.deployment + "-" + p, Namespace: ns, Labels: up.selector},
			Spec: appsv1.DeploymentSpec{
				Replicas: &zero,
				Selector: &metav1.LabelSelector{MatchLabels: up.selector},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: up.selector},
					Spec: corev1.PodSpec{ServiceAccountName: up.serviceAccount, Containers: []corev1.Container{{
						Name: "cluster-autoscaler", Image: pinnedCAImage, Command: up.command,
					}}},
				},
			},
		}
		b, err := yaml.Marshal(old)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := run(b, "create", "-f", "-"); err != nil {
			t.Fatalf("%s: create upstream's Deployment: %v: %s", p, err, out)
		}
		ours := caDeployment(t, build(t, p)).DeepCopy()
		ours.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
		ours.Name, ours.Namespace = old.Name, ns
		ours.Spec.Replicas = &zero
		b, err = yaml.Marshal(ours)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := run(b, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-"); err != nil {
			t.Errorf("%s: our Deployment over upstream's: %v: %s", p, err, out)
		}
		earlier := ours.DeepCopy()
		earlier.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "cluster-autoscaler"}}
		b, err = yaml.Marshal(earlier)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := run(b, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-"); err == nil || !strings.Contains(out, "field is immutable") {
			t.Errorf("%s: the earlier selector over upstream's: %v: %s; want field is immutable", p, err, out)
		}
	}
}

// TestMigrationDocsGiveTheShape: each provider page's migration section
// names upstream's Secret and keys and links the cut-over in deploy.md and
// the permissions section; deploy.md's cut-over uses the commands that
// find upstream's Deployment and pods by their name and selector.
func TestMigrationDocsGiveTheShape(t *testing.T) {
	t.Parallel()
	read := func(t *testing.T, page, heading string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		i := strings.Index(doc, "\n"+heading+"\n")
		if i < 0 {
			t.Fatalf("%s: no %q section", page, heading)
		}
		sec := doc[i+1:]
		if j := strings.Index(sec[3:], "\n## "); j >= 0 {
			sec = sec[:j+3]
		}
		return sec
	}
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			sec := read(t, filepath.Join("providers", p+".md"), "## Migrating from the in-tree provider")
			up := upstreamShapes[p]
			for _, want := range []string{"`" + up.secret + "`", "`app: cluster-autoscaler`", "preflight",
				"(../deploy.md#migrating-from-the-in-tree-provider)", "(#permissions)"} {
				if !strings.Contains(sec, want) {
					t.Errorf("migration section lacks %q", want)
				}
			}
			for _, k := range up.secretKeys {
				if !strings.Contains(sec, "`"+k+"`") {
					t.Errorf("migration section does not name key %s", k)
				}
			}
		})
	}
	t.Run("deploy.md", func(t *testing.T) {
		t.Parallel()
		sec := read(t, "deploy.md", "## Migrating from the in-tree provider")
		for _, want := range []string{
			"kubectl -n kube-system get deployment cluster-autoscaler -o yaml",
			"kubectl apply -k examples/<provider>/",
			"kubectl -n kube-system rollout status deployment/cluster-autoscaler",
			"kubectl -n kube-system logs -l app=cluster-autoscaler",
			"inspect",
			"kubectl replace -f",
		} {
			if !strings.Contains(sec, want) {
				t.Errorf("cut-over lacks %q", want)
			}
		}
	})
}
