package exoscale

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// Reservations subtracted from capacity: SKS publishes no kubelet
// reservations, so these are conservative; CA adds DaemonSet pods itself.
var (
	reservedCPU    = resource.MustParse("200m")
	reservedMemory = resource.MustParse("600Mi")
	defaultDisk    = resource.MustParse("50Gi")
)

// buildTemplate describes a new node of the group: the instance type's
// resources, the nodepool's labels and taints, and the zone.
func buildTemplate(groupID string, st poolRecord, t exoapi.InstanceType, zone string) *corev1.Node {
	spec := groupconfig.TemplateSpec{
		GroupID: groupID, InstanceType: t.Name(), Region: zone, Zone: zone,
		CPUs: int64(t.CPUs), MemoryBytes: t.MemoryBytes, GPUs: int64(t.GPUs),
		EphemeralStorage: resource.NewQuantity(int64(st.diskSizeGiB)<<30, resource.BinarySI),
		Reserved:         corev1.ResourceList{corev1.ResourceCPU: reservedCPU, corev1.ResourceMemory: reservedMemory},
		CloudLabels:      st.labels,
		Settings:         st.settings,
	}
	if st.diskSizeGiB <= 0 {
		disk := defaultDisk.DeepCopy()
		spec.EphemeralStorage = &disk
	}
	if t.GPUs > 0 {
		spec.ProviderLabels = map[string]string{LabelGPUType: t.Family}
	}
	for _, tt := range st.taints {
		spec.Taints = append(spec.Taints, corev1.Taint{Key: tt.Key, Value: tt.Value, Effect: corev1.TaintEffect(tt.Effect)})
	}
	return groupconfig.BuildTemplateNode(spec)
}
