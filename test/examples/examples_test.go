package examples

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// pinnedCAImage is the upstream Cluster Autoscaler release every example
// runs; docs/deploy.md names the same one.
const pinnedCAImage = "registry.k8s.io/autoscaling/cluster-autoscaler:v1.36.0"

// providerContainer is the name of our container in every example.
const providerContainer = "provider"

// saTokenPath is where client-go looks for the in-cluster token.
const saTokenPath = "/var/run/secrets/kubernetes.io/serviceaccount"

var providers = []string{"vultr", "volcengine", "exoscale"}

type example struct {
	dir, provider string
	standalone    bool
}

func allExamples() []example {
	var out []example
	for _, p := range providers {
		out = append(out, example{dir: p, provider: p}, example{dir: "standalone/" + p, provider: p, standalone: true})
	}
	return out
}

// TestEveryManifestDecodesStrictly decodes each YAML file under examples/
// into typed objects with unknown fields refused, and insists that every file
// is used by some kustomization (no stale manifests).
func TestEveryManifestDecodesStrictly(t *testing.T) {
	var files []string
	used := map[string]bool{}
	patches := map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == "helm" {
				// Helm values, not manifests: helm_test.go reads them.
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext == ".yaml" || ext == ".yml" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var k types.Kustomization
		if err := yaml.UnmarshalStrict(data, &k); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		dir := filepath.Dir(f)
		for _, r := range k.Resources {
			used[filepath.Join(dir, r)] = true
		}
		for _, p := range k.Patches {
			used[filepath.Join(dir, p.Path)] = true
			patches[filepath.Join(dir, p.Path)] = true
		}
	}
	if len(files) < 20 {
		t.Fatalf("found only %d YAML files; is the test running in examples/?", len(files))
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			if filepath.Base(f) == "kustomization.yaml" {
				return
			}
			if !used[f] {
				t.Fatalf("%s is listed by no kustomization.yaml", f)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if patches[f] {
				// Patches hold $patch directives and nulls, so they are
				// checked in the built output (TestKustomizeBuildAndCrossReferences).
				var v map[string]any
				if err := yaml.Unmarshal(data, &v); err != nil {
					t.Fatalf("patch %s: %v", f, err)
				}
				return
			}
			if err := decodeInto(newObjects(), data); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		})
	}
}

func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	cases := []struct{ name, doc string }{
		{"typo in a Deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 1\n"},
		{"typo in a Certificate", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: x}\nspec: {secretName: s, dnsName: [a], issuerRef: {name: i}}\n"},
		{"unknown kind", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := decodeInto(newObjects(), []byte(tc.doc)); err == nil {
				t.Fatal("decoded without error")
			}
		})
	}
}

// build runs kustomize in-process on dir and decodes the output strictly.
func build(t *testing.T, dir string) *objects {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	o := newObjects()
	if err := decodeInto(o, out); err != nil {
		t.Fatalf("kustomize build %s output: %v", dir, err)
	}
	return o
}

