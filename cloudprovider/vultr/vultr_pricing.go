package vultr

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// priceCatalog feeds the shared pricing model. Vultr bills hourly with a
// 730-hour monthly cap, so a plan's hourly price is monthly_cost / 730. With
// a --price-sheet the sheet is the only price source (one currency).
type priceCatalog struct {
	m     *manager
	sheet *cloudprovider.PriceSheet
}

var _ cloudprovider.PriceCatalog = priceCatalog{}

// InstanceTypeOfNode implements cloudprovider.PriceCatalog: the plan of the
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

// HourlyPrice implements cloudprovider.PriceCatalog.
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

// GroupInstanceTypes implements cloudprovider.PriceCatalog.
func (c priceCatalog) GroupInstanceTypes() map[string]cloudprovider.InstanceTypeShape {
	out := map[string]cloudprovider.InstanceTypeShape{}
	for _, g := range c.m.nodeGroups() {
		g.mu.Lock()
		planID := g.pool.Plan
		g.mu.Unlock()
		if plan, ok := c.m.plan(planID); ok {
			out[planID] = cloudprovider.InstanceTypeShape{VCPUs: float64(plan.VCPUs), MemoryGiB: float64(plan.RAMMiB) / 1024}
		}
	}
	return out
}
