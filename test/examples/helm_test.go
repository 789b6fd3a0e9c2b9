package examples

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// officialChartVersion is the version of the official cluster-autoscaler
// chart (kubernetes/autoscaler, cluster-autoscaler/charts/cluster-autoscaler)
// whose values.yaml and templates the values under examples/helm/ were
// written and checked against; docs/deploy.md installs this version.
const officialChartVersion = "9.59.1"

// helmRelease is the release name docs/deploy.md installs with: with
// nameOverride cluster-autoscaler, the chart then names its objects
// cluster-autoscaler, as the kustomize examples do.
const helmRelease = "cluster-autoscaler"

// chartValues mirrors the keys of the official chart's values.yaml that our
// values use, and only those: decoding strictly refuses a key the chart
// does not define (or one we have not checked). Each key's effect, as read
// in the chart's templates, is what renderChartPod reproduces.
type chartValues struct {
	NameOverride  string `json:"nameOverride"`
	CloudProvider string `json:"cloudProvider"`
	AutoDiscovery struct {
		ClusterName string `json:"clusterName"`
	} `json:"autoDiscovery"`
	Image struct {
		Repository string `json:"repository"`
		Tag        string `json:"tag"`
	} `json:"image"`
	ExtraArgs      map[string]any     `json:"extraArgs"`
	InitContainers []corev1.Container `json:"initContainers"`
	RBAC           struct {
		ServiceAccount struct {
			AutomountServiceAccountToken *bool `json:"automountServiceAccountToken"`
		} `json:"serviceAccount"`
	} `json:"rbac"`
	ExtraVolumeMounts        []corev1.VolumeMount        `json:"extraVolumeMounts"`
	ExtraVolumes             []corev1.Volume             `json:"extraVolumes"`
	SecurityContext          *corev1.PodSecurityContext  `json:"securityContext"`
	ContainerSecurityContext *corev1.SecurityContext     `json:"containerSecurityContext"`
	Resources                corev1.ResourceRequirements `json:"resources"`
	PriorityClassName        string                      `json:"priorityClassName"`
	PodDisruptionBudget      struct {
		MaxUnavailable *intstr.IntOrString `json:"maxUnavailable"`
	} `json:"podDisruptionBudget"`
	Service struct {
		Create      bool              `json:"create"`
		ServicePort int32             `json:"servicePort"`
		PortName    string            `json:"portName"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"service"`
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
	ServiceMonitor struct {
		Enabled   bool   `json:"enabled"`
		Namespace string `json:"namespace"`
		Interval  string `json:"interval"`
		Path      string `json:"path"`
	} `json:"serviceMonitor"`
	ExtraObjects []map[string]any `json:"extraObjects"`
}

// chartDefaultExtraArgs are the chart's own extraArgs; Helm merges a values
// file's map over them, so they stay unless set to null.
var chartDefaultExtraArgs = map[string]any{"logtostderr": true, "stderrthreshold": "info", "v": 4}

func loadChartValues(t *testing.T, path string) chartValues {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v chartValues
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// renderChartObjects builds what the official chart renders from v for
// release helmRelease in kube-system, as far as our values reach: the
// Deployment (templates/deployment.yaml), Service, PodDisruptionBudget,
// ServiceAccount, and extraObjects decoded strictly.
func renderChartObjects(t *testing.T, v chartValues) *objects {
	t.Helper()
	if v.AutoDiscovery.ClusterName == "" {
		t.Fatal("without autoDiscovery.clusterName (or autoscalingGroups) the chart renders no Deployment")
	}
	if v.CloudProvider != "externalgrpc" {
		t.Fatalf("cloudProvider %q, want externalgrpc", v.CloudProvider)
	}
	name := v.NameOverride
	if name == "" {
		name = v.CloudProvider + "-cluster-autoscaler"
	}
	fullname := name
	if name != helmRelease {
		fullname = helmRelease + "-" + name
	}
	selector := map[string]string{"app.kubernetes.io/instance": helmRelease, "app.kubernetes.io/name": name}

	args := []string{"./cluster-autoscaler", "--cloud-provider=" + v.CloudProvider, "--namespace=kube-system"}
	merged := map[string]any{}
	for k, val := range chartDefaultExtraArgs {
		merged[k] = val
	}
	for k, val := range v.ExtraArgs {
		if val == nil {
			delete(merged, k)
			continue
		}
		merged[k] = val
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, fmt.Sprintf("--%s=%v", strings.SplitN(k, "_", 2)[0], merged[k]))
	}
	ca := corev1.Container{
		Name:    name,
		Image:   v.Image.Repository + ":" + v.Image.Tag,
		Command: args,
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/health-check", Port: intstr.FromInt32(8085)}}},
		Ports:           []corev1.ContainerPort{{ContainerPort: 8085}},
		Resources:       v.Resources,
		SecurityContext: v.ContainerSecurityContext,
		VolumeMounts:    v.ExtraVolumeMounts,
	}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: fullname, Namespace: "kube-system", Labels: selector},
	}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector}
	d.Spec.Template.Labels = selector
	d.Spec.Template.Annotations = v.PodAnnotations
	d.Spec.Template.Spec = corev1.PodSpec{
		PriorityClassName:  v.PriorityClassName,
		InitContainers:     v.InitContainers,
		Containers:         []corev1.Container{ca},
		ServiceAccountName: fullname,
		SecurityContext:    v.SecurityContext,
		Volumes:            v.ExtraVolumes,
		// The chart sets nothing on the pod; the ServiceAccount's setting
		// then decides (a pod's own field would win).
		AutomountServiceAccountToken: v.RBAC.ServiceAccount.AutomountServiceAccountToken,
	}

	o := newObjects()
	o.deployments = append(o.deployments, d)
	o.serviceAccounts[fullname] = &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: fullname, Namespace: "kube-system"},
		AutomountServiceAccountToken: v.RBAC.ServiceAccount.AutomountServiceAccountToken}
	if v.Service.Create {
		o.services = append(o.services, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fullname, Namespace: "kube-system", Labels: selector, Annotations: v.Service.Annotations},
			Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{
				Name: v.Service.PortName, Port: v.Service.ServicePort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8085)}}},
		})
	}
	if v.ServiceMonitor.Enabled {
		// templates/servicemonitor.yaml: the chart's own Service, by its
		// selector labels, on service.portName.
		sm := &serviceMonitor{}
		sm.APIVersion, sm.Kind = "monitoring.coreos.com/v1", "ServiceMonitor"
		sm.Name, sm.Namespace = fullname, v.ServiceMonitor.Namespace
		sm.Spec.Selector = metav1.LabelSelector{MatchLabels: selector}
		sm.Spec.Endpoints = append(sm.Spec.Endpoints, metricsEndpoint{Port: v.Service.PortName, Path: v.ServiceMonitor.Path, Interval: v.ServiceMonitor.Interval})
		o.serviceMonitors = append(o.serviceMonitors, sm)
	}
	if v.PodDisruptionBudget.MaxUnavailable != nil {
		o.pdbs = append(o.pdbs, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: fullname, Namespace: "kube-system"},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}, MaxUnavailable: v.PodDisruptionBudget.MaxUnavailable},
		})
	}
	for i, obj := range v.ExtraObjects {
		// The chart renders extraObjects into the release namespace.
		meta, _ := obj["metadata"].(map[string]any)
		if _, set := meta["namespace"]; set {
			t.Errorf("extraObjects[%d] sets a namespace; leave it to the release (helm install -n)", i)
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		one := newObjects()
		if err := decodeInto(one, b); err != nil {
			t.Fatalf("extraObjects[%d]: %v", i, err)
		}
		for _, cm := range one.configMaps {
			cm.Namespace = "kube-system"
			o.configMaps[cm.Name] = cm
		}
		o.podMonitors = append(o.podMonitors, one.podMonitors...)
		o.prometheusRules = append(o.prometheusRules, one.prometheusRules...)
		if n := len(one.deployments) + len(one.services) + len(one.secrets) + len(one.serviceMonitors) + len(one.certificates); n > 0 {
			t.Errorf("extraObjects[%d]: unexpected kind", i)
		}
	}
	return o
}