func TestKustomizeBuildAndCrossReferences(t *testing.T) {
	for _, ex := range allExamples() {
		t.Run(ex.dir, func(t *testing.T) {
			o := build(t, ex.dir)
			secrets := generatedSecrets(t, ex)
			checkNamespaces(t, o)
			checkRBAC(t, o)
			ca, caC := findContainer(t, o, func(c corev1.Container) bool {
				return strings.HasPrefix(c.Image, "registry.k8s.io/autoscaling/cluster-autoscaler:")
			})
			prov, provC := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })
			for _, d := range o.deployments {
				checkPod(t, o, secrets, d)
			}
			if caC.Image != pinnedCAImage {
				t.Errorf("CA image %s, want the pinned %s", caC.Image, pinnedCAImage)
			}
			if want := "ghcr.io/ca-providers/cluster-autoscaler-provider:"; !strings.HasPrefix(provC.Image, want) {
				t.Errorf("provider image %q: the kustomization's images: entry did not apply", provC.Image)
			}
			if got := flagValue(provC.Args, "--cloud-provider"); got != ex.provider {
				t.Errorf("provider --cloud-provider=%q, want %q", got, ex.provider)
			}
			checkExecProbe(t, provC, provC.ReadinessProbe, "readiness")
			checkPDBs(t, o)
			checkMetricsServices(t, o, ca, caC, prov, provC, true)
			checkServiceTargets(t, o)
			if ca.Spec.Template.Spec.ServiceAccountName == "" || o.serviceAccounts[ca.Spec.Template.Spec.ServiceAccountName] == nil {
				t.Errorf("CA's ServiceAccount %q is not in the example", ca.Spec.Template.Spec.ServiceAccountName)
			}
			cfg := caCloudConfig(t, o, ca, caC)
			checkMetricsAnnotations(t, prov, provC)
			if !ex.standalone {
				if prov != ca {
					t.Fatal("sidecar example: provider and CA are not in the same pod")
				}
				checkNativeSidecar(t, ca.Spec.Template.Spec, provC)
				if got := flagValue(provC.Args, "--address"); got != cfg.Address {
					t.Errorf("CA cloud-config address %q != sidecar --address %q", cfg.Address, got)
				}
				if cfg.Cert != "" {
					t.Errorf("sidecar over loopback should be plaintext; cert=%q", cfg.Cert)
				}
				return
			}
			if prov == ca {
				t.Fatal("standalone example: provider still runs in CA's pod")
			}
			for _, v := range ca.Spec.Template.Spec.Volumes {
				if v.Secret != nil && v.Secret.SecretName == upstreamShapes[ex.provider].secret {
					t.Errorf("standalone example: CA's pod still mounts the cloud credentials (volume %s)", v.Name)
				}
			}
			checkStandaloneLink(t, o, cfg, ca, caC, prov, provC)
		})
	}
}

func checkNamespaces(t *testing.T, o *objects) {
	t.Helper()
	for _, d := range o.deployments {
		if d.Namespace != "kube-system" {
			t.Errorf("Deployment %s in namespace %q", d.Name, d.Namespace)
		}
	}
}

// checkRBAC: bindings point at roles and ServiceAccounts of the example,
// and nothing grants wildcards or Secrets (CA needs neither).
func checkRBAC(t *testing.T, o *objects) {
	t.Helper()
	subjectsOK := func(kind, name string, subjects []rbacSubject) {
		for _, s := range subjects {
			if s.Kind != "ServiceAccount" || o.serviceAccounts[s.Name] == nil || s.Namespace != o.serviceAccounts[s.Name].Namespace {
				t.Errorf("%s %s binds %s %s/%s, which the example does not define", kind, name, s.Kind, s.Namespace, s.Name)
			}
		}
	}
	for _, b := range o.crbs {
		if o.clusterRoles[b.RoleRef.Name] == nil {
			t.Errorf("ClusterRoleBinding %s refers to missing ClusterRole %s", b.Name, b.RoleRef.Name)
		}
		subjectsOK("ClusterRoleBinding", b.Name, toSubjects(b.Subjects))
	}
	for _, b := range o.rbs {
		if o.roles[b.RoleRef.Name] == nil {
			t.Errorf("RoleBinding %s refers to missing Role %s", b.Name, b.RoleRef.Name)
		}
		subjectsOK("RoleBinding", b.Name, toSubjects(b.Subjects))
	}
	if len(o.crbs) == 0 || len(o.clusterRoles) == 0 {
		t.Error("no ClusterRole/ClusterRoleBinding for CA")
	}
	for name, r := range o.clusterRoles {
		for _, rule := range r.Rules {
			if slices.Contains(rule.Verbs, "*") || slices.Contains(rule.Resources, "*") || slices.Contains(rule.APIGroups, "*") {
				t.Errorf("ClusterRole %s grants a wildcard: %+v", name, rule)
			}
			if slices.Contains(rule.Resources, "secrets") {
				t.Errorf("ClusterRole %s grants Secrets, which CA does not need", name)
			}
		}
	}
}

