// Package cloudprovider is the provider contract served to the upstream Cluster
// Autoscaler through its externalgrpc cloud provider.
//
// The interfaces mirror the method set of the upstream core's CloudProvider and
// NodeGroup that the externalgrpc protocol can carry; methods the protocol cannot
// carry (machine types, auto-provisioning, resource limits, HasInstance) are left
// out because the upstream client answers them locally. Every method takes a
// context first so that CA's per-RPC deadline reaches the cloud calls.
package cloudprovider

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// CloudProvider is what a cloud integration implements. Implementations must be
// safe for concurrent use: CA issues NodeGroupNodes, DeleteNodes and IncreaseSize
// from several goroutines at once while its main loop runs.
type CloudProvider interface {
	// Name returns the provider's registered name.
	Name() string
	// NodeGroups returns every group CA manages, served from the last snapshot.
	NodeGroups(ctx context.Context) ([]NodeGroup, error)
	// NodeGroup returns the group with id from the last snapshot, or
	// ErrNodeGroupNotFound; a lookup by id, since most RPCs name one group.
	NodeGroup(ctx context.Context, id string) (NodeGroup, error)
	// NodeGroupForNode returns the group owning node, or (nil, nil) when the node
	// is not autoscaled. CA does not cache the nil answer, so it must be cheap.
	// A node whose cloud lookup failed is (nil, nil) too: CA does not read an
	// error as "not autoscaled".
	NodeGroupForNode(ctx context.Context, node *corev1.Node) (NodeGroup, error)
	// Pricing returns the price model, or ErrNotImplemented.
	Pricing(ctx context.Context) (PricingModel, error)
	// GPULabel returns the label key whose presence marks a GPU node ("" if none).
	GPULabel(ctx context.Context) (string, error)
	// GetAvailableGPUTypes returns the set of GPU type names (label values).
	GetAvailableGPUTypes(ctx context.Context) (map[string]struct{}, error)
	// Cleanup releases provider resources. The process keeps serving afterwards:
	// CA sends Cleanup when it exits and reconnects to the same server.
	Cleanup(ctx context.Context) error
	// Refresh takes a new snapshot of the cloud. On failure the previous snapshot
	// stays in place, and the record of mutations the cloud does not show yet
	// is kept.
	Refresh(ctx context.Context) error
}

// AsNodeGroups returns a provider's groups, in their order, as the
// contract's NodeGroups, for CloudProvider.NodeGroups.
func AsNodeGroups[G NodeGroup](groups []G) []NodeGroup {
	out := make([]NodeGroup, len(groups))
	for i, g := range groups {
		out[i] = g
	}
	return out
}

// FoundNodeGroup answers CloudProvider.NodeGroup from a lookup: g when ok,
// else ErrNodeGroupNotFound (never a typed nil).
func FoundNodeGroup[G NodeGroup](id string, g G, ok bool) (NodeGroup, error) {
	if !ok {
		return nil, Errorf(ErrNodeGroupNotFound, "node group %q", id)
	}
	return g, nil
}

// NodeGroup is a set of nodes with the same shape that CA can resize.
type NodeGroup interface {
	// Id returns the group's stable unique identifier.
	Id(ctx context.Context) string
	// MinSize returns the minimum target size.
	MinSize(ctx context.Context) int
	// MaxSize returns the maximum target size.
	MaxSize(ctx context.Context) int
	// Debug returns a one-line human-readable description.
	Debug(ctx context.Context) string
	// TargetSize returns the desired size: instances that exist or are being
	// created, not ones being deleted. It shows a mutation as soon as the
	// mutating call returns.
	TargetSize(ctx context.Context) (int, error)
	// IncreaseSize raises the target by delta (> 0) and returns once the cloud
	// has accepted the request; it never waits for machines to boot.
	IncreaseSize(ctx context.Context, delta int) error
	// DeleteNodes deletes exactly these nodes and lowers the target by as many.
	DeleteNodes(ctx context.Context, nodes []*corev1.Node) error
	// DecreaseTargetSize lowers the target (delta < 0) for requests not yet
	// fulfilled; it never deletes a registered node.
	DecreaseTargetSize(ctx context.Context, delta int) error
	// Nodes returns every instance of the group, registered or not. Instance ids
	// equal the providerID their Node has, byte for byte.
	Nodes(ctx context.Context) ([]Instance, error)
	// TemplateNodeInfo returns what a fresh node of the group looks like, or
	// ErrNotImplemented when no template can be built.
	TemplateNodeInfo(ctx context.Context) (*corev1.Node, error)
	// GetOptions returns per-group overrides built from defaults, or
	// ErrNotImplemented (or nil) when the group has none. CA zeroes the options
	// the protocol cannot carry whenever options are returned, so return them
	// only for real overrides.
	GetOptions(ctx context.Context, defaults NodeGroupAutoscalingOptions) (*NodeGroupAutoscalingOptions, error)
	// Status returns what the server reports about the group besides its
	// sizes and instances. It never calls the cloud.
	Status(ctx context.Context) GroupStatus
}

