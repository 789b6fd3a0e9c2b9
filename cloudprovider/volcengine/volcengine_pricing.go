package volcengine

import (
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// prices feeds the shared pricing model from the --price-sheet (Volcengine's
// price API prices orders, not instance types, so without a sheet pricing is
// not offered; CA only needs prices for --expander=price) and the instance
// types cached for the groups' templates; it makes no cloud call.
func (p *cloudProvider) prices() groupconfig.Prices {
	return groupconfig.Prices{
		Sheet:            p.sheet,
		ProviderIDPrefix: ProviderIDPrefix,
		InstanceTypeOf:   p.m.instanceTypeOf,
		Shapes:           p.m.groupInstanceTypes,
	}
}

// instanceTypeOf is the instance type of the template of the group holding
// the instance.
func (m *manager) instanceTypeOf(instanceID string) string {
	g, ok := m.groupForInstance(instanceID)
	if !ok {
		return ""
	}
	info, err := m.template(g.cloud.ID)
	if err != nil {
		return ""
	}
	return info.instanceType.ID
}

// groupInstanceTypes is the shape of every served group's instance type
// whose template is known.
func (m *manager) groupInstanceTypes() map[string]groupconfig.InstanceTypeShape {
	out := map[string]groupconfig.InstanceTypeShape{}
	for _, g := range m.groupList() {
		info, err := m.template(g.cloud.ID)
		if err != nil {
			continue
		}
		it := info.instanceType
		out[it.ID] = groupconfig.InstanceTypeShape{VCPUs: float64(it.CPUs), MemoryGiB: float64(it.MemoryMiB) / 1024}
	}
	return out
}