// checkPod checks one pod template: every referenced volume, ConfigMap,
// Secret key and port exists, the security context is locked down, and only
// CA gets a Kubernetes token.
func checkPod(t *testing.T, o *objects, secrets map[string]*corev1.Secret, d *appsv1.Deployment) {
	t.Helper()
	spec := d.Spec.Template.Spec
	sel, err := metav1LabelSelector(d)
	if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("Deployment %s: selector does not match its pod labels (%v)", d.Name, err)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("Deployment %s: automountServiceAccountToken must be false (only CA gets a token, projected)", d.Name)
	}
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("Deployment %s: pod must run as non-root", d.Name)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
		switch {
		case v.ConfigMap != nil:
			if o.configMaps[v.ConfigMap.Name] == nil {
				t.Errorf("Deployment %s volume %s: ConfigMap %s is not in the example", d.Name, v.Name, v.ConfigMap.Name)
			}
		case v.Secret != nil:
			if secrets[v.Secret.SecretName] == nil {
				t.Errorf("Deployment %s volume %s: Secret %s is made neither by generate-secret.sh nor by a Certificate", d.Name, v.Name, v.Secret.SecretName)
			}
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil && s.ConfigMap.Name != "kube-root-ca.crt" && o.configMaps[s.ConfigMap.Name] == nil {
					t.Errorf("Deployment %s volume %s: ConfigMap %s missing", d.Name, v.Name, s.ConfigMap.Name)
				}
			}
		default:
			t.Errorf("Deployment %s volume %s: unexpected volume type", d.Name, v.Name)
		}
	}
	for _, c := range podContainers(spec) {
		where := fmt.Sprintf("Deployment %s container %s", d.Name, c.Name)
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 ||
			(sc.Privileged != nil && *sc.Privileged) {
			t.Errorf("%s: securityContext must forbid privilege escalation, use a read-only root FS and drop ALL capabilities", where)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: needs cpu and memory requests and a memory limit", where)
		}
		for _, m := range c.VolumeMounts {
			if _, ok := volumes[m.Name]; !ok {
				t.Errorf("%s mounts undefined volume %s", where, m.Name)
			}
			if !m.ReadOnly {
				t.Errorf("%s mounts %s read-write", where, m.Name)
			}
			if m.MountPath == saTokenPath && c.Name == providerContainer {
				t.Errorf("%s: the provider must not get a Kubernetes token", where)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				s := secrets[r.Name]
				if s == nil || (s.Data[r.Key] == nil && (r.Optional == nil || !*r.Optional)) {
					t.Errorf("%s env %s: Secret %s key %s does not exist", where, e.Name, r.Name, r.Key)
				}
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				if cm := o.configMaps[r.Name]; cm == nil || (cm.Data[r.Key] == "" && (r.Optional == nil || !*r.Optional)) {
					t.Errorf("%s env %s: ConfigMap %s key %s does not exist", where, e.Name, r.Name, r.Key)
				}
			}
		}
		for _, ef := range c.EnvFrom {
			if ef.ConfigMapRef != nil && o.configMaps[ef.ConfigMapRef.Name] == nil {
				t.Errorf("%s envFrom: ConfigMap %s does not exist", where, ef.ConfigMapRef.Name)
			}
			if ef.SecretRef != nil {
				t.Errorf("%s envFrom a Secret: mount credentials as files instead", where)
			}
		}
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if p == nil || p.HTTPGet == nil {
				continue
			}
			if port := p.HTTPGet.Port; port.StrVal != "" && containerPort(c, port.StrVal) == 0 {
				t.Errorf("%s: probe uses undefined port %q", where, port.StrVal)
			}
		}
		if c.Name == providerContainer && (c.ReadinessProbe == nil || c.LivenessProbe == nil) {
			t.Errorf("%s: needs readiness and liveness probes", where)
		}
	}
}

// checkExecProbe: an exec probe must run our binary's "probe" subcommand
// against the address the provider serves on.
func checkExecProbe(t *testing.T, c corev1.Container, p *corev1.Probe, kind string) {
	t.Helper()
	if p == nil || p.Exec == nil {
		return
	}
	cmd := p.Exec.Command
	if len(cmd) < 2 || cmd[0] != "/cluster-autoscaler-provider" || cmd[1] != "probe" {
		t.Errorf("%s %s probe %v: want /cluster-autoscaler-provider probe ...", c.Name, kind, cmd)
		return
	}
	if got, want := flagValue(cmd, "--address"), flagValue(c.Args, "--address"); got != want {
		t.Errorf("%s %s probe asks %q, the provider serves on %q", c.Name, kind, got, want)
	}
	if p.TimeoutSeconds < 6 {
		t.Errorf("%s %s probe timeout %ds is shorter than the probe's own 5s deadline", c.Name, kind, p.TimeoutSeconds)
	}
}

