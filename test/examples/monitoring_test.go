package examples

import (
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// inMemoryExamples copies examples/ into an in-memory file system, so a test
// can add an overlay next to them without touching the tree.
func inMemoryExamples(t *testing.T) filesys.FileSystem {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(path.Join("/examples", filepath.ToSlash(p)), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// buildOverlay builds kustomization k placed in /overlay over the examples.
func buildOverlay(t *testing.T, mem filesys.FileSystem, k types.Kustomization) *objects {
	t.Helper()
	k.APIVersion, k.Kind = types.KustomizationVersion, types.KustomizationKind
	b, err := yaml.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.WriteFile("/overlay/kustomization.yaml", b); err != nil {
		t.Fatal(err)
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, "/overlay")
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	o := newObjects()
	if err := decodeInto(o, out); err != nil {
		t.Fatalf("overlay output: %v", err)
	}
	return o
}

// TestMonitoringComponent adds examples/components/monitoring to every
// example and follows each monitor to what it scrapes; the dashboard
// ConfigMap comes with it.
func TestMonitoringComponent(t *testing.T) {
	mem := inMemoryExamples(t)
	for _, ex := range allExamples() {
		t.Run(ex.dir, func(t *testing.T) {
			o := buildOverlay(t, mem, types.Kustomization{
				Resources:  []string{"../examples/" + ex.dir},
				Components: []string{"../examples/components/monitoring"},
			})
			if len(o.serviceMonitors) != 1 || len(o.podMonitors) != 1 || len(o.prometheusRules) != 1 {
				t.Fatalf("want one ServiceMonitor, PodMonitor and PrometheusRule; got %d, %d, %d", len(o.serviceMonitors), len(o.podMonitors), len(o.prometheusRules))
			}
			ca, caC := findContainer(t, o, func(c corev1.Container) bool {
				return strings.HasPrefix(c.Image, "registry.k8s.io/autoscaling/cluster-autoscaler:")
			})
			prov, provC := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })

			// ServiceMonitor -> Service port -> CA's metrics port.
			sm := o.serviceMonitors[0]
			sel, err := metav1Selector(&sm.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			scrapesCA := false
			for _, s := range o.services {
				if s.Namespace != sm.Namespace || !sel.Matches(labels.Set(s.Labels)) {
					continue
				}
				for _, ep := range sm.Spec.Endpoints {
					for _, sp := range s.Spec.Ports {
						if sp.Name == ep.Port && sp.TargetPort.IntVal == 8085 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(ca.Spec.Template.Labels)) {
							scrapesCA = true
						}
					}
				}
			}
			if !scrapesCA {
				t.Errorf("ServiceMonitor %s reaches no Service port onto CA's metrics port 8085", sm.Name)
			}

			// PodMonitor -> the provider's named metrics port, and nothing else.
			pm := o.podMonitors[0]
			psel, err := metav1Selector(&pm.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			if !psel.Matches(labels.Set(prov.Spec.Template.Labels)) {
				t.Fatalf("PodMonitor %s does not select the provider's pods", pm.Name)
			}
			_, port, _ := net.SplitHostPort(flagValue(provC.Args, "--metrics-address"))
			for _, ep := range pm.Spec.PodMetricsEndpoints {
				if got := strconv.Itoa(int(containerPort(provC, ep.Port))); got != port {
					t.Errorf("PodMonitor port %q is container port %s, the provider serves metrics on %s", ep.Port, got, port)
				}
				if containerPort(caC, ep.Port) != 0 {
					t.Errorf("PodMonitor port %q also matches CA's container: scraped twice", ep.Port)
				}
			}
			checkAlertsMatchDocs(t, o.prometheusRules[0])
			checkAlertJobs(t, o.prometheusRules[0], o)
			checkDashboardConfigMap(t, o.configMaps[dashboardConfigMap])
		})
	}
}

// checkAlertsMatchDocs: the PrometheusRule holds exactly the expressions of
// the alerts table in docs/metrics.md, and each rule links its runbook.
func checkAlertsMatchDocs(t *testing.T, r *prometheusRule) {
	t.Helper()
	doc := docAlertExpressions(t)
	var got []string
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			if rule.Alert == "" || rule.Labels["severity"] == "" || rule.Annotations["summary"] == "" {
				t.Errorf("rule %q needs alert, a severity label and a summary", rule.Alert)
			}
			checkRunbook(t, rule.Alert, rule.Annotations["runbook_url"])
			got = append(got, strings.Join(strings.Fields(rule.Expr), " "))
		}
	}
	if strings.Join(got, "\n") != strings.Join(doc, "\n") {
		t.Errorf("PrometheusRule expressions differ from docs/metrics.md:\nrule:\n  %s\ndocs:\n  %s", strings.Join(got, "\n  "), strings.Join(doc, "\n  "))
	}
}

