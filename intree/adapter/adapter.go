// Package adapter serves one of this repository's providers (the
// cloudprovider.CloudProvider contract the externalgrpc server serves) as
// an upstream Cluster Autoscaler in-tree provider, so CA's own router file
// can register it under the provider's name.
//
// It maps once what differs between the two contracts: ours take a
// context, build a template *corev1.Node and return our error classes;
// upstream's take none, want a *framework.NodeInfo and read
// ErrNotImplemented by identity. The methods upstream has and ours does not
// answer as upstream's in-tree providers do, or from the snapshot
// (HasInstance) and CA's own options (the resource limiter).
package adapter

import (
	"context"
	"errors"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	caprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	caconfig "k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/gpu"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/reporting"
)

// Timeouts stand in for the deadline the externalgrpc client gives every
// call: in-tree, CA's calls carry none.
const (
	// ReadTimeout bounds a read; reads are answered from the snapshot,
	// except a node the snapshot lacks, whose lookup ends before it.
	ReadTimeout = 5 * time.Second
	// MutationTimeout bounds a mutation: the HTTP stack's lifetime of one
	// cloud call (cloudhttp's request lifetime) plus a margin for the
	// guard's fresh read.
	MutationTimeout = 2 * time.Minute
	// RefreshTimeout bounds one refresh, as the externalgrpc server's
	// background refresh is bounded.
	RefreshTimeout = 2 * time.Minute
)

// Client is the client every in-tree mutation's log line names.
const Client = "in-tree"

// Provider is our provider as an upstream cloudprovider.CloudProvider.
type Provider struct {
	// p is the provider decorated with what is reported about its groups,
	// as the externalgrpc server decorates it: every refresh and mutation
	// is logged and counted alike on both paths.
	p       *reporting.Provider
	limiter *caprovider.ResourceLimiter
}

var _ caprovider.CloudProvider = (*Provider)(nil)

// New adapts p, reporting to m (nil: logs only); limiter is the one CA's
// builder computed from its options. Decorate a provider once: New does.
func New(p cloudprovider.CloudProvider, m *metrics.Metrics, limiter *caprovider.ResourceLimiter) *Provider {
	return &Provider{p: reporting.Wrap(p, m), limiter: limiter}
}

func readContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), ReadTimeout)
}

// Name implements caprovider.CloudProvider.
func (a *Provider) Name() string { return a.p.Name() }

// NodeGroups implements caprovider.CloudProvider. Upstream has no error to
// return; a failure is an empty list, as the snapshot before the first
// refresh is.
func (a *Provider) NodeGroups() []caprovider.NodeGroup {
	ctx, cancel := readContext()
	defer cancel()
	groups, err := a.p.NodeGroups(ctx)
	if err != nil {
		return nil
	}
	out := make([]caprovider.NodeGroup, len(groups))
	for i, g := range groups {
		out[i] = &NodeGroup{g: g, r: a.p}
	}
	return out
}

// NodeGroupForNode implements caprovider.CloudProvider. Upstream reads a
// nil group (an untyped nil, not a nil *NodeGroup) as "not autoscaled".
func (a *Provider) NodeGroupForNode(node *apiv1.Node) (caprovider.NodeGroup, error) {
	ctx, cancel := readContext()
	defer cancel()
	g, err := a.p.NodeGroupForNode(ctx, node)
	if err != nil {
		return nil, toUpstream(err)
	}
	if g == nil {
		return nil, nil
	}
	return &NodeGroup{g: g, r: a.p}, nil
}

// HasInstance implements caprovider.CloudProvider from the snapshot: a
// node of one of our groups has an instance when the group lists it. A
// node in no group is not ours to judge: ErrNotImplemented, which CA reads
// as "ask the node's taints", as for upstream's providers.
func (a *Provider) HasInstance(node *apiv1.Node) (bool, error) {
	ctx, cancel := readContext()
	defer cancel()
	g, err := a.p.NodeGroupForNode(ctx, node)
	if err != nil || g == nil || node.Spec.ProviderID == "" {
		return true, caprovider.ErrNotImplemented
	}
	list, err := g.Nodes(ctx)
	if err != nil {
		return true, caprovider.ErrNotImplemented
	}
	for _, in := range list {
		if in.Id == node.Spec.ProviderID {
			return true, nil
		}
	}
	return false, nil
}