// TestHelmValuesMatchTheKustomizeExamples: each provider's values for the
// official chart render the pod of examples/<provider>/: the same sidecar,
// CA flags, mounts, volumes, security contexts and configuration, and pass
// the same cross-reference checks.
func TestHelmValuesMatchTheKustomizeExamples(t *testing.T) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			v := loadChartValues(t, filepath.Join("helm", p, "values.yaml"))
			o := renderChartObjects(t, v)
			k := build(t, p)
			ex := example{dir: p, provider: p}
			secrets := generatedSecrets(t, ex)

			d := o.deployments[0]
			checkPod(t, o, secrets, d)
			ca, caC := findContainer(t, o, func(c corev1.Container) bool { return c.Name == "cluster-autoscaler" })
			_, provC := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })
			kca, kcaC := findContainer(t, k, func(c corev1.Container) bool { return c.Name == "cluster-autoscaler" })
			_, kprovC := findContainer(t, k, func(c corev1.Container) bool { return c.Name == providerContainer })

			checkNativeSidecar(t, d.Spec.Template.Spec, provC)
			checkExecProbe(t, provC, provC.ReadinessProbe, "readiness")
			checkPDBs(t, o)
			checkMetricsServices(t, o, ca, caC, d, provC, false)
			checkServiceTargets(t, o)
			cfg := caCloudConfig(t, o, ca, caC)
			if got := flagValue(provC.Args, "--address"); got != cfg.Address {
				t.Errorf("CA cloud-config address %q != sidecar --address %q", cfg.Address, got)
			}
			if caC.Image != pinnedCAImage {
				t.Errorf("CA image %s, want %s", caC.Image, pinnedCAImage)
			}

			// The sidecar is the kustomize example's, field for field.
			if !apiequality.Semantic.DeepEqual(provC, kprovC) {
				t.Errorf("provider container differs from examples/%s:\nhelm:      %+v\nkustomize: %+v", p, provC, kprovC)
			}
			// CA: the example's flags, plus only what the chart always adds.
			kargs := append(append([]string{}, kcaC.Command[1:]...), kcaC.Args...)
			for _, a := range kargs {
				if !slices.Contains(caC.Command, a) {
					t.Errorf("CA flag %s of examples/%s is not rendered by the values", a, p)
				}
			}
			for _, a := range caC.Command[1:] {
				name, _, _ := strings.Cut(a, "=")
				if !slices.Contains(kargs, a) && !slices.Contains([]string{"--namespace", "--logtostderr", "--stderrthreshold"}, name) {
					t.Errorf("the values give CA %s, which examples/%s does not", a, p)
				}
			}
			for what, pair := range map[string][2]any{
				"CA volumeMounts":     {caC.VolumeMounts, kcaC.VolumeMounts},
				"CA securityContext":  {caC.SecurityContext, kcaC.SecurityContext},
				"CA resources":        {caC.Resources, kcaC.Resources},
				"pod volumes":         {d.Spec.Template.Spec.Volumes, kca.Spec.Template.Spec.Volumes},
				"pod securityContext": {d.Spec.Template.Spec.SecurityContext, kca.Spec.Template.Spec.SecurityContext},
				"priorityClassName":   {d.Spec.Template.Spec.PriorityClassName, kca.Spec.Template.Spec.PriorityClassName},
				"pod annotations":     {d.Spec.Template.Annotations, kca.Spec.Template.Annotations},
				"pod labels":          {d.Spec.Template.Labels["app.kubernetes.io/name"], kca.Spec.Template.Labels["app.kubernetes.io/name"]},
			} {
				if !apiequality.Semantic.DeepEqual(pair[0], pair[1]) {
					t.Errorf("%s differ from examples/%s:\nhelm:      %+v\nkustomize: %+v", what, p, pair[0], pair[1])
				}
			}
			for name, kcm := range k.configMaps {
				if cm := o.configMaps[name]; cm == nil || !apiequality.Semantic.DeepEqual(cm.Data, kcm.Data) {
					t.Errorf("ConfigMap %s differs from examples/%s (or is missing)", name, p)
				}
			}
		})
	}
}

