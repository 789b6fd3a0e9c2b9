package exoscale

import (
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// The manager answers the shared price catalog (groupconfig.Prices) from the
// --price-sheet (the Exoscale API has no prices, so without a sheet pricing
// is not offered), keyed by "<family>.<size>" like the nodes' instance-type
// label, and from the instance types cached for templates; it makes no
// cloud call.
var _ groupconfig.SnapshotTypes = (*manager)(nil)

// InstanceTypeOf implements groupconfig.SnapshotTypes: the instance type of
// the pool holding the instance, from the snapshot's instance index only.
func (m *manager) InstanceTypeOf(instanceID string) string {
	m.mu.RLock()
	g, ok := m.groups.Get(m.instancePool[instanceID])
	m.mu.RUnlock()
	if !ok {
		return ""
	}
	t, ok := m.instanceType(g.record().typeID)
	if !ok {
		return ""
	}
	return t.Name()
}

// GroupInstanceTypes implements groupconfig.SnapshotTypes: the shape of
// every served pool's instance type known from the cached instance types.
func (m *manager) GroupInstanceTypes() map[string]groupconfig.InstanceTypeShape {
	out := map[string]groupconfig.InstanceTypeShape{}
	for _, g := range m.nodeGroups() {
		if t, ok := m.instanceType(g.record().typeID); ok {
			out[t.Name()] = groupconfig.InstanceTypeShape{VCPUs: float64(t.CPUs), MemoryGiB: float64(t.MemoryBytes) / (1 << 30)}
		}
	}
	return out
}
