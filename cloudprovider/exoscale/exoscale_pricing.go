package exoscale

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// priceCatalog feeds the shared pricing model from the --price-sheet (the
// Exoscale API has no prices), keyed by "<family>.<size>" like the nodes'
// instance-type label, and from the instance types cached for templates; it
// makes no cloud call.
type priceCatalog struct {
	m     *manager
	sheet *groupconfig.PriceSheet
}

var _ groupconfig.PriceCatalog = priceCatalog{}

// InstanceTypeOfNode implements groupconfig.PriceCatalog from the
// snapshot's instance index only.
func (c priceCatalog) InstanceTypeOfNode(node *corev1.Node) string {
	id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, node.Spec.ProviderID)
	if err != nil {
		return ""
	}
	c.m.mu.RLock()
	g := c.m.groups[c.m.instancePool[id]]
	c.m.mu.RUnlock()
	if g == nil {
		return ""
	}
	t, ok := c.m.instanceType(g.record().typeID)
	if !ok {
		return ""
	}
	return t.Name()
}

// HourlyPrice implements groupconfig.PriceCatalog.
func (c priceCatalog) HourlyPrice(instanceType string) (float64, error) {
	return c.sheet.HourlyPrice(instanceType)
}

// GroupInstanceTypes implements groupconfig.PriceCatalog.
func (c priceCatalog) GroupInstanceTypes() map[string]groupconfig.InstanceTypeShape {
	out := map[string]groupconfig.InstanceTypeShape{}
	for _, g := range c.m.nodeGroups() {
		if t, ok := c.m.instanceType(g.record().typeID); ok {
			out[t.Name()] = groupconfig.InstanceTypeShape{VCPUs: float64(t.CPUs), MemoryGiB: float64(t.MemoryBytes) / (1 << 30)}
		}
	}
	return out
}