// checkHelmMonitoring: the PodMonitor of the monitoring values scrapes the sidecar's
// metrics port, and the rules are docs/metrics.md's alerts.
func checkHelmMonitoring(t *testing.T, o *objects, d *appsv1.Deployment, provC, caC corev1.Container) {
	t.Helper()
	if len(o.podMonitors) != 1 || len(o.prometheusRules) != 1 {
		t.Fatalf("want one PodMonitor and one PrometheusRule, got %d and %d", len(o.podMonitors), len(o.prometheusRules))
	}
	pm := o.podMonitors[0]
	sel, err := metav1Selector(&pm.Spec.Selector)
	if err != nil || !sel.Matches(labelsOf(d)) {
		t.Fatalf("PodMonitor %s does not select the chart's pod (labels %v)", pm.Name, d.Spec.Template.Labels)
	}
	for _, ep := range pm.Spec.PodMetricsEndpoints {
		if containerPort(provC, ep.Port) == 0 || containerPort(caC, ep.Port) != 0 {
			t.Errorf("PodMonitor port %q is not (only) the provider's", ep.Port)
		}
	}
	checkAlertsMatchDocs(t, o.prometheusRules[0])
	checkAlertJobs(t, o.prometheusRules[0], o)
}

// TestHelmStandaloneValuesMatchTheKustomizeExample: the standalone values
// render the CA pod of examples/standalone/<provider>/ (identical for every
// provider): no sidecar, no cloud credentials, the client certificate and
// the TLS cloud-config.
func TestHelmStandaloneValuesMatchTheKustomizeExample(t *testing.T) {
	v := loadChartValues(t, filepath.Join("helm", "standalone", "values.yaml"))
	o := renderChartObjects(t, v)
	sb, err := os.ReadFile(filepath.Join("helm", "standalone", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	standaloneText := string(sb)
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			k := build(t, "standalone/"+p)
			d := o.deployments[0]
			if len(d.Spec.Template.Spec.InitContainers) != 0 {
				t.Error("standalone CA has no sidecar")
			}
			kca, kcaC := findContainer(t, k, func(c corev1.Container) bool { return c.Name == "cluster-autoscaler" })
			_, caC := findContainer(t, o, func(c corev1.Container) bool { return c.Name == "cluster-autoscaler" })
			checkPod(t, o, map[string]*corev1.Secret{"cluster-autoscaler-client-tls": {}}, d)
			cfg := caCloudConfig(t, o, d, caC)
			kcfg := caCloudConfig(t, k, kca, kcaC)
			if cfg != kcfg {
				t.Errorf("cloud-config %+v, examples/standalone/%s has %+v", cfg, p, kcfg)
			}
			for _, f := range []string{cfg.Cert, cfg.Key, cfg.CACert} {
				if s, _, ok := secretFileSource(d, caC, f); !ok || s != "cluster-autoscaler-client-tls" {
					t.Errorf("cloud-config file %s is not from the client certificate Secret", f)
				}
			}
			kargs := append(append([]string{}, kcaC.Command[1:]...), kcaC.Args...)
			for _, a := range kargs {
				if slices.Contains(caC.Command, a) {
					continue
				}
				// One file serves every provider; a provider's own CA flags
				// are named in it for that provider to add.
				if name, _, _ := strings.Cut(a, "="); !strings.Contains(standaloneText, "# "+strings.TrimPrefix(name, "--")+": ") {
					t.Errorf("CA flag %s of examples/standalone/%s is neither rendered by the values nor named in them", a, p)
				}
			}
			if !apiequality.Semantic.DeepEqual(mountsByPath(caC.VolumeMounts), mountsByPath(kcaC.VolumeMounts)) {
				t.Errorf("CA mounts differ from examples/standalone/%s:\nhelm:      %+v\nkustomize: %+v", p, caC.VolumeMounts, kcaC.VolumeMounts)
			}
			if !apiequality.Semantic.DeepEqual(byName(d.Spec.Template.Spec.Volumes), byName(kca.Spec.Template.Spec.Volumes)) {
				t.Errorf("pod volumes differ from examples/standalone/%s", p)
			}
		})
	}
}

