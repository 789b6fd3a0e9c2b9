package vultr

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

func TestTemplateNodeInfo(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tests := []struct {
		group   string
		cpu     string
		memory  string
		gpu     string
		labels  map[string]string
		taints  int
		noLabel []string
	}{
		{group: "a-main", cpu: "2", memory: "4Gi", labels: map[string]string{
			corev1.LabelInstanceTypeStable: "vc2-2c-4gb", LabelNodePool: "main", corev1.LabelTopologyRegion: "ams", corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64", "tier": "web"},
			noLabel: []string{LabelGPUType, LabelBareMetal}},
		{group: "b-gpu", cpu: "6", memory: "64Gi", gpu: "1", taints: 1, labels: map[string]string{
			corev1.LabelInstanceTypeStable: "vcg-a16-6c-64g-16vram", LabelGPUType: "NVIDIA_A16", LabelNodePool: "gpu"}},
		{group: "d-metal", cpu: "16", memory: "128Gi", labels: map[string]string{
			corev1.LabelInstanceTypeStable: "vbm-8c-132gb", LabelBareMetal: "true"}, noLabel: []string{LabelGPUType}},
	}
	for _, tc := range tests {
		t.Run(tc.group, func(t *testing.T) {
			t.Parallel()
			calls := e.fake.RequestCount()
			node, err := e.group(tc.group).TemplateNodeInfo(e.ctx())
			if err != nil {
				t.Fatal(err)
			}
			if e.fake.RequestCount() != calls {
				t.Fatal("TemplateNodeInfo called the cloud")
			}
			for res, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: tc.cpu, corev1.ResourceMemory: tc.memory, corev1.ResourcePods: "110"} {
				for _, list := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
					if q := list[res]; q.Cmp(resource.MustParse(want)) != 0 {
						t.Fatalf("%s = %s, want %s", res, q.String(), want)
					}
				}
			}
			q, hasGPU := node.Status.Capacity[groupconfig.ResourceGPU]
			if (tc.gpu != "") != hasGPU || (hasGPU && q.Cmp(resource.MustParse(tc.gpu)) != 0) {
				t.Fatalf("gpu capacity %v (present %v), want %q", q, hasGPU, tc.gpu)
			}
			for k, v := range tc.labels {
				if node.Labels[k] != v {
					t.Fatalf("label %s = %q, want %q", k, node.Labels[k], v)
				}
			}
			for _, k := range tc.noLabel {
				if _, ok := node.Labels[k]; ok {
					t.Fatalf("unexpected label %s", k)
				}
			}
			if len(node.Spec.Taints) != tc.taints {
				t.Fatalf("taints %v", node.Spec.Taints)
			}
			if tc.taints > 0 && (node.Spec.Taints[0].Key != "nvidia.com/gpu" || node.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule) {
				t.Fatalf("taint %+v", node.Spec.Taints[0])
			}
			ready := false
			for _, c := range node.Status.Conditions {
				ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
			}
			if !ready {
				t.Fatal("no Ready condition")
			}
			// The wire carries raw protobuf; it must round-trip.
			b, err := node.Marshal()
			if err != nil || len(b) == 0 {
				t.Fatalf("Marshal: %v", err)
			}
			var back corev1.Node
			if err := back.Unmarshal(b); err != nil || back.Labels[corev1.LabelInstanceTypeStable] != node.Labels[corev1.LabelInstanceTypeStable] {
				t.Fatalf("Unmarshal: %v", err)
			}
		})
	}
}
