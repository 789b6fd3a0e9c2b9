package exoscale

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

func TestBuildTemplate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		st      poolRecord
		typ     exoapi.InstanceType
		cpu     string
		memory  string
		gpu     int64
		storage string
		taints  int
	}{
		{"sks nodepool", poolRecord{sks: true, diskSizeGiB: 50, labels: map[string]string{"role": "worker"},
			taints: []exoapi.Taint{{Key: "dedicated", Value: "db", Effect: "NoExecute"}}},
			exoapi.InstanceType{Family: "standard", Size: "medium", CPUs: 2, MemoryBytes: 4 << 30}, "1800m", "3496Mi", 0, "50Gi", 1},
		{"gpu", poolRecord{sks: true, diskSizeGiB: 100},
			exoapi.InstanceType{Family: "gpua5000", Size: "small", CPUs: 12, MemoryBytes: 56 << 30, GPUs: 2}, "11800m", "56744Mi", 2, "100Gi", 0},
		{"plain pool without disk size", poolRecord{},
			exoapi.InstanceType{Family: "standard", Size: "micro", CPUs: 1, MemoryBytes: 512 << 20}, "800m", "0", 0, "50Gi", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := buildTemplate("pool-1", tc.st, tc.typ, "at-vie-1")
			alloc := n.Status.Allocatable
			if q := alloc[corev1.ResourceCPU]; q.String() != tc.cpu {
				t.Errorf("allocatable cpu %s, want %s", q.String(), tc.cpu)
			}
			if q := alloc[corev1.ResourceMemory]; q.String() != tc.memory {
				t.Errorf("allocatable memory %s, want %s", q.String(), tc.memory)
			}
			if q := n.Status.Capacity[corev1.ResourceEphemeralStorage]; q.String() != tc.storage {
				t.Errorf("ephemeral storage %s, want %s", q.String(), tc.storage)
			}
			q := n.Status.Capacity[groupconfig.ResourceGPU]
			if q.Value() != tc.gpu {
				t.Errorf("gpus %d, want %d", q.Value(), tc.gpu)
			}
			if (n.Labels[LabelGPUType] != "") != (tc.gpu > 0) {
				t.Errorf("gpu label %q with %d gpus", n.Labels[LabelGPUType], tc.gpu)
			}
			if n.Labels[corev1.LabelInstanceTypeStable] != tc.typ.Name() || n.Labels[corev1.LabelTopologyZone] != "at-vie-1" || n.Labels[corev1.LabelTopologyRegion] != "at-vie-1" || n.Labels[corev1.LabelOSStable] != "linux" {
				t.Errorf("labels %v", n.Labels)
			}
			for k, v := range tc.st.labels {
				if n.Labels[k] != v {
					t.Errorf("nodepool label %s missing", k)
				}
			}
			if len(n.Spec.Taints) != tc.taints {
				t.Errorf("taints %v", n.Spec.Taints)
			}
			if _, err := n.Marshal(); err != nil {
				t.Fatalf("template does not marshal: %v", err)
			}
		})
	}
}
