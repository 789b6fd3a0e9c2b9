package vultr

import (
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// The manager answers the shared price catalog (groupconfig.Prices). Vultr
// bills hourly with a 730-hour monthly cap, so a plan's hourly price is
// monthly_cost / 730 (planPrice, the catalog's CloudPrice); with a
// --price-sheet the sheet is the only price source (one currency).
var _ groupconfig.SnapshotTypes = (*manager)(nil)

// InstanceTypeOf implements groupconfig.SnapshotTypes: the plan of the pool
// owning the node with this id.
func (m *manager) InstanceTypeOf(nodeID string) string {
	g := m.groupForNodeID(nodeID)
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pool.Plan
}

// planPrice is a plan's hourly price from its monthly cost.
func (m *manager) planPrice(planID string) (float64, error) {
	plan, ok := m.plan(planID)
	if !ok {
		return 0, cloudprovider.Errorf(cloudprovider.ErrNotFound, "plan %q is unknown", planID)
	}
	return plan.MonthlyCost / hoursPerMonth, nil
}

// GroupInstanceTypes implements groupconfig.SnapshotTypes: the shape of
// every served pool's plan, for the plans loaded.
func (m *manager) GroupInstanceTypes() map[string]groupconfig.InstanceTypeShape {
	out := map[string]groupconfig.InstanceTypeShape{}
	for _, g := range m.nodeGroups() {
		g.mu.Lock()
		planID := g.pool.Plan
		g.mu.Unlock()
		if plan, ok := m.plan(planID); ok {
			out[planID] = groupconfig.InstanceTypeShape{VCPUs: float64(plan.VCPUs), MemoryGiB: float64(plan.RAMMiB) / 1024}
		}
	}
	return out
}