// Pricing implements caprovider.CloudProvider.
func (a *Provider) Pricing() (caprovider.PricingModel, caerrors.AutoscalerError) {
	ctx, cancel := readContext()
	defer cancel()
	m, err := a.p.Pricing(ctx)
	if err != nil {
		if errors.Is(err, cloudprovider.ErrNotImplemented) {
			return nil, caprovider.ErrNotImplemented
		}
		return nil, caerrors.ToAutoscalerError(caerrors.CloudProviderError, err)
	}
	return pricing{m: m}, nil
}

// GetAvailableMachineTypes implements caprovider.CloudProvider: none, as
// upstream's providers without auto-provisioning answer.
func (a *Provider) GetAvailableMachineTypes() ([]string, error) {
	return []string{}, nil
}

// NewNodeGroup implements caprovider.CloudProvider: these clouds' groups
// are not auto-provisioned.
func (a *Provider) NewNodeGroup(string, map[string]string, map[string]string, []apiv1.Taint, map[string]resource.Quantity) (caprovider.NodeGroup, error) {
	return nil, caprovider.ErrNotImplemented
}

// GetResourceLimiter implements caprovider.CloudProvider: CA's own limits
// (--cores-total, --memory-total, --gpu-total), as its builder made them.
func (a *Provider) GetResourceLimiter() (*caprovider.ResourceLimiter, error) {
	return a.limiter, nil
}

// GPULabel implements caprovider.CloudProvider.
func (a *Provider) GPULabel() string {
	ctx, cancel := readContext()
	defer cancel()
	l, _ := a.p.GPULabel(ctx)
	return l
}

// GetAvailableGPUTypes implements caprovider.CloudProvider.
func (a *Provider) GetAvailableGPUTypes() map[string]struct{} {
	ctx, cancel := readContext()
	defer cancel()
	t, _ := a.p.GetAvailableGPUTypes(ctx)
	return t
}

// GetNodeGpuConfig implements caprovider.CloudProvider from the GPU label,
// as upstream's providers do.
func (a *Provider) GetNodeGpuConfig(node *apiv1.Node) *caprovider.GpuConfig {
	return gpu.GetNodeGPUFromCloudProvider(a, node)
}

// Cleanup implements caprovider.CloudProvider.
func (a *Provider) Cleanup() error {
	ctx, cancel := readContext()
	defer cancel()
	return toUpstream(a.p.Cleanup(ctx))
}

// Refresh implements caprovider.CloudProvider. CA calls it at the start of
// every loop; a failure keeps the last snapshot in place and fails the loop,
// as upstream's providers' refreshes do.
func (a *Provider) Refresh() error {
	ctx, cancel := context.WithTimeout(context.Background(), RefreshTimeout)
	defer cancel()
	return toUpstream(a.p.Refresh(ctx))
}

// NodeGroup is one of our groups as an upstream cloudprovider.NodeGroup.
type NodeGroup struct {
	g cloudprovider.NodeGroup
	r *reporting.Provider
}

var _ caprovider.NodeGroup = (*NodeGroup)(nil)

// MaxSize implements caprovider.NodeGroup.
func (n *NodeGroup) MaxSize() int { return n.g.MaxSize(context.Background()) }

// MinSize implements caprovider.NodeGroup.
func (n *NodeGroup) MinSize() int { return n.g.MinSize(context.Background()) }

// Id implements caprovider.NodeGroup.
func (n *NodeGroup) Id() string { return n.g.Id(context.Background()) }

// Debug implements caprovider.NodeGroup: the group's text and why it is
// managed, as the externalgrpc server sends it.
func (n *NodeGroup) Debug() string {
	ctx := context.Background()
	return cloudprovider.WithManaged(n.g.Debug(ctx), n.g.Status(ctx).Managed)
}

