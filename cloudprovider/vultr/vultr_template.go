package vultr

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// buildTemplate describes a new node of pool from its plan. Vultr states no
// system reservations, so allocatable equals capacity. A GPU plan gets one
// nvidia.com/gpu: Vultr has no GPU-count field and fractional vGPU plans exist.
func buildTemplate(groupID string, pool vultrapi.NodePool, plan planInfo, region string, settings groupconfig.GroupSettings) *corev1.Node {
	providerLabels := map[string]string{LabelNodePool: pool.Label}
	if plan.BareMetal {
		providerLabels[LabelBareMetal] = "true"
	}
	spec := groupconfig.TemplateSpec{
		GroupID: groupID, InstanceType: plan.ID, Region: region,
		CPUs: int64(plan.VCPUs), MemoryBytes: int64(plan.RAMMiB) * 1024 * 1024,
		CloudLabels: pool.Labels, ProviderLabels: providerLabels,
		Settings: settings,
	}
	if plan.DiskGB > 0 {
		spec.EphemeralStorage = resource.NewQuantity(int64(plan.DiskGB)*1000*1000*1000, resource.DecimalSI)
	}
	if plan.GPUType != "" {
		providerLabels[LabelGPUType] = plan.GPUType
		spec.GPUs = 1
	}
	for _, t := range pool.Taints {
		spec.Taints = append(spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return groupconfig.BuildTemplateNode(spec)
}
