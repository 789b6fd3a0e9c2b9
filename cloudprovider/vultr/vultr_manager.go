package vultr

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// manager owns the snapshot of the cluster's node pools. Every read CA makes
// is served from it; Refresh replaces it with one paginated node-pool list.
type manager struct {
	client    vultrClient
	clusterID string
	specs     []groupconfig.NodeGroupSpec
	specWatch groupconfig.SpecWatch
	now       func() time.Time

	// mutations counts successful cloud mutations. Refresh notes the value
	// before listing, so a group mutated while the list was in flight keeps
	// its local target instead of the older listed one.
	mutations atomic.Uint64

	// unknownNodes allows one pool listing per refresh for nodes missing
	// from the snapshot, and remembers nodes in no pool.
	unknownNodes groupstate.UnknownNodeLookup
	// identityMismatch counts a node refused because its node-id label and
	// providerID disagree (BuildOptions.NodeIdentityMismatch); nil counts
	// nothing.
	identityMismatch func(groupID string)
	// guardOpts are the node groups' MutationGuard options
	// (BuildOptions.Guard).
	guardOpts groupstate.GuardOptions

	// refreshGate serialises Refresh and the lookup refresh; reads never wait for it.
	refreshGate groupstate.RefreshGate

	mu       sync.RWMutex
	groups   map[string]*nodeGroup
	order    []string
	byNodeID map[string]*nodeGroup
	// otherPoolNodes are the nodes of listed pools that are not node groups
	// (not named by --nodes): known, so they cost no lookup.
	otherPoolNodes map[string]bool
	refreshed      bool
	// reported remembers pool problems already logged, so a bad pool is
	// reported once and again only when its problem changes.
	reported map[string]string

	infoMu          sync.Mutex
	region          string
	regionAttempt   time.Time
	plans           map[string]planInfo
	plansFetched    time.Time
	plansAttempt    time.Time
	plansEverLoaded bool
}

// planInfo is what templates and pricing need from a plan.
type planInfo struct {
	ID          string
	VCPUs       int
	RAMMiB      int
	DiskGB      int
	MonthlyCost float64
	GPUType     string
	BareMetal   bool
}

func newManager(client vultrClient, clusterID string, specs []groupconfig.NodeGroupSpec, now func() time.Time) *manager {
	if now == nil {
		now = time.Now
	}
	m := &manager{
		client: client, clusterID: clusterID, specs: specs, now: now,
		specWatch: groupconfig.SpecWatch{Provider: ProviderName},
		groups:    map[string]*nodeGroup{}, byNodeID: map[string]*nodeGroup{},
		reported: map[string]string{}, plans: map[string]planInfo{},
	}
	m.unknownNodes.Provider, m.unknownNodes.Now, m.unknownNodes.Lookup = ProviderName, now, m.lookupRefresh
	return m
}

// Refresh lists the node pools once (following pagination) and rebuilds the
// snapshot and indexes. Plans and the cluster region are fetched only when
// unknown or stale. A failed list leaves the previous snapshot untouched.
func (m *manager) Refresh(ctx context.Context) error {
	return m.refreshGate.Run(ctx, m.refreshLocked)
}

// lookupRefresh is the lookup for nodes missing from the snapshot: a refresh,
// unless one is running already (the shared RefreshGate rule).
func (m *manager) lookupRefresh(ctx context.Context) error {
	return m.refreshGate.RunUnlessBusy(ctx, m.refreshLocked)
}

// refreshLocked is Refresh; callers hold refreshGate.
func (m *manager) refreshLocked(ctx context.Context) error {

	startSeq, start := m.mutations.Load(), m.now()
	pools, err := m.client.ListNodePools(ctx, m.clusterID)
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
	}
	var sel []selected
	problems := map[string]string{}
	for _, p := range pools {
		minSize, maxSize, ok, problem := bounds(p, resolved)
		if problem != "" {
			problems[p.ID] = problem
		}
		if ok {
			sel = append(sel, selected{p, minSize, maxSize})
		}
	}

	m.mu.RLock()
	old := m.groups
	m.mu.RUnlock()

	groups := make(map[string]*nodeGroup, len(sel))
	byNodeID := map[string]*nodeGroup{}
	order := make([]string, 0, len(sel))
	for _, s := range sel {
		g := old[s.pool.ID]
		if g == nil {
			g = newNodeGroup(m, s.pool.ID)
		}
		g.update(ctx, s.pool, s.min, s.max, startSeq, start)
		groups[g.id] = g
		order = append(order, g.id)
		for _, n := range s.pool.Nodes {
			byNodeID[n.ID] = g
		}
	}
	sort.Strings(order)
	otherPoolNodes := map[string]bool{}
	for _, p := range pools {
		if groups[p.ID] == nil {
			for _, n := range p.Nodes {
				otherPoolNodes[n.ID] = true
			}
		}
	}
	for id, g := range old {
		if groups[id] == nil {
			g.markRemoved()
		}
	}

	m.mu.Lock()
	m.groups, m.order, m.byNodeID, m.otherPoolNodes, m.refreshed = groups, order, byNodeID, otherPoolNodes, true
	m.reportProblems(problems)
	m.mu.Unlock()
	klog.V(4).InfoS("Refreshed node pools", "provider", ProviderName, "cluster", m.clusterID,
		"pools", len(pools), "nodeGroups", len(groups))
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