// TargetSize implements caprovider.NodeGroup.
func (n *NodeGroup) TargetSize() (int, error) {
	ctx, cancel := readContext()
	defer cancel()
	s, err := n.g.TargetSize(ctx)
	return s, toUpstream(err)
}

func mutationContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(cloudhttp.WithMutationPriority(context.Background()), MutationTimeout)
}

// IncreaseSize implements caprovider.NodeGroup.
func (n *NodeGroup) IncreaseSize(delta int) error {
	ctx, cancel := mutationContext()
	defer cancel()
	c := reporting.Change{Operation: metrics.OperationIncrease, Delta: delta}
	return toUpstream(n.r.Mutate(ctx, n.g, c, Client, func() error { return n.g.IncreaseSize(ctx, delta) }))
}

// AtomicIncreaseSize implements caprovider.NodeGroup. One resize of these
// clouds can start fewer instances than asked (quota, stock), so it is not
// atomic: ErrNotImplemented, as upstream's providers answer.
func (n *NodeGroup) AtomicIncreaseSize(int) error {
	return caprovider.ErrNotImplemented
}

// DeleteNodes implements caprovider.NodeGroup.
func (n *NodeGroup) DeleteNodes(nodes []*apiv1.Node) error {
	ctx, cancel := mutationContext()
	defer cancel()
	c := reporting.Change{Operation: metrics.OperationDelete, Delta: -len(nodes)}
	for _, node := range nodes {
		c.Nodes = append(c.Nodes, cloudprovider.NodeName(node.Name, node.Spec.ProviderID))
	}
	return toUpstream(n.r.Mutate(ctx, n.g, c, Client, func() error { return n.g.DeleteNodes(ctx, nodes) }))
}

// ForceDeleteNodes implements caprovider.NodeGroup: not offered, so the
// group's minimum always holds, as upstream's providers answer.
func (n *NodeGroup) ForceDeleteNodes([]*apiv1.Node) error {
	return caprovider.ErrNotImplemented
}

// DecreaseTargetSize implements caprovider.NodeGroup.
func (n *NodeGroup) DecreaseTargetSize(delta int) error {
	ctx, cancel := mutationContext()
	defer cancel()
	c := reporting.Change{Operation: metrics.OperationDecrease, Delta: delta}
	return toUpstream(n.r.Mutate(ctx, n.g, c, Client, func() error { return n.g.DecreaseTargetSize(ctx, delta) }))
}

// Nodes implements caprovider.NodeGroup.
func (n *NodeGroup) Nodes() ([]caprovider.Instance, error) {
	ctx, cancel := readContext()
	defer cancel()
	list, err := n.g.Nodes(ctx)
	if err != nil {
		return nil, toUpstream(err)
	}
	out := make([]caprovider.Instance, len(list))
	for i, in := range list {
		out[i] = caprovider.Instance{Id: in.Id, Status: instanceStatus(in.Status)}
	}
	return out, nil
}

// instanceStatus maps a status; the states and error classes have the same
// numbers in both contracts.
func instanceStatus(s *cloudprovider.InstanceStatus) *caprovider.InstanceStatus {
	if s == nil {
		return nil
	}
	out := &caprovider.InstanceStatus{State: caprovider.InstanceState(s.State)}
	if s.ErrorInfo != nil {
		out.ErrorInfo = &caprovider.InstanceErrorInfo{
			ErrorClass:   caprovider.InstanceErrorClass(s.ErrorInfo.ErrorClass),
			ErrorCode:    s.ErrorInfo.ErrorCode,
			ErrorMessage: s.ErrorInfo.ErrorMessage,
		}
	}
	return out
}

// TemplateNodeInfo implements caprovider.NodeGroup: our template node with
// no pods, as CA's externalgrpc client builds it from the same node.
func (n *NodeGroup) TemplateNodeInfo() (*framework.NodeInfo, error) {
	ctx, cancel := readContext()
	defer cancel()
	node, err := n.g.TemplateNodeInfo(ctx)
	if err != nil {
		return nil, toUpstream(err)
	}
	if node == nil {
		return nil, caprovider.ErrNotImplemented
	}
	return framework.NewNodeInfo(node, nil), nil
}

