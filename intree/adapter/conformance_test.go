package adapter

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	caprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	caconfig "k8s.io/autoscaler/cluster-autoscaler/config"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/providertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// TestConformanceThroughUpstream runs the conformance kit against each
// provider as CA's core sees it in-tree: every call the kit makes goes
// through upstream's interface, which the adapter serves. Each provider
// runs against its fake's default behaviour; its own tests run the others.
func TestConformanceThroughUpstream(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		h    cloudprovidertest.Harness
	}{
		{"vultr", providertest.VultrHarness(fakeapi.BusyNever)},
		{"volcengine", providertest.VolcengineHarness(false)},
		{"exoscale", providertest.ExoscaleHarness(providertest.ExoscaleVariants()[0])},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cloudprovidertest.Run(t, throughUpstream(c.h))
		})
	}
}

// throughUpstream is h with every provider it builds adapted (New, its
// metrics in a registry of its own) and seen through upstream's interface
// again (asOurs). The checks of what a provider does with its caller's
// deadline are not applicable: upstream's interface takes no context, so
// the adapter makes the deadlines (ReadTimeout, MutationTimeout,
// RefreshTimeout) and the kit's never reach the provider.
func throughUpstream(h cloudprovidertest.Harness) cloudprovidertest.Harness {
	notApplicable := maps.Clone(h.NotApplicable)
	notApplicable[cloudprovidertest.HookCallerDeadline] = "upstream's interface takes no context: the adapter gives every call its own deadline " +
		"(ReadTimeout 5s, MutationTimeout and RefreshTimeout 2m), so the kit's deadline never reaches the provider"
	h.NotApplicable = notApplicable
	build := h.NewEnvWithOptions
	h.NewEnvWithOptions = func(t *testing.T, opts registry.BuildOptions) *cloudprovidertest.Env {
		env := build(t, opts)
		env.Provider = asOurs{up: New(env.Provider, metrics.New(prometheus.NewRegistry()), nil)}
		return env
	}
	return h
}

// asOurs is an upstream provider seen as ours: each call drops the
// caller's context, as CA's in-tree calls carry none, and maps the answer
// back. Upstream's errors wrap ours (toUpstream), so errors.Is on our
// classes holds; its ErrNotImplemented, compared by identity, is ours again.
type asOurs struct{ up caprovider.CloudProvider }

var _ cloudprovider.CloudProvider = asOurs{}

func fromUpstream(err error) error {
	if err == caprovider.ErrNotImplemented {
		return cloudprovider.ErrNotImplemented
	}
	return err
}

func (p asOurs) Name() string { return p.up.Name() }

func (p asOurs) NodeGroups(context.Context) ([]cloudprovider.NodeGroup, error) {
	groups := p.up.NodeGroups()
	out := make([]cloudprovider.NodeGroup, len(groups))
	for i, g := range groups {
		out[i] = groupAsOurs{up: g}
	}
	return out, nil
}

// NodeGroup finds the group in NodeGroups: upstream has no lookup by id.
func (p asOurs) NodeGroup(ctx context.Context, id string) (cloudprovider.NodeGroup, error) {
	groups, err := p.NodeGroups(ctx)
	return cloudprovidertest.ScanNodeGroup(ctx, groups, err, id)
}

func (p asOurs) NodeGroupForNode(_ context.Context, node *corev1.Node) (cloudprovider.NodeGroup, error) {
	g, err := p.up.NodeGroupForNode(node)
	if err != nil || g == nil {
		return nil, fromUpstream(err)
	}
	return groupAsOurs{up: g}, nil
}

func (p asOurs) Pricing(context.Context) (cloudprovider.PricingModel, error) {
	m, err := p.up.Pricing()
	if err != nil {
		return nil, fromUpstream(err)
	}
	return pricingAsOurs{up: m}, nil
}

func (p asOurs) GPULabel(context.Context) (string, error) { return p.up.GPULabel(), nil }

