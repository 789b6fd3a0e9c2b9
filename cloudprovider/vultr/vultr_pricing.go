package vultr

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// priceCatalog feeds the shared pricing model. Vultr bills hourly with a
// 730-hour monthly cap, so a plan's hourly price is monthly_cost / 730. With
// a --price-sheet the sheet is the only price source (one currency).
type priceCatalog struct {
	m     *manager
	sheet *groupconfig.PriceSheet
}

var _ groupconfig.PriceCatalog = priceCatalog{}

// InstanceTypeOfNode implements groupconfig.PriceCatalog: the plan of the
// pool owning the node.
func (c priceCatalog) InstanceTypeOfNode(node *corev1.Node) string {
	id := nodeIDFromProviderID(node.Spec.ProviderID)
	if id == "" {
		return ""
	}
	g := c.m.groupForNodeID(id)
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pool.Plan
}

// HourlyPrice implements groupconfig.PriceCatalog.
func (c priceCatalog) HourlyPrice(planID string) (float64, error) {
	if c.sheet != nil {
		return c.sheet.HourlyPrice(planID)
	}
	plan, ok := c.m.plan(planID)
	if !ok {
		return 0, cloudprovider.Errorf(cloudprovider.ErrNotFound, "plan %q is unknown", planID)
	}
	return plan.MonthlyCost / hoursPerMonth, nil
}

// GroupInstanceTypes implements groupconfig.PriceCatalog.
func (c priceCatalog) GroupInstanceTypes() map[string]groupconfig.InstanceTypeShape {
	out := map[string]groupconfig.InstanceTypeShape{}
	for _, g := range c.m.nodeGroups() {
		g.mu.Lock()
		planID := g.pool.Plan
		g.mu.Unlock()
		if plan, ok := c.m.plan(planID); ok {
			out[planID] = groupconfig.InstanceTypeShape{VCPUs: float64(plan.VCPUs), MemoryGiB: float64(plan.RAMMiB) / 1024}
		}
	}
	return out
}
