package examples

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// grafanaDashboardLabel is the label Grafana's dashboard sidecar (the
// kube-prometheus-stack default) loads ConfigMaps by.
const grafanaDashboardLabel = "grafana_dashboard"

// dashboardPath is the dashboard as shipped; the Helm values embed it.
var dashboardPath = filepath.Join("components", "monitoring", "dashboard.json")

// dashboardMustShow are the metrics the dashboard exists for: cloud calls,
// errors and latency, rate-limit waits, mutations by outcome, quarantined
// groups, target against listed instances, unmatched specs, malformed
// settings, and CA's scale-ups and scale-downs beside them.
var dashboardMustShow = []string{
	"cluster_autoscaler_provider_cloud_requests_total",
	"cluster_autoscaler_provider_cloud_request_duration_seconds",
	"cluster_autoscaler_provider_cloud_rate_limit_wait_seconds",
	"cluster_autoscaler_provider_mutations_total",
	"cluster_autoscaler_provider_quarantined_node_groups",
	"cluster_autoscaler_provider_node_group_size",
	"cluster_autoscaler_provider_node_group_instances",
	"cluster_autoscaler_provider_unmatched_node_group_specs",
	"cluster_autoscaler_provider_node_group_setting_errors",
	"cluster_autoscaler_scaled_up_nodes_total",
	"cluster_autoscaler_scaled_down_nodes_total",
}

func readDashboard(t *testing.T) any {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d
}

// dashboard is the part of Grafana's dashboard model the test reads.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// registeredMetricNames lists every metric metrics.New registers, whether
// or not it has a series yet.
func registeredMetricNames(t *testing.T) map[string]bool {
	t.Helper()
	rec := &describingRegistry{Registry: prometheus.NewRegistry(), names: map[string]bool{}}
	metrics.New(rec)
	if len(rec.names) == 0 {
		t.Fatal("metrics.New registered nothing")
	}
	return rec.names
}

// describingRegistry records the name of every metric registered with it.
type describingRegistry struct {
	*prometheus.Registry
	names map[string]bool
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *describingRegistry) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = true
		}
	}
	return r.Registry.Register(c)
}

func (r *describingRegistry) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// caMetricNames are the CA metrics docs/ca-metrics.md lists.
func caMetricNames(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "ca-metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := regexp.MustCompile("^\\| `(cluster_autoscaler_[a-z_]+)` \\|").FindStringSubmatch(line); m != nil {
			names[m[1]] = true
		}
	}
	if len(names) == 0 {
		t.Fatal("docs/ca-metrics.md lists no metric")
	}
	return names
}

var metricName = regexp.MustCompile(`\bcluster_autoscaler_[a-z0-9_]+`)

// TestDashboard: the dashboard is valid JSON in Grafana's model, every panel
// queries the chosen data source, and every metric it queries exists: in
// the provider's registry, or in docs/ca-metrics.md's list of CA's metrics.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	// The official chart may render extraObjects through tpl, where a
	// Grafana legend such as {{node_group}} would be a template action; the
	// dashboard leaves legends to Grafana ("__auto") instead.
	if strings.Contains(string(b), "{{") {
		t.Error("the dashboard contains {{: Helm's tpl over extraObjects would read it as a template action")
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardPath, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Error("the dashboard needs a uid (stable links) and a title")
	}
	var exprs []string
	hasDatasource := false
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" {
			hasDatasource = true
		}
		if q, ok := v.Query.(map[string]any); ok {
			s, _ := q["query"].(string)
			exprs = append(exprs, s)
		}
	}
	if !hasDatasource {
		t.Error("no datasource variable: the dashboard would be tied to one Prometheus")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not query the datasource variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if strings.TrimSpace(q.Expr) == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
			exprs = append(exprs, q.Expr)
		}
	}

	provider, ca := registeredMetricNames(t), caMetricNames(t)
	queried := map[string]bool{}
	for _, e := range exprs {
		for _, n := range metricName.FindAllString(e, -1) {
			base := n
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if trimmed, ok := strings.CutSuffix(n, suffix); ok && (provider[trimmed] || ca[trimmed]) {
					base = trimmed
				}
			}
			queried[base] = true
			if !provider[base] && !ca[base] {
				t.Errorf("the dashboard queries %s, which neither the provider registers nor docs/ca-metrics.md lists", n)
			}
		}
	}
	for _, n := range dashboardMustShow {
		if !queried[n] {
			t.Errorf("the dashboard does not show %s", n)
		}
	}
	checkDashboardVariables(t, d, provider)
	// docs/ca-metrics.md lists what the dashboard uses of CA, no more.
	var unused []string
	for n := range ca {
		if !queried[n] {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("docs/ca-metrics.md lists %v, which the dashboard does not query", unused)
	}
}

