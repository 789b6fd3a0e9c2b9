package volcengine

import (
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// The manager gives the price catalog the templates' instance types, no call.
// Prices come only from --price-sheet: Volcengine's price API prices orders.
var _ groupconfig.SnapshotTypes = (*manager)(nil)

// InstanceTypeOf returns the instance type of the holding group's template.
func (m *manager) InstanceTypeOf(instanceID string) string {
	g, ok := m.groupForInstance(instanceID)
	if !ok {
		return ""
	}
	info, err := m.template(g.id)
	if err != nil {
		return ""
	}
	return info.instanceType.ID
}

// GroupInstanceTypes returns the shapes of the groups' known instance types.
func (m *manager) GroupInstanceTypes() map[string]groupconfig.InstanceTypeShape {
	out := map[string]groupconfig.InstanceTypeShape{}
	for _, g := range m.groupList() {
		info, err := m.template(g.id)
		if err != nil {
			continue
		}
		it := info.instanceType
		out[it.ID] = groupconfig.InstanceTypeShape{VCPUs: float64(it.CPUs), MemoryGiB: float64(it.MemoryMiB) / 1024}
	}
	return out
}
