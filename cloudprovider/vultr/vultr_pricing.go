package vultr

import (
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// The manager answers the shared price catalog (groupconfig.Prices).
var _ groupconfig.SnapshotTypes = (*manager)(nil)

// InstanceTypeOf implements groupconfig.SnapshotTypes: the plan of nodeID's pool.
func (m *manager) InstanceTypeOf(nodeID string) string {
	g := m.groupForNodeID(nodeID)
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pool.Plan
}

// planPrice is a plan's hourly price. Plans give only monthly_cost; we assume
// hourly billing capped at 730 hours a month, as pricing guides describe.
func (m *manager) planPrice(planID string) (float64, error) {
	plan, ok := m.plan(planID)
	if !ok {
		return 0, cloudprovider.Errorf(cloudprovider.ErrNotFound, "plan %q is unknown", planID)
	}
	return plan.MonthlyCost / hoursPerMonth, nil
}

// GroupInstanceTypes implements groupconfig.SnapshotTypes for the loaded plans.
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
