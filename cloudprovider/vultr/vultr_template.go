package vultr

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// buildTemplate describes a fresh node of pool from its plan. Vultr exposes
// no system reservations, so allocatable equals capacity; CA adds DaemonSet
// pods itself. GPU plans get one nvidia.com/gpu: Vultr has no GPU-count field
// and fractional vGPU plans exist, so the count cannot come from VRAM.
func buildTemplate(groupID string, pool vultrapi.NodePool, plan planInfo, region string) *corev1.Node {
	labels := map[string]string{}
	for k, v := range pool.Labels {
		labels[k] = v
	}
	labels[LabelOS] = "linux"
	labels[LabelArch] = "amd64"
	labels[LabelInstanceType] = plan.ID
	labels[LabelNodePool] = pool.Label
	if region != "" {
		labels[LabelRegion] = region
	}
	if plan.BareMetal {
		labels[LabelBareMetal] = "true"
	}

	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(plan.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(int64(plan.RAMMiB)*1024*1024, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(maxPodsPerNode, resource.DecimalSI),
	}
	if plan.DiskGB > 0 {
		res[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(plan.DiskGB)*1000*1000*1000, resource.DecimalSI)
	}
	if plan.GPUType != "" {
		labels[LabelGPUType] = plan.GPUType
		res[ResourceGPU] = *resource.NewQuantity(1, resource.DecimalSI)
	}

	var taints []corev1.Taint
	for _, t := range pool.Taints {
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}

	name := fmt.Sprintf("template-%s", groupID)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", Message: "template node built from the Vultr plan",
			}},
		},
	}
}