// GroupStatus is what a node group reports besides its sizes and instances.
// The server logs and counts it the same way for every provider.
type GroupStatus struct {
	// SettingsSource names the cloud metadata the group's settings come
	// from, e.g. "scaling-group tags".
	SettingsSource string
	// Settings is a one-line account of those settings, "" when there is
	// nothing to say; it is logged when it changes.
	Settings string
	// SettingProblems are the metadata entries that looked like settings
	// but were ignored as malformed.
	SettingProblems []SettingProblem
	// QuarantinedUntil is when the group's quarantine after a mutation of
	// unknown outcome ends; zero when there is none.
	QuarantinedUntil time.Time
	// Managed is why the provider manages the group. The server logs it when
	// the group appears, changes or leaves, and ends the group's Debug text
	// with it.
	Managed Management
}

// SettingProblem is one metadata entry that looked like a per-group setting
// but was ignored.
type SettingProblem struct {
	Key, Value, Reason string
}

// String implements fmt.Stringer.
func (p SettingProblem) String() string {
	return fmt.Sprintf("%s=%q: %s", p.Key, p.Value, p.Reason)
}

// PricingModel prices nodes and pods for CA's price expander. Only ratios
// matter, so any single currency works.
type PricingModel interface {
	// NodePrice prices node (often a template node without providerID, so
	// implementations price by labels) over [start, end).
	NodePrice(ctx context.Context, node *corev1.Node, start, end time.Time) (float64, error)
	// PodPrice prices pod over [start, end).
	PodPrice(ctx context.Context, pod *corev1.Pod, start, end time.Time) (float64, error)
}

// InstanceState is the lifecycle state of an instance; the numbers equal the
// wire enum and the upstream core's values.
type InstanceState int

const (
	// InstanceRunning means the instance is up (it may or may not be registered yet).
	InstanceRunning InstanceState = 1
	// InstanceCreating means the instance is being provisioned.
	InstanceCreating InstanceState = 2
	// InstanceDeleting means the instance is going away; CA ignores it for registration.
	InstanceDeleting InstanceState = 3
)

// String implements fmt.Stringer.
func (s InstanceState) String() string {
	switch s {
	case InstanceRunning:
		return "running"
	case InstanceCreating:
		return "creating"
	case InstanceDeleting:
		return "deleting"
	default:
		return "unspecified"
	}
}

// InstanceErrorClass classifies an instance error; the numbers are the core's.
type InstanceErrorClass int

const (
	// OutOfResourcesErrorClass means the cloud lacked capacity or quota.
	OutOfResourcesErrorClass InstanceErrorClass = 1
	// OtherErrorClass is any other error.
	OtherErrorClass InstanceErrorClass = 99
)

// InstanceErrorInfo describes why an instance failed. CA reads it only on
// creating instances with a non-empty ErrorCode, and then deletes the instance.
type InstanceErrorInfo struct {
	ErrorClass   InstanceErrorClass
	ErrorCode    string
	ErrorMessage string
}

// InstanceStatus is an instance's state plus optional error information.
// ErrorInfo goes only with InstanceCreating (use FailedCreation): CA
// ignores it on any other state.
type InstanceStatus struct {
	State     InstanceState
	ErrorInfo *InstanceErrorInfo
}

// FailedCreation is the status of an instance whose creation failed: creating
// with error info, which makes CA back the group off and delete the instance.
func FailedCreation(info InstanceErrorInfo) *InstanceStatus {
	return &InstanceStatus{State: InstanceCreating, ErrorInfo: &info}
}

// Instance is one cloud machine of a group.
type Instance struct {
	// Id equals the Kubernetes Node's spec.providerID.
	Id     string
	Status *InstanceStatus
}

// NodeGroupAutoscalingOptions are the per-group settings the protocol carries.
type NodeGroupAutoscalingOptions struct {
	ScaleDownUtilizationThreshold    float64
	ScaleDownGpuUtilizationThreshold float64
	ScaleDownUnneededTime            time.Duration
	ScaleDownUnreadyTime             time.Duration
	MaxNodeProvisionTime             time.Duration
	ZeroOrMaxNodeScaling             bool
	IgnoreDaemonSetsUtilization      bool
}