// checkNativeSidecar: the provider beside CA is a native sidecar whose
// startupProbe asks the gRPC health service, so the kubelet starts CA only
// once the provider serves.
func checkNativeSidecar(t *testing.T, spec corev1.PodSpec, provC corev1.Container) {
	t.Helper()
	if !isNativeSidecar(spec, provC.Name) {
		t.Errorf("the provider must be an init container with restartPolicy: Always (a native sidecar)")
	}
	if provC.StartupProbe == nil || provC.StartupProbe.Exec == nil {
		t.Fatalf("the provider sidecar needs an exec startupProbe running probe")
	}
	checkExecProbe(t, provC, provC.StartupProbe, "startup")
	if budget := provC.StartupProbe.PeriodSeconds * provC.StartupProbe.FailureThreshold; budget < 60 {
		t.Errorf("startupProbe gives the first cloud snapshot only %ds; the server itself waits up to 30s and then retries", budget)
	}
}

// checkPDBs: every Deployment's pods are covered by a PodDisruptionBudget
// (CA keeps nodes running kube-system pods without one), and every budget
// selects some pods of the example.
func checkPDBs(t *testing.T, o *objects) {
	t.Helper()
	for _, d := range o.deployments {
		covered := false
		for _, pdb := range o.pdbs {
			sel, err := metav1Selector(pdb.Spec.Selector)
			if err == nil && !sel.Empty() && sel.Matches(labels.Set(d.Spec.Template.Labels)) && pdb.Namespace == d.Namespace {
				covered = true
				if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() < 1 {
					t.Errorf("PodDisruptionBudget %s must allow one %s pod to go (it is a single replica)", pdb.Name, d.Name)
				}
			}
		}
		if !covered {
			t.Errorf("Deployment %s: no PodDisruptionBudget selects its pods", d.Name)
		}
	}
	for _, pdb := range o.pdbs {
		sel, _ := metav1Selector(pdb.Spec.Selector)
		matched := false
		for _, d := range o.deployments {
			matched = matched || (sel != nil && sel.Matches(labels.Set(d.Spec.Template.Labels)))
		}
		if !matched {
			t.Errorf("PodDisruptionBudget %s selects no pod of the example", pdb.Name)
		}
	}
}

// servicePortTo returns the Service and port number that reach container
// port want on the pods of d, if any.
func servicePortTo(o *objects, d *appsv1.Deployment, c corev1.Container, want int32) (*corev1.Service, int32) {
	for _, s := range o.services {
		if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			continue
		}
		for _, sp := range s.Spec.Ports {
			target := sp.TargetPort.IntVal
			if sp.TargetPort.StrVal != "" {
				target = containerPort(c, sp.TargetPort.StrVal)
			}
			if target == want {
				return s, sp.Port
			}
		}
	}
	return nil, 0
}

