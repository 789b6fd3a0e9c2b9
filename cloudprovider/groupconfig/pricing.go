package groupconfig

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// InstanceTypeShape is an instance type's size, for pricing pods by their
// requests.
type InstanceTypeShape struct {
	VCPUs     float64
	MemoryGiB float64
}

// PriceCatalog feeds the shared pricing model: prices per instance type
// (from the cloud or a price sheet) and the shapes of the instance types
// the groups use. It answers from the provider's snapshot, without a cloud
// call.
type PriceCatalog interface {
	// InstanceTypeOfNode returns the instance type of a node without the
	// well-known instance-type label, from the group owning its providerID;
	// "" when unknown.
	InstanceTypeOfNode(node *corev1.Node) string
	// HourlyPrice returns the hourly price of an instance type, or an error
	// wrapping ErrNotFound when it has none.
	HourlyPrice(instanceType string) (float64, error)
	// GroupInstanceTypes returns the instance types of the served groups whose
	// shape is known.
	GroupInstanceTypes() map[string]InstanceTypeShape
}

// Prices is the PriceCatalog every provider serves: the instance types its
// snapshot knows, priced by the --price-sheet when there is one (then the
// only source, so all prices share the sheet's currency), else by the
// cloud's own prices where its API has them. The provider supplies only its
// snapshot; the choice of price source is made here.
type Prices struct {
	// Sheet is the --price-sheet, nil without one.
	Sheet *PriceSheet
	// CloudPrice prices an instance type from the cloud's own data, or
	// fails wrapping ErrNotFound; nil for a cloud whose API has no prices
	// per instance type, which then offers pricing only with a sheet.
	CloudPrice func(instanceType string) (float64, error)
	// ProviderIDPrefix is the cloud's providerID prefix: a node whose
	// providerID does not parse with it belongs to no group of ours.
	ProviderIDPrefix string
	// Snapshot is the provider's snapshot.
	Snapshot SnapshotTypes
}

// SnapshotTypes is the instance-type data a provider's snapshot gives
// Prices, without a cloud call.
type SnapshotTypes interface {
	// InstanceTypeOf returns the instance type of the group holding the
	// instance with this id; "" when unknown.
	InstanceTypeOf(instanceID string) string
	// GroupInstanceTypes returns the instance types of the served groups
	// whose shape is known.
	GroupInstanceTypes() map[string]InstanceTypeShape
}

var _ PriceCatalog = Prices{}

// Model returns the pricing model over these prices, or an error wrapping
// ErrNotImplemented when there is no price source (no sheet, and a cloud
// without prices), so CA works without prices instead of failing on each.
func (p Prices) Model() (cloudprovider.PricingModel, error) {
	if p.Sheet == nil && p.CloudPrice == nil {
		return nil, cloudprovider.Errorf(cloudprovider.ErrNotImplemented, "no --price-sheet")
	}
	return NewPricingModel(p), nil
}

// InstanceTypeOfNode implements PriceCatalog from the node's providerID.
func (p Prices) InstanceTypeOfNode(node *corev1.Node) string {
	id, err := cloudprovider.ParseProviderID(p.ProviderIDPrefix, node.Spec.ProviderID)
	if err != nil {
		return ""
	}
	return p.Snapshot.InstanceTypeOf(id)
}

// HourlyPrice implements PriceCatalog: the sheet's price when there is a
// sheet, else the cloud's.
func (p Prices) HourlyPrice(instanceType string) (float64, error) {
	switch {
	case p.Sheet != nil:
		return p.Sheet.HourlyPrice(instanceType)
	case p.CloudPrice != nil:
		return p.CloudPrice(instanceType)
	}
	return 0, cloudprovider.Errorf(cloudprovider.ErrNotFound, "instance type %q: no --price-sheet", instanceType)
}

// GroupInstanceTypes implements PriceCatalog.
func (p Prices) GroupInstanceTypes() map[string]InstanceTypeShape {
	return p.Snapshot.GroupInstanceTypes()
}

// NewPricingModel returns the pricing model every provider serves: a node is
// priced by its instance type, a pod by its requests at the groups' average
// per-vCPU and per-GiB rates.
func NewPricingModel(c PriceCatalog) cloudprovider.PricingModel { return pricingModel{c: c} }

type pricingModel struct{ c PriceCatalog }

// NodePrice implements PricingModel. CA prices template nodes, which have no
// providerID, so the instance type comes from the well-known label first and
// from the owning group second.
func (p pricingModel) NodePrice(_ context.Context, node *corev1.Node, start, end time.Time) (float64, error) {
	if node == nil {
		return 0, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "nil node")
	}
	instanceType := node.Labels[corev1.LabelInstanceTypeStable]
	if instanceType == "" {
		instanceType = p.c.InstanceTypeOfNode(node)
	}
	if instanceType == "" {
		return 0, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s has no %s label and belongs to no known group", node.Name, corev1.LabelInstanceTypeStable)
	}
	hourly, err := p.c.HourlyPrice(instanceType)
	if err != nil {
		return 0, err
	}
	return hourly * hours(start, end), nil
}

// PodPrice implements PricingModel: the pod's CPU and memory requests priced
// at the average per-vCPU and per-GiB rate of the groups' instance types,
// each resource carrying half of a type's price. Only ratios matter to CA's
// price expander, and it skips any option whose pod price fails.
func (p pricingModel) PodPrice(_ context.Context, pod *corev1.Pod, start, end time.Time) (float64, error) {
	if pod == nil {
		return 0, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "nil pod")
	}
	cpuRate, memRate, ok := p.rates()
	if !ok {
		return 0, cloudprovider.Errorf(cloudprovider.ErrUnavailable, "no priced instance type with a known shape yet")
	}
	var cpu, memGiB float64
	for _, c := range pod.Spec.Containers {
		cpu += float64(c.Resources.Requests.Cpu().MilliValue()) / 1000
		memGiB += float64(c.Resources.Requests.Memory().Value()) / (1 << 30)
	}
	return (cpu*cpuRate + memGiB*memRate) * hours(start, end), nil
}

// rates averages hourly per-vCPU and per-GiB prices over the groups'
// instance types (each type once, in a fixed order so the sum is stable).
func (p pricingModel) rates() (cpuRate, memRate float64, ok bool) {
	shapes := p.c.GroupInstanceTypes()
	names := make([]string, 0, len(shapes))
	for name := range shapes {
		names = append(names, name)
	}
	sort.Strings(names)
	n := 0
	for _, name := range names {
		shape := shapes[name]
		if shape.VCPUs <= 0 || shape.MemoryGiB <= 0 {
			continue
		}
		hourly, err := p.c.HourlyPrice(name)
		if err != nil {
			continue
		}
		cpuRate += hourly / 2 / shape.VCPUs
		memRate += hourly / 2 / shape.MemoryGiB
		n++
	}
	if n == 0 {
		return 0, 0, false
	}
	return cpuRate / float64(n), memRate / float64(n), true
}

func hours(start, end time.Time) float64 {
	if !end.After(start) {
		return 0
	}
	return end.Sub(start).Hours()
}
