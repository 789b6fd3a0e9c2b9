package volcengine

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// priceCatalog feeds the shared pricing model from the --price-sheet (the
// Volcengine API prices orders, not instance types) and the instance types
// cached for the groups' templates; it makes no cloud call.
type priceCatalog struct {
	m     *manager
	sheet *groupconfig.PriceSheet
}

var _ groupconfig.PriceCatalog = priceCatalog{}

// InstanceTypeOfNode implements groupconfig.PriceCatalog.
func (c priceCatalog) InstanceTypeOfNode(node *corev1.Node) string {
	if !strings.HasPrefix(node.Spec.ProviderID, ProviderIDPrefix) {
		return ""
	}
	id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, node.Spec.ProviderID)
	if err != nil {
		return ""
	}
	g, ok := c.m.groupForInstance(id)
	if !ok {
		return ""
	}
	info, err := c.m.template(g.id)
	if err != nil {
		return ""
	}
	return info.instanceType.ID
}

// HourlyPrice implements groupconfig.PriceCatalog.
func (c priceCatalog) HourlyPrice(instanceType string) (float64, error) {
	return c.sheet.HourlyPrice(instanceType)
}

// GroupInstanceTypes implements groupconfig.PriceCatalog.
func (c priceCatalog) GroupInstanceTypes() map[string]groupconfig.InstanceTypeShape {
	out := map[string]groupconfig.InstanceTypeShape{}
	for _, g := range c.m.groupList() {
		info, err := c.m.template(g.id)
		if err != nil {
			continue
		}
		it := info.instanceType
		out[it.ID] = groupconfig.InstanceTypeShape{VCPUs: float64(it.CPUs), MemoryGiB: float64(it.MemoryMiB) / 1024}
	}
	return out
}