// dashboardVariables are the variables the dashboard must offer: the
// Prometheus to read, then where (cluster, namespace), which cloud and
// which node groups.
var dashboardVariables = []string{"datasource", "cluster", "namespace", "provider", "node_group"}

// variableRef is a Grafana variable reference: $name or ${name} (with an
// optional :format).
var variableRef = regexp.MustCompile(`\$(?:\{(\w+)(?::\w+)?\}|(\w+))`)

// variableRefs returns the variables s references, without Grafana's
// built-in ones ($__rate_interval, $__range, ...).
func variableRefs(s string) []string {
	var out []string
	for _, m := range variableRef.FindAllStringSubmatch(s, -1) {
		name := m[1] + m[2]
		if !strings.HasPrefix(name, "__") {
			out = append(out, name)
		}
	}
	return out
}

// checkDashboardVariables: the dashboard defines the variables of
// dashboardVariables; every reference, in a panel or in a variable's own
// query, names a variable defined (and, in a variable's query, defined
// before it, as Grafana resolves them in order); every variable is used;
// and every panel query filters by cluster and namespace, a provider
// metric's by provider too, so choosing one narrows every panel.
func checkDashboardVariables(t *testing.T, d dashboard, provider map[string]bool) {
	t.Helper()
	defined, used := map[string]bool{}, map[string]bool{}
	var names []string
	for _, v := range d.Templating.List {
		if defined[v.Name] {
			t.Errorf("variable %s is defined twice", v.Name)
		}
		q, _ := v.Query.(map[string]any)
		s, _ := q["query"].(string)
		for _, r := range variableRefs(s) {
			used[r] = true
			if !defined[r] {
				t.Errorf("variable %s's query uses $%s, which is not defined before it", v.Name, r)
			}
		}
		defined[v.Name] = true
		names = append(names, v.Name)
	}
	for _, want := range dashboardVariables {
		if !defined[want] {
			t.Errorf("no variable %s (the dashboard has %v)", want, names)
		}
	}
	for _, p := range d.Panels {
		if p.Datasource != nil {
			for _, r := range variableRefs(p.Datasource.UID) {
				used[r] = true
				if !defined[r] {
					t.Errorf("panel %q's data source uses $%s, which is not defined", p.Title, r)
				}
			}
		}
		for _, q := range p.Targets {
			refs := map[string]bool{}
			for _, r := range variableRefs(q.Expr) {
				used[r], refs[r] = true, true
				if !defined[r] {
					t.Errorf("panel %q uses $%s, which is not defined: %s", p.Title, r, q.Expr)
				}
			}
			if !refs["cluster"] || !refs["namespace"] {
				t.Errorf("panel %q does not filter by $cluster and $namespace: %s", p.Title, q.Expr)
			}
			for _, n := range metricName.FindAllString(q.Expr, -1) {
				if strings.HasPrefix(n, "cluster_autoscaler_provider_") && !refs["provider"] {
					t.Errorf("panel %q queries %s without filtering by $provider: %s", p.Title, n, q.Expr)
				}
			}
		}
	}
	for _, n := range names {
		if !used[n] {
			t.Errorf("variable %s is defined but no panel or variable uses it", n)
		}
	}
	if !provider["cluster_autoscaler_provider_build_info"] {
		t.Error("the provider variable reads build_info, which metrics.New does not register")
	}
}
