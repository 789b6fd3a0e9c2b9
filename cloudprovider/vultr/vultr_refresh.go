package vultr

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// Refresh lists the node pools once and rebuilds the snapshot; a failed list
// keeps the previous one. Plans and region are read when missing or stale.
func (m *manager) Refresh(ctx context.Context) error {
	return m.refreshGate.Run(ctx, m.refreshLocked)
}

// refreshLocked is Refresh; callers hold refreshGate.
func (m *manager) refreshLocked(ctx context.Context) error {
	// Begun before the list call: later changes may be missing from the list.
	listing := m.ledger.Begin()
	pools, err := m.client.ListNodePools(ctx, m.clusterID)
	if errors.Is(err, cloudprovider.ErrNotFound) {
		return fmt.Errorf("refresh node pools of VKE cluster %s: Vultr knows no such cluster: check cluster_id in --cloud-config: %w", m.clusterID, err)
	}
	if err != nil {
		return fmt.Errorf("refresh node pools of VKE cluster %s: %w", m.clusterID, err)
	}
	candidates := make([]groupconfig.SpecCandidate, 0, len(pools))
	for _, p := range pools {
		candidates = append(candidates, groupconfig.SpecCandidate{ID: p.ID, Names: []string{p.Label}})
	}
	resolved := groupconfig.ResolveSpecs(m.specs, candidates)
	if err := m.specWatch.Check(resolved); err != nil {
		return fmt.Errorf("VKE cluster %s: %w", m.clusterID, err)
	}
	m.ensureInfo(ctx, pools)

	type selected struct {
		pool     vultrapi.NodePool
		min, max int
		why      cloudprovider.Management
	}
	sel := map[string]selected{}
	problems := map[string]string{}
	for _, p := range pools {
		minSize, maxSize, why, problem := bounds(p, resolved)
		if problem != "" {
			problems[p.ID] = problem
		}
		if problem == "" && why.By != "" {
			sel[p.ID] = selected{p, minSize, maxSize, why}
		}
	}
	byNodeID := map[string]*nodeGroup{}
	otherPoolNodes := map[string]bool{}

	m.mu.Lock()
	m.groups = m.groups.Next(slices.Sorted(maps.Keys(sel)), func(id string) *nodeGroup { return newNodeGroup(m, id) }, func(g *nodeGroup) {
		s := sel[g.Id(ctx)]
		g.update(listing, s.pool, s.min, s.max, s.why)
	}, m.ledger)
	for _, p := range pools {
		g, ok := m.groups.Get(p.ID)
		for _, n := range p.Nodes {
			if ok {
				byNodeID[n.ID] = g
			} else {
				otherPoolNodes[n.ID] = true
			}
		}
	}
	m.byNodeID, m.otherPoolNodes, m.refreshed = byNodeID, otherPoolNodes, true
	m.reportProblems(problems)
	m.mu.Unlock()
	klog.V(4).InfoS("Refreshed node pools", "provider", ProviderName, "cluster", m.clusterID,
		"pools", len(pools), "nodeGroups", len(sel))
	return nil
}

// reportProblems logs each pool problem once; callers hold m.mu.
func (m *manager) reportProblems(problems map[string]string) {
	for id, p := range problems {
		if m.reported[id] != p {
			klog.ErrorS(nil, "Skipping Vultr node pool", "provider", ProviderName, "pool", id, "reason", p)
		}
	}
	m.reported = problems
}

// bounds decides whether pool p is a node group (why.By not empty) and its
// bounds: --nodes first, as the operator asked for it, else the auto_scaler
// pool's min/max. Min is raised to VKE's floor of one node.
func bounds(p vultrapi.NodePool, resolved groupconfig.SpecResolution) (minSize, maxSize int, why cloudprovider.Management, problem string) {
	spec, found := resolved.ByGroup[p.ID]
	switch {
	case found:
		minSize, maxSize = spec.MinSize, spec.MaxSize
		why = cloudprovider.Management{By: cloudprovider.ManagedByNodes, Detail: spec.String()}
	case p.AutoScaler:
		minSize, maxSize = p.MinNodes, p.MaxNodes
		why = cloudprovider.Management{By: cloudprovider.ManagedByCluster, Detail: "auto_scaler"}
	default:
		return 0, 0, why, ""
	}
	if minSize < vkeMinNodes {
		minSize = vkeMinNodes
	}
	if minSize > maxSize {
		return 0, 0, cloudprovider.Management{}, fmt.Sprintf("min %d (VKE floor %d) is above max %d", minSize, vkeMinNodes, maxSize)
	}
	return minSize, maxSize, why, ""
}

// ensureInfo reads the region and plans when missing or stale. A failure is
// logged and never fails Refresh: CA's loop needs the pools, not templates.
func (m *manager) ensureInfo(ctx context.Context, pools []vultrapi.NodePool) {
	now := m.now()
	if m.clusterRegion() == "" && m.attempts.PutIfAbsent(readRegion, struct{}{}) {
		c, err := m.client.GetCluster(ctx, m.clusterID)
		if err != nil {
			klog.ErrorS(err, "Cannot read VKE cluster region; templates will lack the region label until it can", "provider", ProviderName)
		} else {
			m.infoMu.Lock()
			m.region = c.Region
			m.infoMu.Unlock()
		}
	}
	if !m.plansDue(pools, now) || !m.attempts.PutIfAbsent(readPlans, struct{}{}) {
		return
	}
	plans, err := m.client.ListPlans(ctx)
	if err != nil {
		klog.ErrorS(err, "Cannot list Vultr plans; templates and prices use the previous list", "provider", ProviderName)
		return
	}
	metal, err := m.client.ListMetalPlans(ctx)
	if err != nil {
		klog.ErrorS(err, "Cannot list Vultr bare-metal plans; templates and prices use the previous list", "provider", ProviderName)
		return
	}
	next := make(map[string]planInfo, len(plans)+len(metal))
	for _, p := range plans {
		next[p.ID] = planInfo{ID: p.ID, VCPUs: p.VCPUCount, RAMMiB: p.RAM, DiskGB: p.Disk, MonthlyCost: p.MonthlyCost, GPUType: p.GPUType}
	}
	for _, p := range metal {
		cpus := p.CPUThreads
		if cpus == 0 {
			cpus = p.CPUCount
		}
		next[p.ID] = planInfo{ID: p.ID, VCPUs: cpus, RAMMiB: p.RAM, DiskGB: p.Disk, MonthlyCost: p.MonthlyCost, BareMetal: true}
	}
	m.infoMu.Lock()
	m.plans, m.plansFetched, m.plansEverLoaded = next, now, true
	m.infoMu.Unlock()
	klog.V(4).InfoS("Loaded Vultr plans", "provider", ProviderName, "plans", len(plans), "metalPlans", len(metal))
}

// plansDue reports whether to read the plans: never loaded, older than
// planCacheTTL, or lacking a pool's plan. A failed re-read keeps the old list.
func (m *manager) plansDue(pools []vultrapi.NodePool, now time.Time) bool {
	m.infoMu.Lock()
	defer m.infoMu.Unlock()
	if !m.plansEverLoaded || now.Sub(m.plansFetched) >= planCacheTTL {
		return true
	}
	for _, p := range pools {
		if _, ok := m.plans[p.Plan]; !ok && p.Plan != "" {
			return true
		}
	}
	return false
}
