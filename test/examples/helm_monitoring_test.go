package examples

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// helmDirs are the directories under examples/helm/ holding values for the
// official chart: one per provider (the sidecar layout) and standalone.
func helmDirs() []string { return append(slices.Clone(providers), "standalone") }

// monitoringGroup is the API group of the Prometheus operator's kinds.
const monitoringGroup = "monitoring.coreos.com"

// TestHelmValuesNeedNoPrometheusOperator: each values.yaml installs on a
// cluster without the Prometheus operator: the chart renders no ServiceMonitor
// or PrometheusRule of its own and extraObjects holds no kind of the
// operator's API group.
func TestHelmValuesNeedNoPrometheusOperator(t *testing.T) {
	for _, dir := range helmDirs() {
		t.Run(dir, func(t *testing.T) {
			path := filepath.Join("helm", dir, "values.yaml")
			v := loadChartValues(t, path)
			if v.ServiceMonitor.Enabled {
				t.Error("serviceMonitor.enabled: the chart would render a ServiceMonitor")
			}
			for i, obj := range v.ExtraObjects {
				if api, _ := obj["apiVersion"].(string); strings.HasPrefix(api, monitoringGroup+"/") {
					t.Errorf("extraObjects[%d] is a %s %v", i, api, obj["kind"])
				}
			}
			o := renderChartObjects(t, v)
			if n := len(o.serviceMonitors) + len(o.podMonitors) + len(o.prometheusRules); n != 0 {
				t.Errorf("the chart renders %d objects of %s", n, monitoringGroup)
			}
			if _, ok := o.configMaps[dashboardConfigMap]; ok {
				t.Error("the dashboard belongs to the monitoring option")
			}
		})
	}
}

// dashboardConfigMap is the name of the ConfigMap that holds the dashboard.
const dashboardConfigMap = "cluster-autoscaler-provider-dashboard"

// mergedValues merges values files as helm install -f a -f b does (Helm's
// own merge: maps merge key by key, a later list replaces an earlier one),
// then decodes the result strictly.
func mergedValues(t *testing.T, paths ...string) chartValues {
	t.Helper()
	merged := map[string]any{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := loader.LoadValues(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		merged = loader.MergeMaps(merged, m)
	}
	b, err := yaml.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	var v chartValues
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		t.Fatalf("%v merged: %v", paths, err)
	}
	return v
}

// TestHelmMonitoringValues: values-monitoring.yaml, given after values.yaml,
// adds exactly the monitoring objects (the chart's ServiceMonitor for CA, a
// PodMonitor for the sidecar's metrics, the alerts of docs/metrics.md, the
// Grafana dashboard) and changes nothing else: every other value, and
// every object of values.yaml, stays as it was.
func TestHelmMonitoringValues(t *testing.T) {
	for _, dir := range helmDirs() {
		t.Run(dir, func(t *testing.T) {
			basePath := filepath.Join("helm", dir, "values.yaml")
			monPath := filepath.Join("helm", dir, "values-monitoring.yaml")
			base := loadChartValues(t, basePath)
			mon := mergedValues(t, basePath, monPath)

			// Helm replaces the list: the file must repeat values.yaml's
			// objects first, unchanged.
			if len(mon.ExtraObjects) < len(base.ExtraObjects) || !reflect.DeepEqual(mon.ExtraObjects[:len(base.ExtraObjects)], base.ExtraObjects) {
				t.Fatalf("%s: extraObjects does not start with the objects of %s, unchanged", monPath, basePath)
			}
			var added []string
			for _, obj := range mon.ExtraObjects[len(base.ExtraObjects):] {
				added = append(added, obj["kind"].(string))
			}
			want := []string{"PodMonitor", "PrometheusRule", "ConfigMap"}
			if dir == "standalone" {
				// The provider chart brings the provider's PodMonitor.
				want = want[1:]
			}
			if !slices.Equal(added, want) {
				t.Errorf("%s adds %v to extraObjects, want %v", monPath, added, want)
			}
			// Nothing but serviceMonitor and extraObjects differs.
			if !reflect.DeepEqual(withoutMonitoring(mon), withoutMonitoring(base)) {
				t.Errorf("%s changes values other than serviceMonitor and extraObjects", monPath)
			}

			bo, mo := renderChartObjects(t, base), renderChartObjects(t, mon)
			if !reflect.DeepEqual(bo.deployments, mo.deployments) || !reflect.DeepEqual(bo.services, mo.services) || !reflect.DeepEqual(bo.pdbs, mo.pdbs) {
				t.Error("the monitoring values change the Deployment, Service or PodDisruptionBudget")
			}
			for name, cm := range mo.configMaps {
				if name == dashboardConfigMap {
					continue
				}
				if !reflect.DeepEqual(bo.configMaps[name], cm) {
					t.Errorf("ConfigMap %s differs from values.yaml's", name)
				}
			}
			if len(mo.configMaps) != len(bo.configMaps)+1 {
				t.Errorf("%d ConfigMaps with monitoring, %d without: want the dashboard only", len(mo.configMaps), len(bo.configMaps))
			}
			if len(mo.serviceMonitors) != 1 || mo.serviceMonitors[0].Namespace != "kube-system" {
				t.Error("want the chart's ServiceMonitor for CA's metrics, in kube-system")
			}
			checkDashboardConfigMap(t, mo.configMaps[dashboardConfigMap])
			if dir == "standalone" {
				if len(mo.podMonitors) != 0 || len(mo.prometheusRules) != 1 {
					t.Fatalf("want no PodMonitor and one PrometheusRule, got %d and %d", len(mo.podMonitors), len(mo.prometheusRules))
				}
				checkAlertsMatchDocs(t, mo.prometheusRules[0])
				checkAlertJobs(t, mo.prometheusRules[0], mo)
				return
			}
			d := mo.deployments[0]
			_, caC := findContainer(t, mo, func(c corev1.Container) bool { return c.Name == "cluster-autoscaler" })
			_, provC := findContainer(t, mo, func(c corev1.Container) bool { return c.Name == providerContainer })
			checkHelmMonitoring(t, mo, d, provC, caC)
		})
	}
}

// withoutMonitoring is v without the two keys the monitoring option sets.
func withoutMonitoring(v chartValues) chartValues {
	v.ExtraObjects = nil
	v.ServiceMonitor = chartValues{}.ServiceMonitor
	return v
}

// checkDashboardConfigMap: the ConfigMap carries the label Grafana's
// dashboard sidecar selects by and exactly the dashboard of
// examples/components/monitoring.
func checkDashboardConfigMap(t *testing.T, cm *corev1.ConfigMap) {
	t.Helper()
	if cm == nil {
		t.Fatal("no dashboard ConfigMap")
	}
	if cm.Labels[grafanaDashboardLabel] != "1" {
		t.Errorf("ConfigMap %s lacks the label %s: \"1\"", cm.Name, grafanaDashboardLabel)
	}
	if len(cm.Data) != 1 {
		t.Fatalf("ConfigMap %s holds %d files, want the dashboard only", cm.Name, len(cm.Data))
	}
	want := readDashboard(t)
	for key, text := range cm.Data {
		var got any
		if !strings.HasSuffix(key, ".json") {
			t.Errorf("dashboard key %s: Grafana's sidecar loads *.json", key)
		}
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			t.Fatalf("ConfigMap %s: %v", cm.Name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ConfigMap %s holds another dashboard than examples/components/monitoring/dashboard.json", cm.Name)
		}
	}
}