// docAlertExpressions reads the expression column of docs/metrics.md's
// "Alerts worth having" table.
func docAlertExpressions(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## Alerts worth having")
	if !ok {
		t.Fatal("docs/metrics.md has no 'Alerts worth having' section")
	}
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| what") {
			continue
		}
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), " | ")
		if len(cells) < 2 {
			continue
		}
		expr := strings.Trim(strings.ReplaceAll(cells[1], "\x00", "|"), "` ")
		out = append(out, strings.Join(strings.Fields(expr), " "))
	}
	if len(out) < 3 {
		t.Fatalf("found only %d alert expressions in docs/metrics.md", len(out))
	}
	return out
}

// TestCAImageIsAOneLineOverride: each sidecar example pins CA through its
// kustomization's images: entry, so changing that one newTag changes the CA
// that is deployed.
func TestCAImageIsAOneLineOverride(t *testing.T) {
	mem := inMemoryExamples(t)
	const caImage = "registry.k8s.io/autoscaling/cluster-autoscaler"
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			b, err := mem.ReadFile("/examples/" + p + "/kustomization.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var k types.Kustomization
			if err := yaml.UnmarshalStrict(b, &k); err != nil {
				t.Fatal(err)
			}
			var pinned string
			for _, img := range k.Images {
				if img.Name == caImage {
					pinned = img.NewTag
				}
			}
			if caImage+":"+pinned != pinnedCAImage {
				t.Fatalf("%s/kustomization.yaml pins CA at %q, want the images: entry for %s at %s", p, pinned, caImage, pinnedCAImage)
			}
			edited := strings.Replace(string(b), "newTag: "+pinned, "newTag: v1.35.9", 1)
			if err := mem.WriteFile("/examples/"+p+"/kustomization.yaml", []byte(edited)); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = mem.WriteFile("/examples/"+p+"/kustomization.yaml", b) }()
			o := buildOverlay(t, mem, types.Kustomization{Resources: []string{"../examples/" + p}})
			_, caC := findContainer(t, o, func(c corev1.Container) bool { return strings.HasPrefix(c.Image, caImage+":") })
			if caC.Image != caImage+":v1.35.9" {
				t.Fatalf("after editing the one newTag line, CA runs %s", caC.Image)
			}
		})
	}
}

// Annotations a Prometheus without the operator scrapes by (the
// kubernetes-pods and kubernetes-service-endpoints jobs of its usual
// configuration).
const (
	scrapeAnnotation = "prometheus.io/scrape"
	portAnnotation   = "prometheus.io/port"
	pathAnnotation   = "prometheus.io/path"
)

// TestAnnotationScrapingReachesBothPorts: without the Prometheus operator,
// each example's annotations scrape CA's metrics port once and the
// provider's once. A pod's annotations name one port, so the pod (sidecar)
// or the provider's own pod (standalone) names the provider's, and an
// annotated Service names CA's; CA's container names its metrics port 8085.
// The official chart's Service is annotated the same way by the Helm values (the
// standalone provider chart's pods are not: its podMonitor scrapes them).
func TestAnnotationScrapingReachesBothPorts(t *testing.T) {
	t.Parallel()
	for _, ex := range allExamples() {
		t.Run(ex.dir, func(t *testing.T) {
			t.Parallel()
			o := build(t, ex.dir)
			checkAnnotationScrapes(t, annotationScrapes(t, o), 1)
			// A named port, for monitors that select ports by name.
			_, caC := findContainer(t, o, func(c corev1.Container) bool {
				return strings.HasPrefix(c.Image, "registry.k8s.io/autoscaling/cluster-autoscaler:")
			})
			named := false
			for _, p := range caC.Ports {
				named = named || (p.ContainerPort == 8085 && p.Name != "")
			}
			if !named {
				t.Error("CA's container does not name its metrics port 8085")
			}
		})
	}
	for _, dir := range helmDirs() {
		t.Run("helm/"+dir, func(t *testing.T) {
			t.Parallel()
			o := renderChartObjects(t, loadChartValues(t, filepath.Join("helm", dir, "values.yaml")))
			providers := 1
			if dir == "standalone" {
				providers = 0
			}
			checkAnnotationScrapes(t, annotationScrapes(t, o), providers)
		})
	}
}

// checkAnnotationScrapes wants CA scraped once and the provider providers
// times.
func checkAnnotationScrapes(t *testing.T, scraped map[string][]string, providers int) {
	t.Helper()
	if len(scraped["CA"]) != 1 {
		t.Errorf("CA's metrics are scraped through annotations by %d objects, want 1: %v", len(scraped["CA"]), scraped["CA"])
	}
	if len(scraped["provider"]) != providers {
		t.Errorf("the provider's metrics are scraped through annotations by %d objects, want %d: %v", len(scraped["provider"]), providers, scraped["provider"])
	}
}

