package groupconfig

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceGPU is the extended resource of the NVIDIA device plugin, which
// the three clouds' GPU nodes carry.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// DefaultMaxPods is the pod capacity of template nodes: the kubelet default
// the three clouds' managed nodes keep.
const DefaultMaxPods = 110

// TemplateSpec is what a provider knows about a fresh node of a group.
type TemplateSpec struct {
	// GroupID names the node (TemplateNodeName) and its hostname label.
	GroupID string
	// InstanceType is the cloud's machine type (plan, instance type).
	InstanceType string
	// OS and Arch default to linux and amd64.
	OS, Arch string
	// Region and Zone become the topology labels when set.
	Region, Zone string
	// CPUs, MemoryBytes and GPUs size the node; EphemeralStorage is optional.
	CPUs             int64
	MemoryBytes      int64
	GPUs             int64
	EphemeralStorage *resource.Quantity
	// MaxPods defaults to DefaultMaxPods.
	MaxPods int64
	// Reserved is subtracted from capacity for allocatable (kubelet and
	// system reservations the cloud applies).
	Reserved corev1.ResourceList
	// CloudLabels are the labels the cloud puts on the group's nodes (pool
	// labels set by the user). They never override well-known labels.
	CloudLabels map[string]string
	// ProviderLabels are labels the provider knows nodes carry (pool name,
	// GPU model). They override cloud labels, never well-known ones.
	ProviderLabels map[string]string
	// Taints are the taints the group's nodes register with.
	Taints []corev1.Taint
	// Settings are the group's per-group settings: their hints (labels,
	// taints, resources) are added and their source named in the
	// HintsAnnotation. A cloud label that is a malformed entry (one of their
	// Problems) is left out. Hinted labels never override well-known labels.
	Settings GroupSettings
}

// TemplateHints are extra labels, taints and resources for a template.
type TemplateHints struct {
	Labels    map[string]string
	Taints    []corev1.Taint
	Resources corev1.ResourceList
}

// TemplateNodeName returns the name of a group's template node.
func TemplateNodeName(groupID string) string { return "template-node-for-" + groupID }

// BuildTemplateNode builds a group's template node for every provider. Label
// precedence, lowest first: cloud labels, hint labels, provider labels, then
// the well-known labels (os, arch, instance type, region, zone, hostname),
// which nothing overrides, so a user label on a pool cannot make CA expect
// another architecture or zone than the node will have.
func BuildTemplateNode(spec TemplateSpec) *corev1.Node {
	name := TemplateNodeName(spec.GroupID)
	osName, arch := spec.OS, spec.Arch
	if osName == "" {
		osName = "linux"
	}
	if arch == "" {
		arch = "amd64"
	}
	hints := spec.Settings.Hints
	labels := map[string]string{}
	for k, v := range spec.CloudLabels {
		// AWS-spelling settings keys in a pool's labels are settings, not
		// node labels (several slashes: not even valid label keys).
		if !strings.HasPrefix(k, SettingsKeyPrefix) && !spec.Settings.malformed(k) {
			labels[k] = v
		}
	}
	maps.Copy(labels, hints.Labels)
	maps.Copy(labels, spec.ProviderLabels)
	labels[corev1.LabelOSStable] = osName
	labels[corev1.LabelArchStable] = arch
	labels[corev1.LabelHostname] = name
	if spec.InstanceType != "" {
		labels[corev1.LabelInstanceTypeStable] = spec.InstanceType
	}
	if spec.Region != "" {
		labels[corev1.LabelTopologyRegion] = spec.Region
	}
	if spec.Zone != "" {
		labels[corev1.LabelTopologyZone] = spec.Zone
	}

	maxPods := spec.MaxPods
	if maxPods <= 0 {
		maxPods = DefaultMaxPods
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(spec.CPUs, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(spec.MemoryBytes, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(maxPods, resource.DecimalSI),
	}
	if spec.EphemeralStorage != nil {
		capacity[corev1.ResourceEphemeralStorage] = spec.EphemeralStorage.DeepCopy()
	}
	if spec.GPUs > 0 {
		capacity[ResourceGPU] = *resource.NewQuantity(spec.GPUs, resource.DecimalSI)
	}
	for name, q := range hints.Resources {
		capacity[name] = q.DeepCopy()
	}
	allocatable := capacity.DeepCopy()
	for name, q := range spec.Reserved {
		if v, ok := allocatable[name]; ok {
			if v.Cmp(q) <= 0 {
				allocatable[name] = *resource.NewQuantity(0, v.Format)
				continue
			}
			v.Sub(q)
			allocatable[name] = v
		}
	}
	// A hinted taint the group's nodes register with anyway is not repeated:
	// a Node cannot have two taints with the same key and effect.
	taints := append([]corev1.Taint(nil), spec.Taints...)
	for _, h := range hints.Taints {
		if !slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.MatchTaint(&h) }) {
			taints = append(taints, h)
		}
	}
	var annotations map[string]string
	if summary := spec.Settings.HintsSummary(); summary != "" {
		annotations = map[string]string{HintsAnnotation: summary}
	}

	now := metav1.Now()
	condition := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Conditions: []corev1.NodeCondition{
				condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
				condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
				condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
				condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
				condition(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "RouteCreated"),
			},
			NodeInfo: corev1.NodeSystemInfo{OperatingSystem: osName, Architecture: arch},
		},
	}
}