func (p asOurs) GetAvailableGPUTypes(context.Context) (map[string]struct{}, error) {
	return p.up.GetAvailableGPUTypes(), nil
}

func (p asOurs) Cleanup(context.Context) error { return fromUpstream(p.up.Cleanup()) }

func (p asOurs) Refresh(context.Context) error { return fromUpstream(p.up.Refresh()) }

// groupAsOurs is an upstream node group seen as ours.
type groupAsOurs struct{ up caprovider.NodeGroup }

var _ cloudprovider.NodeGroup = groupAsOurs{}

func (g groupAsOurs) Id(context.Context) string    { return g.up.Id() }
func (g groupAsOurs) MinSize(context.Context) int  { return g.up.MinSize() }
func (g groupAsOurs) MaxSize(context.Context) int  { return g.up.MaxSize() }
func (g groupAsOurs) Debug(context.Context) string { return g.up.Debug() }
func (g groupAsOurs) TargetSize(context.Context) (int, error) {
	n, err := g.up.TargetSize()
	return n, fromUpstream(err)
}

func (g groupAsOurs) IncreaseSize(_ context.Context, delta int) error {
	return fromUpstream(g.up.IncreaseSize(delta))
}

func (g groupAsOurs) DeleteNodes(_ context.Context, nodes []*corev1.Node) error {
	return fromUpstream(g.up.DeleteNodes(nodes))
}

func (g groupAsOurs) DecreaseTargetSize(_ context.Context, delta int) error {
	return fromUpstream(g.up.DecreaseTargetSize(delta))
}

func (g groupAsOurs) Nodes(context.Context) ([]cloudprovider.Instance, error) {
	list, err := g.up.Nodes()
	if err != nil {
		return nil, fromUpstream(err)
	}
	out := make([]cloudprovider.Instance, len(list))
	for i, in := range list {
		out[i] = cloudprovider.Instance{Id: in.Id}
		if s := in.Status; s != nil {
			out[i].Status = &cloudprovider.InstanceStatus{State: cloudprovider.InstanceState(s.State)}
			if e := s.ErrorInfo; e != nil {
				out[i].Status.ErrorInfo = &cloudprovider.InstanceErrorInfo{
					ErrorClass: cloudprovider.InstanceErrorClass(e.ErrorClass), ErrorCode: e.ErrorCode, ErrorMessage: e.ErrorMessage,
				}
			}
		}
	}
	return out, nil
}

// TemplateNodeInfo is the node of upstream's NodeInfo, the one CA
// simulates a new node of the group with.
func (g groupAsOurs) TemplateNodeInfo(context.Context) (*corev1.Node, error) {
	info, err := g.up.TemplateNodeInfo()
	if err != nil {
		return nil, fromUpstream(err)
	}
	return info.Node(), nil
}

func (g groupAsOurs) GetOptions(_ context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	o, err := g.up.GetOptions(withOurOptions(caconfig.NodeGroupAutoscalingOptions{}, defaults))
	if err != nil {
		return nil, fromUpstream(err)
	}
	ours := ourOptions(*o)
	return &ours, nil
}

// Status is the adapted group's own: upstream's NodeGroup carries none
// (CA reads no status), and in-tree the reporting decorator reads it from
// that group, as the kit does here.
func (g groupAsOurs) Status(ctx context.Context) cloudprovider.GroupStatus {
	if n, ok := g.up.(*NodeGroup); ok {
		return n.g.Status(ctx)
	}
	return cloudprovider.GroupStatus{}
}

// pricingAsOurs is an upstream price model seen as ours.
type pricingAsOurs struct{ up caprovider.PricingModel }

func (m pricingAsOurs) NodePrice(_ context.Context, node *corev1.Node, start, end time.Time) (float64, error) {
	v, err := m.up.NodePrice(node, start, end)
	return v, fromUpstream(err)
}

func (m pricingAsOurs) PodPrice(_ context.Context, pod *corev1.Pod, start, end time.Time) (float64, error) {
	v, err := m.up.PodPrice(pod, start, end)
	return v, fromUpstream(err)
}