// checkMetricsServices: a Service reaches CA's metrics port (8085) and one
// reaches the provider's --metrics-address port, which must not be loopback
// (nothing outside the pod could scrape it). The official chart has no
// Service for the sidecar (providerService false): its PodMonitor scrapes
// the pod directly.
func checkMetricsServices(t *testing.T, o *objects, ca *appsv1.Deployment, caC corev1.Container, prov *appsv1.Deployment, provC corev1.Container, providerService bool) {
	t.Helper()
	if s, _ := servicePortTo(o, ca, caC, 8085); s == nil {
		t.Errorf("no Service reaches CA's metrics port 8085")
	}
	host, port, err := net.SplitHostPort(flagValue(provC.Args, "--metrics-address"))
	if err != nil {
		t.Fatalf("provider --metrics-address: %v", err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		t.Errorf("provider --metrics-address %s:%s is loopback: Prometheus cannot scrape it", host, port)
	}
	n, _ := strconv.Atoi(port)
	if s, _ := servicePortTo(o, prov, provC, int32(n)); s == nil && providerService {
		t.Errorf("no Service reaches the provider's metrics port %s", port)
	}
}

type rbacSubject struct{ Kind, Name, Namespace string }

// caConfig is CA's externalgrpc cloud-config. Upstream ignores unknown keys;
// decoding strictly here catches typos that upstream would silently drop.
type caConfig struct {
	Address     string `json:"address"`
	Cert        string `json:"cert,omitempty"`
	Key         string `json:"key,omitempty"`
	CACert      string `json:"cacert,omitempty"`
	GRPCTimeout string `json:"grpc_timeout,omitempty"`
}

func caCloudConfig(t *testing.T, o *objects, d *appsv1.Deployment, c corev1.Container) caConfig {
	t.Helper()
	args := append(append([]string{}, c.Command...), c.Args...)
	if got := flagValue(args, "--cloud-provider"); got != "externalgrpc" {
		t.Fatalf("CA --cloud-provider=%q, want externalgrpc", got)
	}
	p := flagValue(args, "--cloud-config")
	data, ok := fileFromConfigMap(o, d, c, p)
	if !ok {
		t.Fatalf("CA --cloud-config=%s is not a key of a mounted ConfigMap", p)
	}
	var cfg caConfig
	if err := yaml.UnmarshalStrict([]byte(data), &cfg); err != nil {
		t.Fatalf("CA cloud-config: %v", err)
	}
	if _, port, err := net.SplitHostPort(cfg.Address); err != nil || port == "" {
		t.Errorf("CA cloud-config address %q needs host:port (CA exits otherwise)", cfg.Address)
	}
	if cfg.GRPCTimeout != "" {
		if d, err := time.ParseDuration(cfg.GRPCTimeout); err != nil || d <= 0 {
			t.Errorf("grpc_timeout %q is not a positive Go duration", cfg.GRPCTimeout)
		}
	}
	return cfg
}

// fileFromConfigMap resolves a path inside container c to a ConfigMap key.
func fileFromConfigMap(o *objects, d *appsv1.Deployment, c corev1.Container, p string) (string, bool) {
	for _, m := range c.VolumeMounts {
		if path.Dir(p) != path.Clean(m.MountPath) {
			continue
		}
		v := volume(d, m.Name)
		if v == nil || v.ConfigMap == nil || o.configMaps[v.ConfigMap.Name] == nil {
			return "", false
		}
		data, ok := o.configMaps[v.ConfigMap.Name].Data[path.Base(p)]
		return data, ok
	}
	return "", false
}

// secretFileSource names the Secret and key behind a path in container c.
func secretFileSource(d *appsv1.Deployment, c corev1.Container, p string) (secret, key string, ok bool) {
	for _, m := range c.VolumeMounts {
		if path.Dir(p) != path.Clean(m.MountPath) {
			continue
		}
		if v := volume(d, m.Name); v != nil && v.Secret != nil {
			return v.Secret.SecretName, path.Base(p), true
		}
	}
	return "", "", false
}

func checkMetricsAnnotations(t *testing.T, d *appsv1.Deployment, c corev1.Container) {
	t.Helper()
	ann := d.Spec.Template.Annotations
	_, port, err := net.SplitHostPort(flagValue(c.Args, "--metrics-address"))
	if err != nil {
		t.Fatalf("provider --metrics-address: %v", err)
	}
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != port || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("Deployment %s: Prometheus annotations %v do not match --metrics-address port %s", d.Name, ann, port)
	}
	if strconv.Itoa(int(containerPort(c, "metrics"))) != port {
		t.Errorf("container port metrics != --metrics-address port %s", port)
	}
}

