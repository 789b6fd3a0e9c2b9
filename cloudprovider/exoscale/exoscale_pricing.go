package exoscale

import (
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// The manager answers the price catalog from the snapshot. Exoscale's API has
// no prices: they come only from --price-sheet, keyed by "<family>.<size>".
var _ groupconfig.SnapshotTypes = (*manager)(nil)

// InstanceTypeOf implements groupconfig.SnapshotTypes from the instance index.
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

// GroupInstanceTypes implements groupconfig.SnapshotTypes from cached types.
func (m *manager) GroupInstanceTypes() map[string]groupconfig.InstanceTypeShape {
	out := map[string]groupconfig.InstanceTypeShape{}
	for _, g := range m.nodeGroups() {
		if t, ok := m.instanceType(g.record().typeID); ok {
			out[t.Name()] = groupconfig.InstanceTypeShape{VCPUs: float64(t.CPUs), MemoryGiB: float64(t.MemoryBytes) / (1 << 30)}
		}
	}
	return out
}