// bounds decides whether pool p is a node group and with which bounds.
// Pools flagged auto_scaler use the API's min/max; --nodes selects further
// pools (by id, or by label when unique) with the flag's min/max, and wins
// for flagged pools too because the operator asked explicitly. Min is clamped
// to VKE's floor of one node.
func bounds(p vultrapi.NodePool, resolved groupconfig.SpecResolution) (minSize, maxSize int, ok bool, problem string) {
	spec, found := resolved.ByGroup[p.ID]
	switch {
	case found:
		minSize, maxSize = spec.MinSize, spec.MaxSize
	case p.AutoScaler:
		minSize, maxSize = p.MinNodes, p.MaxNodes
	default:
		return 0, 0, false, ""
	}
	if minSize < vkeMinNodes {
		minSize = vkeMinNodes
	}
	if minSize > maxSize {
		return 0, 0, false, fmt.Sprintf("min %d (VKE floor %d) is above max %d", minSize, vkeMinNodes, maxSize)
	}
	return minSize, maxSize, true, ""
}

// ensureInfo loads the cluster region and the plans when they are missing or
// stale. Failures are logged and leave templates unavailable; they never fail
// Refresh, because the node-pool snapshot is what CA's loop depends on.
func (m *manager) ensureInfo(ctx context.Context, pools []vultrapi.NodePool) {
	m.infoMu.Lock()
	defer m.infoMu.Unlock()
	now := m.now()
	if m.region == "" && (m.regionAttempt.IsZero() || now.Sub(m.regionAttempt) >= regionRetryInterval) {
		m.regionAttempt = now
		c, err := m.client.GetCluster(ctx, m.clusterID)
		if err != nil {
			klog.ErrorS(err, "Cannot read VKE cluster region; templates will lack the region label until it can", "provider", ProviderName)
		} else {
			m.region = c.Region
		}
	}
	unknown := false
	for _, p := range pools {
		if _, ok := m.plans[p.Plan]; !ok && p.Plan != "" {
			unknown = true
		}
	}
	stale := !m.plansEverLoaded || now.Sub(m.plansFetched) >= planCacheTTL
	if !stale && !unknown {
		return
	}
	if !m.plansAttempt.IsZero() && now.Sub(m.plansAttempt) < planRetryInterval {
		return
	}
	m.plansAttempt = now
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
	m.plans, m.plansFetched, m.plansEverLoaded = next, now, true
	klog.V(4).InfoS("Loaded Vultr plans", "provider", ProviderName, "plans", len(plans), "metalPlans", len(metal))
}

func (m *manager) plan(id string) (planInfo, bool) {
	m.infoMu.Lock()
	defer m.infoMu.Unlock()
	p, ok := m.plans[id]
	return p, ok
}

func (m *manager) clusterRegion() string {
	m.infoMu.Lock()
	defer m.infoMu.Unlock()
	return m.region
}

// gpuTypes returns the GPU models of all known plans, or false before the
// plans were ever loaded (so CA asks again instead of caching an empty set).
func (m *manager) gpuTypes() (map[string]struct{}, bool) {
	m.infoMu.Lock()
	defer m.infoMu.Unlock()
	if !m.plansEverLoaded {
		return nil, false
	}
	out := map[string]struct{}{}
	for _, p := range m.plans {
		if p.GPUType != "" {
			out[p.GPUType] = struct{}{}
		}
	}
	return out, true
}

// nodeGroups returns the groups in id order.
func (m *manager) nodeGroups() []*nodeGroup {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*nodeGroup, 0, len(m.order))
	for _, id := range m.order {
		out = append(out, m.groups[id])
	}
	return out
}

func (m *manager) group(id string) (*nodeGroup, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g, ok := m.groups[id]
	return g, ok
}

// groupForNodeID is a map lookup in the index built at Refresh.
func (m *manager) groupForNodeID(nodeID string) *nodeGroup {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byNodeID[nodeID]
}

// indexed is the group of a node id per the snapshot; known is also true for
// nodes of listed pools that are not node groups (they cost no lookup).
func (m *manager) indexed(nodeID string) (g *nodeGroup, known bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g = m.byNodeID[nodeID]
	return g, g != nil || m.otherPoolNodes[nodeID]
}

// nodeIDFromProviderID returns the instance id of a vultr:// providerID, or
// "" for any other providerID (a node of another cloud or none at all).
func nodeIDFromProviderID(providerID string) string {
	if !strings.HasPrefix(providerID, ProviderIDPrefix) {
		return ""
	}
	id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, providerID)
	if err != nil {
		return ""
	}
	return id
}
