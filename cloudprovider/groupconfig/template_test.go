package groupconfig

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestBuildTemplateNodeWellKnownLabelsWin(t *testing.T) {
	node := BuildTemplateNode(TemplateSpec{
		GroupID: "g1", InstanceType: "big", Arch: "arm64", Region: "r1", Zone: "z1",
		CPUs: 4, MemoryBytes: 8 << 30, GPUs: 2,
		CloudLabels:    map[string]string{corev1.LabelArchStable: "amd64", corev1.LabelTopologyZone: "elsewhere", "team": "cloud", "pool": "cloud"},
		ProviderLabels: map[string]string{"pool": "provider", corev1.LabelInstanceTypeStable: "small"},
		Settings:       GroupSettings{Hints: TemplateHints{Labels: map[string]string{"team": "hint"}, Resources: corev1.ResourceList{"example.com/fpga": resource.MustParse("1")}}},
		Reserved:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("100Gi")},
		Taints:         []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}},
	})
	want := map[string]string{
		corev1.LabelArchStable: "arm64", corev1.LabelOSStable: "linux", corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1",
		corev1.LabelInstanceTypeStable: "big", corev1.LabelHostname: "template-node-for-g1", "team": "hint", "pool": "provider",
	}
	for k, v := range want {
		if node.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	if node.Name != TemplateNodeName("g1") {
		t.Errorf("name %s", node.Name)
	}
	if q := node.Status.Capacity[ResourceGPU]; q.Value() != 2 {
		t.Errorf("GPU capacity %v", q)
	}
	if q := node.Status.Capacity[corev1.ResourcePods]; q.Value() != DefaultMaxPods {
		t.Errorf("pods %v", q)
	}
	if q := node.Status.Allocatable[corev1.ResourceCPU]; q.MilliValue() != 3500 {
		t.Errorf("allocatable cpu %v, want 3500m", q.String())
	}
	if q := node.Status.Allocatable[corev1.ResourceMemory]; !q.IsZero() {
		t.Errorf("allocatable memory %v, want 0 (reservation above capacity)", q.String())
	}
	if _, ok := node.Status.Capacity["example.com/fpga"]; !ok || len(node.Spec.Taints) != 1 {
		t.Error("hint resource or taint missing")
	}
	if _, err := node.Marshal(); err != nil {
		t.Fatal(err)
	}
}

// Hinted taints join the group's own without repeating one with the same key
// and effect, and the template names its hints and their source.
func TestBuildTemplateNodeHints(t *testing.T) {
	node := BuildTemplateNode(TemplateSpec{
		GroupID: "g1", CPUs: 1, MemoryBytes: 1 << 30,
		Taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
		Settings: GroupSettings{Source: "scaling-group tags", Hints: TemplateHints{Taints: []corev1.Taint{
			{Key: "dedicated", Value: "other", Effect: corev1.TaintEffectNoSchedule},
			{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute},
		}, Labels: map[string]string{"team": "ml"}}},
	})
	want := []corev1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute},
	}
	if !reflect.DeepEqual(node.Spec.Taints, want) {
		t.Errorf("taints %v, want %v", node.Spec.Taints, want)
	}
	got := node.Annotations[HintsAnnotation]
	if !strings.Contains(got, "label/team=ml") || !strings.HasSuffix(got, "(from scaling-group tags)") {
		t.Errorf("annotation %q", got)
	}
	withKey := BuildTemplateNode(TemplateSpec{GroupID: "g3", CPUs: 1, MemoryBytes: 1,
		CloudLabels: map[string]string{OptionKey(OptionScaleDownUnneededTime): "5m", "team": "ml"}})
	if _, leaked := withKey.Labels[OptionKey(OptionScaleDownUnneededTime)]; leaked || withKey.Labels["team"] != "ml" {
		t.Errorf("cloud labels in the template %v: settings keys must be left out, others kept", withKey.Labels)
	}
	if plain := BuildTemplateNode(TemplateSpec{GroupID: "g2", CPUs: 1, MemoryBytes: 1}); len(plain.Annotations) != 0 {
		t.Errorf("a template without hints has annotations %v", plain.Annotations)
	}
}

// A pool label that is a malformed setting (node-label spelling, as Vultr
// and SKS pools carry them) is ignored like every malformed entry, so the
// template leaves it out; valid settings labels and other labels stay, as
// the cloud puts them on the nodes.
func TestBuildTemplateNodeLeavesOutMalformedSettingLabels(t *testing.T) {
	t.Parallel()
	bad, good := NodeLabelOptionKey(OptionMaxNodeProvisionTime), NodeLabelOptionKey(OptionScaleDownUnneededTime)
	badResource := NodeLabelResourceKey("example.com/license")
	labels := map[string]string{bad: "soon", good: "5m", badResource: "four", "workload": "general"}
	settings := ParseGroupSettings("node pool labels", labels)
	if len(settings.Problems) != 2 {
		t.Fatalf("problems %v, want the malformed option and resource", settings.Problems)
	}
	node := BuildTemplateNode(TemplateSpec{GroupID: "g1", CPUs: 1, MemoryBytes: 1, CloudLabels: labels, Settings: settings})
	for _, k := range []string{bad, badResource} {
		if v, ok := node.Labels[k]; ok {
			t.Errorf("template label %s=%q: a malformed setting must not reach the template", k, v)
		}
	}
	if node.Labels[good] != "5m" || node.Labels["workload"] != "general" {
		t.Errorf("template labels %v, want %s=5m and workload=general kept", node.Labels, good)
	}
}