// checkStandaloneLink follows CA's address to the Service, the provider's
// listener, its certificate and the NetworkPolicy.
func checkStandaloneLink(t *testing.T, o *objects, cfg caConfig, ca *appsv1.Deployment, caC corev1.Container, prov *appsv1.Deployment, provC corev1.Container) {
	t.Helper()
	host, port, _ := net.SplitHostPort(cfg.Address)
	var svcFound bool
	for _, s := range o.services {
		if host != s.Name+"."+s.Namespace+".svc" {
			continue
		}
		svcFound = true
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(prov.Spec.Template.Labels)) || len(s.Spec.Selector) == 0 {
			t.Errorf("Service %s does not select the provider pods", s.Name)
		}
		for _, sp := range s.Spec.Ports {
			if strconv.Itoa(int(sp.Port)) != port {
				continue
			}
			target := sp.TargetPort.IntVal
			if sp.TargetPort.StrVal != "" {
				target = containerPort(provC, sp.TargetPort.StrVal)
			}
			_, listen, _ := net.SplitHostPort(flagValue(provC.Args, "--address"))
			if strconv.Itoa(int(target)) != listen {
				t.Errorf("Service port %d targets %d, provider listens on %s", sp.Port, target, listen)
			}
		}
	}
	if !svcFound {
		t.Fatalf("CA address host %q is no Service of the example", host)
	}
	if cfg.Cert == "" || cfg.Key == "" || cfg.CACert == "" {
		t.Fatalf("standalone CA cloud-config needs cert, key and cacert: %+v", cfg)
	}
	certBySecret := map[string]*certificate{}
	for _, c := range o.certificates {
		certBySecret[c.Spec.SecretName] = c
	}
	// Server side: the certificate the provider serves names the host CA dials.
	serverSecret, _, ok := secretFileSource(prov, provC, flagValue(provC.Args, "--tls-cert-file"))
	if sc := certBySecret[serverSecret]; !ok || sc == nil {
		t.Errorf("provider --tls-cert-file is not from a cert-manager Certificate")
	} else {
		if !slices.Contains(sc.Spec.DNSNames, host) || !slices.Contains(sc.Spec.Usages, "server auth") {
			t.Errorf("server Certificate %s: dnsNames %v must contain %q and usages %v 'server auth'", sc.Name, sc.Spec.DNSNames, host, sc.Spec.Usages)
		}
		if o.issuers[sc.Spec.IssuerRef.Name] == nil {
			t.Errorf("server Certificate issuer %s missing", sc.Spec.IssuerRef.Name)
		}
	}
	for _, f := range []string{"--tls-key-file", "--tls-client-ca-file"} {
		if s, _, ok := secretFileSource(prov, provC, flagValue(provC.Args, f)); !ok || s != serverSecret {
			t.Errorf("provider %s is not from the server certificate's Secret", f)
		}
	}
	// Client side: CA presents a client certificate from the same CA.
	var clientSecret string
	for _, p := range []string{cfg.Cert, cfg.Key, cfg.CACert} {
		s, key, ok := secretFileSource(ca, caC, p)
		if !ok || !slices.Contains([]string{"tls.crt", "tls.key", "ca.crt"}, key) {
			t.Errorf("CA cloud-config path %s is not a key of a mounted Secret", p)
		}
		if clientSecret != "" && s != clientSecret {
			t.Errorf("CA cert, key and cacert come from different Secrets")
		}
		clientSecret = s
	}
	if cc := certBySecret[clientSecret]; cc == nil || !slices.Contains(cc.Spec.Usages, "client auth") {
		t.Errorf("CA's client Secret %s is not a client-auth Certificate", clientSecret)
	} else if sc := certBySecret[serverSecret]; sc != nil && sc.Spec.IssuerRef != cc.Spec.IssuerRef {
		t.Errorf("client and server certificates come from different issuers")
	}
	// Only CA may reach the gRPC port.
	var admitted bool
	for _, np := range o.netpols {
		sel, err := metav1Selector(&np.Spec.PodSelector)
		if err != nil || !sel.Matches(labels.Set(prov.Spec.Template.Labels)) {
			continue
		}
		for _, rule := range np.Spec.Ingress {
			for _, from := range rule.From {
				fs, err := metav1Selector(from.PodSelector)
				if from.PodSelector == nil || err != nil || from.NamespaceSelector != nil || from.IPBlock != nil || !fs.Matches(labels.Set(ca.Spec.Template.Labels)) {
					t.Errorf("NetworkPolicy %s admits something other than CA pods: %+v", np.Name, from)
					continue
				}
				for _, p := range rule.Ports {
					if p.Port != nil && p.Port.String() == port {
						admitted = true
					}
				}
			}
			if len(rule.From) == 0 {
				t.Errorf("NetworkPolicy %s has a rule admitting everyone", np.Name)
			}
		}
	}
	if !admitted {
		t.Error("no NetworkPolicy admits CA to the provider's gRPC port")
	}
}

