package groupconfig

import (
	"math"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParseGroupSettings feeds arbitrary keys and values to the parser: it
// never panics, every entry that looks like a setting is either used or
// reported, and whatever is used is valid for CA and Kubernetes.
func FuzzParseGroupSettings(f *testing.F) {
	for _, seed := range [][2]string{
		{OptionKey(OptionScaleDownUtilizationThreshold), "0.5"},
		{OptionKey(OptionScaleDownUtilizationThreshold), "1e309"},
		{OptionKey(OptionScaleDownUnneededTime), "-5m"},
		{OptionKey(OptionScaleDownUnneededTime), "9999999999h"},
		{OptionKey(OptionIgnoreDaemonSetsUtilization), "T"},
		{NodeLabelOptionKey(OptionMaxNodeProvisionTime), "1h"},
		{OptionKey(""), ""},
		{LabelHintKey(""), "x"},
		{LabelHintKey("a/b/c"), "x"},
		{TaintHintKey("k"), "::NoSchedule"},
		{TaintHintKey("k"), "v:NoExecute"},
		{ResourceHintKey("nvidia.com/gpu"), "1e3"},
		{ResourceHintKey("x"), "99999999999999999999999999999Ei"},
		{NodeLabelResourceKey("a.b/c"), "0"},
		{".resources.autoscaler.ca-providers.io/x", "1"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		s := ParseGroupSettings("fuzz", map[string]string{key: value})
		used := !s.Options.Empty() || !s.Hints.Empty()
		looksLikeSetting := strings.HasPrefix(key, SettingsKeyPrefix) || strings.HasPrefix(key, NodeLabelOptionPrefix) || strings.Contains(key, NodeLabelResourceDomain+"/")
		if used && len(s.Problems) > 0 {
			t.Fatalf("one entry both used and reported: %+v", s)
		}
		if len(s.Problems) > 1 {
			t.Fatalf("one entry reported twice: %+v", s.Problems)
		}
		if !looksLikeSetting && (used || len(s.Problems) > 0) {
			t.Fatalf("unrelated key %q was read: %+v", key, s)
		}
		o := s.Options
		for _, th := range []*float64{o.ScaleDownUtilizationThreshold, o.ScaleDownGpuUtilizationThreshold} {
			if th != nil && (math.IsNaN(*th) || *th < 0 || *th > 1) {
				t.Fatalf("threshold %v accepted from %q", *th, value)
			}
		}
		for _, d := range []*time.Duration{o.ScaleDownUnneededTime, o.ScaleDownUnreadyTime, o.MaxNodeProvisionTime} {
			if d != nil && *d < 0 {
				t.Fatalf("negative duration accepted from %q", value)
			}
		}
		for k, v := range s.Hints.Labels {
			if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
				t.Fatalf("invalid label %q=%q accepted", k, v)
			}
		}
		for _, taint := range s.Hints.Taints {
			if len(validation.IsQualifiedName(taint.Key)) > 0 || len(validation.IsValidLabelValue(taint.Value)) > 0 {
				t.Fatalf("invalid taint %+v accepted", taint)
			}
		}
		for name, q := range s.Hints.Resources {
			if len(validation.IsQualifiedName(string(name))) > 0 || q.Sign() < 0 {
				t.Fatalf("invalid resource %s=%s accepted", name, q.String())
			}
		}
		_ = s.Summary()
	})
}
