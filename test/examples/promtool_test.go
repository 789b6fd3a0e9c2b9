package examples

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// promtoolRequired names the variable that turns a missing promtool from a
// skip into a failure; CI sets it, after installing Debian's prometheus.
const promtoolRequired = "CAP_REQUIRE_PROMTOOL"

var rulePath = filepath.Join("components", "monitoring", "prometheusrule.yaml")

// ruleTestsPath is promtool's unit tests in this package's testdata.
func ruleTestsPath() string {
	return filepath.Join(testDir, "testdata", "promtool", "alerts_test.yaml")
}

// promtool returns promtool's path, or skips (fails under
// CAP_REQUIRE_PROMTOOL=1) when it is not installed.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err == nil {
		return p
	}
	if os.Getenv(promtoolRequired) == "1" {
		t.Fatalf("promtool is not on PATH and %s=1: install Debian's prometheus package (apt-get install prometheus)", promtoolRequired)
	}
	t.Skipf("promtool is not on PATH, so the alert rules are not evaluated (apt-get install prometheus; %s=1 makes this a failure)", promtoolRequired)
	return ""
}

// ruleSpec reads the PrometheusRule of examples/components/monitoring.
func ruleSpec(t *testing.T) *prometheusRule {
	t.Helper()
	b, err := os.ReadFile(rulePath)
	if err != nil {
		t.Fatal(err)
	}
	var r prometheusRule
	if err := yaml.UnmarshalStrict(b, &r); err != nil {
		t.Fatalf("%s: %v", rulePath, err)
	}
	return &r
}

// TestAlertRulesWithPromtool evaluates the shipped alerts with Prometheus'
// own rule engine: promtool check rules over the PrometheusRule's spec (the
// rule groups promtool reads), then the unit tests of
// testdata/promtool/alerts_test.yaml: the provider-down, CA-down and
// refresh-failing alerts fire when they should and stay silent for a healthy
// pair.
func TestAlertRulesWithPromtool(t *testing.T) {
	t.Parallel()
	bin := promtool(t)
	spec, err := yaml.Marshal(ruleSpec(t).Spec)
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(ruleTestsPath())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"rules.yaml": spec, "alerts_test.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestAlertRuleTestsCoverTheAbsenceAlerts: the promtool tests expect each of
// the three alerts that notice absence or a failing provider to fire in
// some case and to stay silent in another, so a rule that never fires (or
// always does) fails them.
func TestAlertRuleTestsCoverTheAbsenceAlerts(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(ruleTestsPath())
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Tests []struct {
			Name       string `json:"name"`
			AlertTests []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", ruleTestsPath(), err)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range f.Tests {
		for _, a := range tc.AlertTests {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	defined := map[string]bool{}
	for _, g := range ruleSpec(t).Spec.Groups {
		for _, r := range g.Rules {
			defined[r.Alert] = true
		}
	}
	for _, a := range []string{"ClusterAutoscalerProviderDown", "ClusterAutoscalerDown", "ClusterAutoscalerProviderRefreshFailing"} {
		if !defined[a] {
			t.Errorf("%s defines no alert %s", rulePath, a)
		}
		if !fires[a] || !silent[a] {
			t.Errorf("%s: %s is expected to fire in some test (%v) and stay silent in another (%v)", ruleTestsPath(), a, fires[a], silent[a])
		}
	}
}

// TestHelmAlertRulesAreTheComponents: every values-monitoring.yaml carries
// the component's rule groups unchanged (the promtool tests evaluate the
// component's).
func TestHelmAlertRulesAreTheComponents(t *testing.T) {
	t.Parallel()
	want := ruleSpec(t).Spec
	for _, dir := range helmDirs() {
		path := filepath.Join("helm", dir, "values-monitoring.yaml")
		v := loadChartValues(t, path)
		found := 0
		for _, obj := range v.ExtraObjects {
			if obj["kind"] != "PrometheusRule" {
				continue
			}
			found++
			b, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var r prometheusRule
			if err := yaml.UnmarshalStrict(b, &r); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if !reflect.DeepEqual(r.Spec, want) {
				t.Errorf("%s: the PrometheusRule's spec differs from %s", path, rulePath)
			}
		}
		if found != 1 {
			t.Errorf("%s: %d PrometheusRules, want 1", path, found)
		}
	}
}

// runbookBase is where the rules' runbook_url annotations point: the
// troubleshooting page in the repository.
const runbookBase = "https://github.com/ca-providers/cluster-autoscaler-provider/blob/main/docs/troubleshooting.md#"

// checkRunbook: the rule's runbook_url names a section that
// docs/troubleshooting.md has.
func checkRunbook(t *testing.T, alert, url string) {
	t.Helper()
	anchor, ok := strings.CutPrefix(url, runbookBase)
	if !ok {
		t.Errorf("alert %s: runbook_url %q is not a section of %s", alert, url, strings.TrimSuffix(runbookBase, "#"))
		return
	}
	if !troubleshootingAnchors(t)[anchor] {
		t.Errorf("alert %s: runbook_url anchor #%s is no heading of docs/troubleshooting.md", alert, anchor)
	}
}

// troubleshootingAnchors are the anchors GitHub gives the headings of
// docs/troubleshooting.md: lower case, spaces to hyphens, punctuation other
// than hyphens and underscores dropped.
func troubleshootingAnchors(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		a := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(text)), ""), " ", "-")
		anchors[a] = true
	}
	return anchors
}

// TestDashboardQueriesParseWithPromtool hands every dashboard query to
// Prometheus' own parser (promtool check rules, one recording rule per
// query), with Grafana's variables replaced as Grafana would: a range for
// $__rate_interval, "match everything" for the others.
func TestDashboardQueriesParseWithPromtool(t *testing.T) {
	t.Parallel()
	bin := promtool(t)
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []rule
	expand := func(s string) string {
		s = strings.ReplaceAll(s, "$__rate_interval", "2m")
		return variableRef.ReplaceAllString(s, ".*")
	}
	for _, v := range d.Templating.List {
		q, _ := v.Query.(map[string]any)
		s, _ := q["query"].(string)
		// label_values(selector, label) is Grafana's; its selector is PromQL.
		if sel, ok := strings.CutPrefix(s, "label_values("); ok {
			sel = sel[:strings.LastIndex(sel, ",")]
			rules = append(rules, rule{Record: "dashboard:variable_" + v.Name, Expr: expand(sel)})
		}
	}
	for _, p := range d.Panels {
		for i, q := range p.Targets {
			rules = append(rules, rule{Record: fmt.Sprintf("dashboard:panel_%d_%d", p.ID, i), Expr: expand(q.Expr)})
		}
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := exec.Command(bin, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules over the dashboard's queries: %v\n%s", err, res)
	}
	if len(rules) < 20 {
		t.Errorf("only %d queries found in the dashboard", len(rules))
	}
}
