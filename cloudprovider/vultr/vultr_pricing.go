package vultr

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// pricing prices nodes from their plan's monthly_cost. Vultr bills hourly
// with a 730-hour monthly cap, so the hourly price is monthly_cost / 730.
type pricing struct{ m *manager }

var _ cloudprovider.PricingModel = pricing{}

// NodePrice implements cloudprovider.PricingModel. CA prices template nodes,
// which have no providerID, so the plan comes from the instance-type label
// first and from the owning pool second.
func (p pricing) NodePrice(ctx context.Context, node *corev1.Node, start, end time.Time) (float64, error) {
	if node == nil {
		return 0, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "nil node")
	}
	planID := node.Labels[corev1.LabelInstanceTypeStable]
	if planID == "" {
		if id := nodeIDFromProviderID(node.Spec.ProviderID); id != "" {
			if g := p.m.groupForNodeID(id); g != nil {
				g.mu.Lock()
				planID = g.pool.Plan
				g.mu.Unlock()
			}
		}
	}
	if planID == "" {
		return 0, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s has no %s label and no known pool", node.Name, corev1.LabelInstanceTypeStable)
	}
	plan, ok := p.m.plan(planID)
	if !ok {
		return 0, cloudprovider.Errorf(cloudprovider.ErrNotFound, "plan %q is unknown", planID)
	}
	return plan.MonthlyCost / hoursPerMonth * hours(start, end), nil
}

// PodPrice implements cloudprovider.PricingModel: the pod's CPU and memory
// requests priced at the average per-vCPU and per-GiB rate of the pools'
// plans, each resource carrying half of a plan's cost. Only ratios matter to
// CA's price expander, and it skips any option whose pod price fails.
func (p pricing) PodPrice(ctx context.Context, pod *corev1.Pod, start, end time.Time) (float64, error) {
	if pod == nil {
		return 0, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "nil pod")
	}
	cpuRate, memRate, ok := p.rates()
	if !ok {
		return 0, fmt.Errorf("no plan prices known yet: %w", cloudprovider.ErrUnavailable)
	}
	var cpu, memGiB float64
	for _, c := range pod.Spec.Containers {
		cpu += float64(c.Resources.Requests.Cpu().MilliValue()) / 1000
		memGiB += float64(c.Resources.Requests.Memory().Value()) / (1 << 30)
	}
	return (cpu*cpuRate + memGiB*memRate) * hours(start, end), nil
}

// rates averages hourly per-vCPU and per-GiB prices over the pools' plans.
func (p pricing) rates() (cpuRate, memRate float64, ok bool) {
	n := 0
	for _, g := range p.m.nodeGroups() {
		g.mu.Lock()
		planID := g.pool.Plan
		g.mu.Unlock()
		plan, found := p.m.plan(planID)
		if !found || plan.VCPUs == 0 || plan.RAMMiB == 0 {
			continue
		}
		hourly := plan.MonthlyCost / hoursPerMonth
		cpuRate += hourly / 2 / float64(plan.VCPUs)
		memRate += hourly / 2 / (float64(plan.RAMMiB) / 1024)
		n++
	}
	if n == 0 {
		return 0, 0, false
	}
	return cpuRate / float64(n), memRate / float64(n), true
}

func hours(start, end time.Time) float64 {
	if !end.After(start) {
		return 0
	}
	return end.Sub(start).Hours()
}