// TestHelmValuesRefuseUnknownKeys: the strict mirror of the chart's values
// refuses a key the chart does not define, at any depth.
func TestHelmValuesRefuseUnknownKeys(t *testing.T) {
	for _, doc := range []string{
		"extraContainers: []\n",
		"initContainers: [{name: p, image: i, restartPolicy: Always, startupProbes: {}}]\n",
		"rbac: {serviceAccount: {automountToken: false}}\n",
	} {
		var v chartValues
		if err := yaml.UnmarshalStrict([]byte(doc), &v); err == nil {
			t.Errorf("%q decoded without error", doc)
		}
	}
}

// TestDeployDocInstallsTheCheckedChartVersion: docs/deploy.md gives the
// helm install command with the chart version the values were checked
// against, for every values file.
func TestDeployDocInstallsTheCheckedChartVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, dir := range append(slices.Clone(providers), "standalone") {
		want := fmt.Sprintf("helm install %s autoscaler/cluster-autoscaler --version %s --namespace kube-system --values examples/helm/%s/values.yaml", helmRelease, officialChartVersion, dir)
		if !strings.Contains(doc, want) {
			t.Errorf("docs/deploy.md lacks %q", want)
		}
	}
	for _, dir := range append(slices.Clone(providers), "standalone") {
		vb, err := os.ReadFile(filepath.Join("helm", dir, "values.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(vb), "chart version "+officialChartVersion) {
			t.Errorf("helm/%s/values.yaml does not say which chart version it was written for", dir)
		}
	}
}

// byName orders volumes by name, since the order carries no meaning.
func byName(vs []corev1.Volume) []corev1.Volume {
	out := slices.Clone(vs)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// mountsByPath orders mounts by path; kustomize patches may reorder them.
func mountsByPath(ms []corev1.VolumeMount) []corev1.VolumeMount {
	out := slices.Clone(ms)
	sort.Slice(out, func(i, j int) bool { return out[i].MountPath < out[j].MountPath })
	return out
}