// TestDeployDocNamesThePinnedCA keeps docs/deploy.md and the examples on
// the same CA release.
func TestDeployDocNamesThePinnedCA(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), pinnedCAImage) {
		t.Fatalf("docs/deploy.md does not name %s", pinnedCAImage)
	}
	for _, p := range providers {
		readme, err := os.ReadFile(filepath.Join(p, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		if tag := pinnedCAImage[strings.LastIndex(pinnedCAImage, ":")+1:]; !strings.Contains(string(readme), tag) {
			t.Errorf("%s/README.md does not name CA %s", p, tag)
		}
	}
}

// TestDocsCAImageOverride applies the deploy guide's `images:` entry for CA
// to each example as an overlay and checks that CA's container then runs
// that tag while the provider's image stays as the example sets it, so the
// documented way to match CA to the cluster's minor really works.
func TestDocsCAImageOverride(t *testing.T) {
	const heading = "## Pick the Cluster Autoscaler for your cluster"
	sec := docSection(t, filepath.Join("..", "docs", "deploy.md"), heading)
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("docs/deploy.md: no yaml block under " + heading)
	}
	// The block is one list entry, indented as in the examples' images: list.
	snippet := "images:\n" + m[1]
	tag := regexp.MustCompile(`newTag: (\S+)`).FindStringSubmatch(snippet)
	if tag == nil {
		t.Fatalf("snippet has no newTag:\n%s", snippet)
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "newTag: "+tag[1]) || !strings.Contains(string(readme), "image.tag="+tag[1]) {
		t.Fatalf("README's override differs from the deploy guide's (%s)", tag[1])
	}
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			base, err := filepath.Abs(p)
			if err != nil {
				t.Fatal(err)
			}
			overlay := t.TempDir()
			rel, err := filepath.Rel(overlay, base) // kustomize refuses absolute bases
			if err != nil {
				t.Fatal(err)
			}
			k := "resources:\n  - " + rel + "\n" + snippet
			if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(k), 0o600); err != nil {
				t.Fatal(err)
			}
			o := build(t, overlay)
			var ca, provider []string
			for _, d := range o.deployments {
				for _, c := range podContainers(d.Spec.Template.Spec) {
					switch {
					case strings.HasPrefix(c.Image, "registry.k8s.io/autoscaling/cluster-autoscaler:"):
						ca = append(ca, c.Image)
					case strings.Contains(c.Image, "cluster-autoscaler-provider"):
						provider = append(provider, c.Image)
					}
				}
			}
			if len(ca) != 1 || ca[0] != "registry.k8s.io/autoscaling/cluster-autoscaler:"+tag[1] {
				t.Fatalf("CA images %v, want one with tag %s", ca, tag[1])
			}
			if len(provider) == 0 || strings.HasSuffix(provider[0], ":"+tag[1]) {
				t.Fatalf("provider images %v: the override must touch CA only", provider)
			}
		})
	}
}

// docSection returns the text of the markdown file path under the heading
// line equal to heading, up to the next heading of the same or a higher level.
func docSection(t *testing.T, path, heading string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	level := strings.Index(heading, " ")
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != heading {
			continue
		}
		var out []string
		for _, m := range lines[i+1:] {
			if h := strings.Index(m, " "); strings.HasPrefix(m, "#") && h > 0 && h <= level && strings.Trim(m[:h], "#") == "" {
				break
			}
			out = append(out, m)
		}
		return strings.Join(out, "\n")
	}
	t.Fatalf("%s: no heading %q", path, heading)
	return ""
}

// checkServiceTargets: every Service selects pods of the example, and each
// of its ports reaches a port some container of those pods declares.
func checkServiceTargets(t *testing.T, o *objects) {
	t.Helper()
	for _, s := range o.services {
		var pods []*appsv1.Deployment
		for _, d := range o.deployments {
			if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
				pods = append(pods, d)
			}
		}
		if len(pods) == 0 {
			t.Errorf("Service %s selects no pod of the example", s.Name)
			continue
		}
		for _, sp := range s.Spec.Ports {
			found := false
			for _, d := range pods {
				for _, c := range podContainers(d.Spec.Template.Spec) {
					for _, cp := range c.Ports {
						if (sp.TargetPort.StrVal != "" && cp.Name == sp.TargetPort.StrVal) || (sp.TargetPort.StrVal == "" && cp.ContainerPort == sp.TargetPort.IntVal) {
							found = true
						}
					}
				}
			}
			if !found {
				t.Errorf("Service %s port %d targets %s, which no selected container declares", s.Name, sp.Port, sp.TargetPort.String())
			}
		}
	}
}
