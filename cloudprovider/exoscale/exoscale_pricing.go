package exoscale

import (
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// prices feeds the shared pricing model from the --price-sheet (the Exoscale
// API has no prices, so without a sheet pricing is not offered), keyed by
// "<family>.<size>" like the nodes' instance-type label, and from the
// instance types cached for templates; it makes no cloud call.
func (p *cloudProvider) prices() groupconfig.Prices {
	return groupconfig.Prices{
		Sheet:            p.sheet,
		ProviderIDPrefix: ProviderIDPrefix,
		InstanceTypeOf:   p.m.instanceTypeOf,
		Shapes:           p.m.groupInstanceTypes,
	}
}

// instanceTypeOf is the instance type of the pool holding the instance,
// from the snapshot's instance index only.
func (m *manager) instanceTypeOf(instanceID string) string {
	m.mu.RLock()
	g := m.groups[m.instancePool[instanceID]]
	m.mu.RUnlock()
	if g == nil {
		return ""
	}
	t, ok := m.instanceType(g.state().typeID)
	if !ok {
		return ""
	}
	return t.Name()
}

// groupInstanceTypes is the shape of every served pool's instance type
// known from the cached instance types.
func (m *manager) groupInstanceTypes() map[string]groupconfig.InstanceTypeShape {
	out := map[string]groupconfig.InstanceTypeShape{}
	for _, g := range m.nodeGroups() {
		if t, ok := m.instanceType(g.state().typeID); ok {
			out[t.Name()] = groupconfig.InstanceTypeShape{VCPUs: float64(t.CPUs), MemoryGiB: float64(t.MemoryBytes) / (1 << 30)}
		}
	}
	return out
}
