package volcengine

import (
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// The manager gives the price catalog the templates' cached instance types and
// makes no call. Prices come from --price-sheet only: Volcengine's price API
// prices orders, not instance types.
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

// GroupInstanceTypes returns the shape of each served group's known instance type.
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
