package exoscale

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
)

// Reservations subtracted from capacity for allocatable. SKS does not publish
// its kubelet reservations, so these are conservative estimates; CA adds
// DaemonSet pods on top itself.
var (
	reservedCPU    = resource.MustParse("200m")
	reservedMemory = resource.MustParse("600Mi")
	defaultDisk    = resource.MustParse("50Gi")
)

// buildTemplate describes a fresh node of the group for scale-from-zero: the
// instance type's CPU, memory and GPUs, the nodepool's labels and taints, the
// zone and instance-type labels, and a Ready condition.
func buildTemplate(groupID string, st groupState, t exoapi.InstanceType, zone string) *corev1.Node {
	name := fmt.Sprintf("template-node-for-%s", groupID)
	labels := map[string]string{
		LabelOS:           "linux",
		LabelArch:         "amd64",
		LabelHostname:     name,
		LabelInstanceType: t.Name(),
		LabelRegion:       zone,
		LabelZone:         zone,
	}
	for k, v := range st.labels {
		labels[k] = v
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(t.CPUs), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(t.MemoryBytes, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(templateMaxPods, resource.DecimalSI),
	}
	if st.diskSizeGiB > 0 {
		capacity[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(st.diskSizeGiB)<<30, resource.BinarySI)
	} else {
		capacity[corev1.ResourceEphemeralStorage] = defaultDisk.DeepCopy()
	}
	if t.GPUs > 0 {
		capacity[ResourceGPU] = *resource.NewQuantity(int64(t.GPUs), resource.DecimalSI)
		labels[LabelGPUType] = t.Family
	}
	allocatable := corev1.ResourceList{}
	for k, v := range capacity {
		allocatable[k] = v.DeepCopy()
	}
	subtract(allocatable, corev1.ResourceCPU, reservedCPU)
	subtract(allocatable, corev1.ResourceMemory, reservedMemory)

	var taints []corev1.Taint
	for _, tt := range st.taints {
		taints = append(taints, corev1.Taint{Key: tt.Key, Value: tt.Value, Effect: corev1.TaintEffect(tt.Effect)})
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "template node for scale-from-zero",
			}},
			NodeInfo: corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
}

// subtract lowers list[name] by q without going below zero.
func subtract(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	v, ok := list[name]
	if !ok {
		return
	}
	if v.Cmp(q) <= 0 {
		list[name] = *resource.NewQuantity(0, v.Format)
		return
	}
	v.Sub(q)
	list[name] = v
}
