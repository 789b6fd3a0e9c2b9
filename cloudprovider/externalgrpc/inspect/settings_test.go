package inspect

import (
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// TestShowsPerGroupSettings: a group with per-group settings shows which
// options differ from CA's defaults, the hints merged into its template and
// where both came from; a group without shows CA's defaults.
func TestShowsPerGroupSettings(t *testing.T) {
	p := cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud(
		cloudprovidertest.CloudGroup{ID: "plain", Min: 1, Max: 3, Running: 1},
		cloudprovidertest.CloudGroup{ID: "tuned", Min: 1, Max: 3, Running: 1, Tags: map[string]string{
			groupconfig.OptionKey(groupconfig.OptionScaleDownUnneededTime): "5m",
			groupconfig.OptionKey(groupconfig.OptionMaxNodeProvisionTime):  "soon",
			groupconfig.LabelHintKey("team"):                               "ml",
			groupconfig.ResourceHintKey("example.com/dongle"):              "2",
		}},
	))
	addr := serve(t, p, nil, nil)
	code, out, stderr := inspectRun(t, "--address", addr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"overrides            scaledownunneededtime=5m0s (default 10m0s)\n",
		"template hints       label/team=ml,resources/example.com/dongle=2 (from in-memory group tags)\n",
		"settings from in-memory group tags: options scaledownunneededtime=5m0s; hints label/team=ml,resources/example.com/dongle=2; 1 bad entry ignored",
		"options              CA defaults (no override)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = inspectRun(t, "--address", addr, "-o", "json", "--group", "tuned")
	if code != 0 {
		t.Fatal(code)
	}
	g := decodeResult(t, out).Report.Groups[0]
	if g.Options == nil || len(g.Options.Overrides) != 1 || g.Template == nil || !strings.HasSuffix(g.Template.Hints, "(from in-memory group tags)") {
		t.Fatalf("json group %+v", g)
	}
}