// annotationScrapes returns, for "CA" and "provider", the objects whose
// prometheus.io annotations make a Prometheus scrape that container's
// metrics port.
func annotationScrapes(t *testing.T, o *objects) map[string][]string {
	t.Helper()
	// whose tells which container of d serves port on its pod.
	whose := func(d *appsv1.Deployment, port string) string {
		spec := d.Spec.Template.Spec
		for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
			for _, p := range c.Ports {
				if strconv.Itoa(int(p.ContainerPort)) != port {
					continue
				}
				switch {
				case strings.HasPrefix(c.Image, "registry.k8s.io/autoscaling/cluster-autoscaler:"):
					return "CA"
				case c.Name == providerContainer:
					return "provider"
				}
			}
		}
		return ""
	}
	scraped := map[string][]string{}
	check := func(what string, ann map[string]string, targets []*appsv1.Deployment) {
		if ann[scrapeAnnotation] != "true" {
			return
		}
		if ann[pathAnnotation] != "/metrics" {
			t.Errorf("%s: %s is %q, want /metrics", what, pathAnnotation, ann[pathAnnotation])
		}
		for _, d := range targets {
			who := whose(d, ann[portAnnotation])
			if who == "" {
				t.Errorf("%s: %s %q is no metrics port of Deployment %s", what, portAnnotation, ann[portAnnotation], d.Name)
				continue
			}
			scraped[who] = append(scraped[who], what)
		}
	}
	for _, d := range o.deployments {
		check("Deployment "+d.Name+"'s pods", d.Spec.Template.Annotations, []*appsv1.Deployment{d})
	}
	for _, s := range o.services {
		var selected []*appsv1.Deployment
		for _, d := range o.deployments {
			if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
				selected = append(selected, d)
			}
		}
		if s.Annotations[scrapeAnnotation] == "true" {
			hasPort := false
			for _, p := range s.Spec.Ports {
				hasPort = hasPort || strconv.Itoa(int(p.TargetPort.IntVal)) == s.Annotations[portAnnotation]
			}
			if !hasPort {
				t.Errorf("Service %s: %s %q is none of its target ports", s.Name, portAnnotation, s.Annotations[portAnnotation])
			}
		}
		check("Service "+s.Name, s.Annotations, selected)
	}
	return scraped
}

// upJob finds the job pattern of the up{job=~"..."} term in alert's
// expression.
var upJob = regexp.MustCompile(`\bup\{job=~"([^"]+)"\}`)

// checkAlertJobs: the up{job=~...} terms of the two down alerts match the
// job labels the Prometheus operator gives the monitors of o (a PodMonitor's
// job is <namespace>/<name>, a ServiceMonitor's the name of the Service it
// scrapes), the provider's pattern only the provider's jobs and CA's only
// CA's.
func checkAlertJobs(t *testing.T, r *prometheusRule, o *objects) {
	t.Helper()
	var providerJobs, caJobs []string
	for _, pm := range o.podMonitors {
		ns := pm.Namespace
		if ns == "" {
			ns = "kube-system" // rendered into the release namespace
		}
		providerJobs = append(providerJobs, ns+"/"+pm.Name)
	}
	for _, sm := range o.serviceMonitors {
		sel, err := metav1Selector(&sm.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range o.services {
			if !sel.Matches(labels.Set(s.Labels)) {
				continue
			}
			for _, ep := range sm.Spec.Endpoints {
				for _, p := range s.Spec.Ports {
					if p.Name == ep.Port {
						caJobs = append(caJobs, s.Name)
					}
				}
			}
		}
	}
	if len(caJobs) == 0 {
		t.Fatal("no ServiceMonitor scrapes a Service port: no job for CA")
	}
	patterns := map[string]*regexp.Regexp{}
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			if m := upJob.FindStringSubmatch(rule.Expr); m != nil {
				// Prometheus anchors label matchers at both ends.
				patterns[rule.Alert] = regexp.MustCompile("^(?:" + m[1] + ")$")
			}
		}
	}
	for alert, want := range map[string]struct{ match, not []string }{
		"ClusterAutoscalerProviderDown": {providerJobs, caJobs},
		"ClusterAutoscalerDown":         {caJobs, providerJobs},
	} {
		re := patterns[alert]
		if re == nil {
			t.Errorf("alert %s has no up{job=~...} term", alert)
			continue
		}
		for _, j := range want.match {
			if !re.MatchString(j) {
				t.Errorf("alert %s: job pattern %s misses job %q", alert, re, j)
			}
		}
		for _, j := range want.not {
			if re.MatchString(j) {
				t.Errorf("alert %s: job pattern %s also takes job %q", alert, re, j)
			}
		}
	}
}
