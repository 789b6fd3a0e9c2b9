package volcengine

import (
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// The manager answers the shared price catalog (groupconfig.Prices) from the
// --price-sheet (Volcengine's price API prices orders, not instance types, so
// without a sheet pricing is not offered; CA only needs prices for
// --expander=price) and the instance types cached for the groups'
// templates; it makes no cloud call.
var _ groupconfig.SnapshotTypes = (*manager)(nil)

// InstanceTypeOf implements groupconfig.SnapshotTypes: the instance type of
// the template of the group holding the instance.
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

// GroupInstanceTypes implements groupconfig.SnapshotTypes: the shape of
// every served group's instance type whose template is known.
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
