package groupconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func caDefaults() cloudprovider.NodeGroupAutoscalingOptions {
	return cloudprovider.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold:    0.5,
		ScaleDownGpuUtilizationThreshold: 0.5,
		ScaleDownUnneededTime:            10 * time.Minute,
		ScaleDownUnreadyTime:             20 * time.Minute,
		MaxNodeProvisionTime:             15 * time.Minute,
		ZeroOrMaxNodeScaling:             true,
	}
}

func TestParseGroupSettingsOptions(t *testing.T) {
	tests := []struct {
		name     string
		metadata map[string]string
		want     func(o *cloudprovider.NodeGroupAutoscalingOptions)
		problems []string // keys reported
	}{
		{
			name: "every option in the AWS spelling",
			metadata: map[string]string{
				OptionKey(OptionScaleDownUtilizationThreshold):    "0.25",
				OptionKey(OptionScaleDownGpuUtilizationThreshold): "0.75",
				OptionKey(OptionScaleDownUnneededTime):            "5m",
				OptionKey(OptionScaleDownUnreadyTime):             "1h30m",
				OptionKey(OptionMaxNodeProvisionTime):             "7m30s",
				OptionKey(OptionIgnoreDaemonSetsUtilization):      "true",
				"unrelated": "kept out",
			},
			want: func(o *cloudprovider.NodeGroupAutoscalingOptions) {
				o.ScaleDownUtilizationThreshold, o.ScaleDownGpuUtilizationThreshold = 0.25, 0.75
				o.ScaleDownUnneededTime, o.ScaleDownUnreadyTime, o.MaxNodeProvisionTime = 5*time.Minute, 90*time.Minute, 450*time.Second
				o.IgnoreDaemonSetsUtilization = true
			},
		},
		{
			name:     "node-label spelling",
			metadata: map[string]string{NodeLabelOptionKey(OptionScaleDownUnneededTime): "2m", "vke.vultr.com/node-pool": "x"},
			want:     func(o *cloudprovider.NodeGroupAutoscalingOptions) { o.ScaleDownUnneededTime = 2 * time.Minute },
		},
		{
			name: "both spellings agreeing",
			metadata: map[string]string{
				NodeLabelOptionKey(OptionScaleDownUnneededTime): "2m",
				OptionKey(OptionScaleDownUnneededTime):          "2m",
			},
			want: func(o *cloudprovider.NodeGroupAutoscalingOptions) { o.ScaleDownUnneededTime = 2 * time.Minute },
		},
		{
			name: "both spellings disagreeing: reported, neither used",
			metadata: map[string]string{
				NodeLabelOptionKey(OptionScaleDownUnneededTime): "2m",
				OptionKey(OptionScaleDownUnneededTime):          "3m",
				OptionKey(OptionScaleDownUnreadyTime):           "1m",
			},
			want:     func(o *cloudprovider.NodeGroupAutoscalingOptions) { o.ScaleDownUnreadyTime = time.Minute },
			problems: []string{NodeLabelOptionKey(OptionScaleDownUnneededTime), OptionKey(OptionScaleDownUnneededTime)},
		},
		{
			name: "bad values are reported and the good ones still apply",
			metadata: map[string]string{
				OptionKey(OptionScaleDownUtilizationThreshold):    "lots",
				OptionKey(OptionScaleDownGpuUtilizationThreshold): "1.5",
				OptionKey(OptionScaleDownUnneededTime):            "5 minutes",
				OptionKey(OptionScaleDownUnreadyTime):             "-1m",
				OptionKey(OptionMaxNodeProvisionTime):             "20m",
				OptionKey(OptionIgnoreDaemonSetsUtilization):      "yes",
				OptionKey("scaledownutilisationthreshold"):        "0.2",
			},
			want: func(o *cloudprovider.NodeGroupAutoscalingOptions) { o.MaxNodeProvisionTime = 20 * time.Minute },
			problems: []string{
				OptionKey(OptionIgnoreDaemonSetsUtilization), OptionKey(OptionScaleDownGpuUtilizationThreshold),
				OptionKey(OptionScaleDownUnneededTime), OptionKey(OptionScaleDownUnreadyTime),
				OptionKey("scaledownutilisationthreshold"), OptionKey(OptionScaleDownUtilizationThreshold),
			},
		},
		{
			name:     "NaN threshold refused",
			metadata: map[string]string{OptionKey(OptionScaleDownUtilizationThreshold): "NaN"},
			problems: []string{OptionKey(OptionScaleDownUtilizationThreshold)},
		},
		{
			name:     "zero and bounds accepted",
			metadata: map[string]string{OptionKey(OptionScaleDownUtilizationThreshold): "0", OptionKey(OptionScaleDownGpuUtilizationThreshold): "1", OptionKey(OptionScaleDownUnneededTime): "0s"},
			want: func(o *cloudprovider.NodeGroupAutoscalingOptions) {
				o.ScaleDownUtilizationThreshold, o.ScaleDownGpuUtilizationThreshold, o.ScaleDownUnneededTime = 0, 1, 0
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ParseGroupSettings("test tags", tc.metadata)
			var got []string
			for _, p := range s.Problems {
				got = append(got, p.Key)
				if p.Reason == "" {
					t.Errorf("problem without a reason: %+v", p)
				}
			}
			if !reflect.DeepEqual(got, tc.problems) {
				t.Errorf("problems on keys %v, want %v (%v)", got, tc.problems, s.Problems)
			}
			opts, err := s.GetOptions(caDefaults())
			if tc.want == nil {
				if !errors.Is(err, cloudprovider.ErrNotImplemented) || opts != nil {
					t.Fatalf("GetOptions = %+v, %v; want ErrNotImplemented", opts, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := caDefaults()
			tc.want(&want)
			if *opts != want {
				t.Errorf("GetOptions = %+v\nwant          %+v", *opts, want)
			}
		})
	}
}

func TestParseGroupSettingsHints(t *testing.T) {
	s := ParseGroupSettings("scaling-group tags", map[string]string{
		LabelHintKey("team"):                         "ml",
		LabelHintKey("example.com/disk"):             "ssd",
		LabelHintKey("bad key!"):                     "x",
		LabelHintKey("ok"):                           "not a valid value",
		TaintHintKey("dedicated"):                    "gpu:NoSchedule",
		TaintHintKey("empty-value"):                  ":PreferNoSchedule",
		TaintHintKey("no-effect"):                    "gpu",
		TaintHintKey("bad-effect"):                   "gpu:Sometimes",
		ResourceHintKey("example.com/dongle"):        "2",
		ResourceHintKey("ephemeral-storage"):         "100Gi",
		ResourceHintKey("example.com/negative"):      "-1",
		ResourceHintKey("example.com/words"):         "two",
		NodeLabelResourceKey("nvidia.com/gpu"):       "1",
		NodeLabelResourceKey("hugepages-2Mi"):        "1Gi",
		NodeLabelResourceKey("example.com/dongle"):   "3", // conflicts with the AWS spelling
		"other.resources.autoscaler.ca-providers.io": "not a key with a slash",
	})
	wantLabels := map[string]string{"team": "ml", "example.com/disk": "ssd"}
	if !reflect.DeepEqual(s.Hints.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", s.Hints.Labels, wantLabels)
	}
	wantTaints := []corev1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "empty-value", Effect: corev1.TaintEffectPreferNoSchedule},
	}
	if !reflect.DeepEqual(s.Hints.Taints, wantTaints) {
		t.Errorf("taints %v, want %v", s.Hints.Taints, wantTaints)
	}
	wantResources := map[string]string{"ephemeral-storage": "100Gi", "nvidia.com/gpu": "1", "hugepages-2Mi": "1Gi"}
	gotResources := map[string]string{}
	for k, v := range s.Hints.Resources {
		gotResources[string(k)] = v.String()
	}
	if !reflect.DeepEqual(gotResources, wantResources) {
		t.Errorf("resources %v, want %v", gotResources, wantResources)
	}
	wantProblems := []string{
		NodeLabelResourceKey("example.com/dongle"),
		LabelHintKey("bad key!"), LabelHintKey("ok"),
		ResourceHintKey("example.com/dongle"), ResourceHintKey("example.com/negative"), ResourceHintKey("example.com/words"),
		TaintHintKey("bad-effect"), TaintHintKey("no-effect"),
	}
	var got []string
	for _, p := range s.Problems {
		got = append(got, p.Key)
	}
	if !reflect.DeepEqual(got, wantProblems) {
		t.Errorf("problems on %v\nwant %v\n(%v)", got, wantProblems, s.Problems)
	}
	if _, err := s.GetOptions(caDefaults()); !errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Errorf("hints alone must not produce options, got %v", err)
	}
	if sum := s.HintsSummary(); !strings.Contains(sum, "taint/dedicated=gpu:NoSchedule") || !strings.HasSuffix(sum, "(from scaling-group tags)") {
		t.Errorf("HintsSummary = %q", sum)
	}
}