// Exist implements caprovider.NodeGroup: every group served exists in the
// cloud (none is auto-provisioned).
func (n *NodeGroup) Exist() bool { return true }

// Create implements caprovider.NodeGroup.
func (n *NodeGroup) Create() (caprovider.NodeGroup, error) {
	return nil, caprovider.ErrNotImplemented
}

// Delete implements caprovider.NodeGroup.
func (n *NodeGroup) Delete() error { return caprovider.ErrNotImplemented }

// Autoprovisioned implements caprovider.NodeGroup.
func (n *NodeGroup) Autoprovisioned() bool { return false }

// GetOptions implements caprovider.NodeGroup. Ours carry the fields the
// externalgrpc protocol carries; the others keep CA's defaults, which is
// more than the externalgrpc client does (it zeroes them).
func (n *NodeGroup) GetOptions(defaults caconfig.NodeGroupAutoscalingOptions) (*caconfig.NodeGroupAutoscalingOptions, error) {
	ctx, cancel := readContext()
	defer cancel()
	o, err := n.g.GetOptions(ctx, ourOptions(defaults))
	if err != nil {
		return nil, toUpstream(err)
	}
	if o == nil {
		return nil, caprovider.ErrNotImplemented
	}
	out := withOurOptions(defaults, *o)
	return &out, nil
}

// ourOptions is upstream's options as ours: the fields the externalgrpc
// protocol carries.
func ourOptions(o caconfig.NodeGroupAutoscalingOptions) cloudprovider.NodeGroupAutoscalingOptions {
	return cloudprovider.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold:    o.ScaleDownUtilizationThreshold,
		ScaleDownGpuUtilizationThreshold: o.ScaleDownGpuUtilizationThreshold,
		ScaleDownUnneededTime:            o.ScaleDownUnneededTime,
		ScaleDownUnreadyTime:             o.ScaleDownUnreadyTime,
		MaxNodeProvisionTime:             o.MaxNodeProvisionTime,
		ZeroOrMaxNodeScaling:             o.ZeroOrMaxNodeScaling,
		IgnoreDaemonSetsUtilization:      o.IgnoreDaemonSetsUtilization,
	}
}

// withOurOptions is base with the fields ours carry set from o.
func withOurOptions(base caconfig.NodeGroupAutoscalingOptions, o cloudprovider.NodeGroupAutoscalingOptions) caconfig.NodeGroupAutoscalingOptions {
	base.ScaleDownUtilizationThreshold = o.ScaleDownUtilizationThreshold
	base.ScaleDownGpuUtilizationThreshold = o.ScaleDownGpuUtilizationThreshold
	base.ScaleDownUnneededTime = o.ScaleDownUnneededTime
	base.ScaleDownUnreadyTime = o.ScaleDownUnreadyTime
	base.MaxNodeProvisionTime = o.MaxNodeProvisionTime
	base.ZeroOrMaxNodeScaling = o.ZeroOrMaxNodeScaling
	base.IgnoreDaemonSetsUtilization = o.IgnoreDaemonSetsUtilization
	return base
}

// pricing is our price model as upstream's.
type pricing struct{ m cloudprovider.PricingModel }

// NodePrice implements caprovider.PricingModel.
func (p pricing) NodePrice(node *apiv1.Node, start, end time.Time) (float64, error) {
	ctx, cancel := readContext()
	defer cancel()
	v, err := p.m.NodePrice(ctx, node, start, end)
	return v, toUpstream(err)
}

// PodPrice implements caprovider.PricingModel.
func (p pricing) PodPrice(pod *apiv1.Pod, start, end time.Time) (float64, error) {
	ctx, cancel := readContext()
	defer cancel()
	v, err := p.m.PodPrice(ctx, pod, start, end)
	return v, toUpstream(err)
}