// The node-label spelling must be valid Kubernetes labels, since that metadata
// lands on the nodes; a key the cloud would refuse on a node would break the pool.
func TestNodeLabelSpellingIsValidLabels(t *testing.T) {
	for _, option := range OptionNames {
		if errs := validation.IsQualifiedName(NodeLabelOptionKey(option)); len(errs) > 0 {
			t.Errorf("%s: %v", NodeLabelOptionKey(option), errs)
		}
	}
	for _, name := range []corev1.ResourceName{"nvidia.com/gpu", "ephemeral-storage", "example.com/dongle"} {
		key := NodeLabelResourceKey(name)
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			t.Errorf("%s: %v", key, errs)
		}
		back, ok := nodeLabelResourceName(key)
		if !ok || back != string(name) {
			t.Errorf("%s reads back as %q, %v", key, back, ok)
		}
	}
	for _, v := range []string{"0.5", "5m", "1h30m", "true", "16Gi"} {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("value %q: %v", v, errs)
		}
	}
}

func TestGroupSettingsSummary(t *testing.T) {
	if s := ParseGroupSettings("pool labels", map[string]string{"a": "b"}).Summary(); s != "" {
		t.Errorf("no settings: Summary = %q, want empty", s)
	}
	s := ParseGroupSettings("pool labels", map[string]string{
		NodeLabelOptionKey(OptionScaleDownUnneededTime): "5m",
		NodeLabelResourceKey("example.com/dongle"):      "2",
		NodeLabelOptionKey(OptionScaleDownUnreadyTime):  "soon",
	})
	want := "from pool labels: options scaledownunneededtime=5m0s; hints resources/example.com/dongle=2; 1 bad entry ignored"
	if got := s.Summary(); got != want {
		t.Errorf("Summary = %q\nwant      %q", got, want)
	}
}

func TestOptionOverridesApplyKeepsUnsetDefaults(t *testing.T) {
	d := 3 * time.Minute
	o := OptionOverrides{MaxNodeProvisionTime: &d}
	got := o.Apply(caDefaults())
	want := caDefaults()
	want.MaxNodeProvisionTime = d
	if got != want {
		t.Errorf("Apply = %+v, want %+v", got, want)
	}
	if o.Empty() || !(OptionOverrides{}).Empty() {
		t.Error("Empty is wrong")
	}
}
