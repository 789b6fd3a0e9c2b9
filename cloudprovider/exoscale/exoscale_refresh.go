package exoscale

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
)

// refresh takes a new snapshot, or changes nothing if a list call fails. The
// pool list decides what else it reads (reads.plan, settleOperations).
func (m *manager) refresh(ctx context.Context, force bool) error {
	return m.refreshGate.Run(ctx, func(ctx context.Context) error { return m.refreshLocked(ctx, force) })
}

// refreshLocked is refresh; callers hold refreshGate.
func (m *manager) refreshLocked(ctx context.Context, force bool) error {
	round := m.fresh.Begin(true)
	now := round.At
	m.mu.RLock()
	skip := !force && m.refreshed && m.cfg.RefreshInterval > 0 && now.Sub(m.lastRefresh) < m.cfg.RefreshInterval
	// Attempts count too: a key without get-quota must not cost a call per loop.
	quotaStale := m.quotaAt.IsZero() || now.Sub(m.quotaAt) >= quotaTTL
	m.mu.RUnlock()
	if skip {
		return nil
	}
	listing := m.ledger.Begin()

	pools, err := m.client.ListInstancePools(ctx)
	if err != nil {
		return fmt.Errorf("refresh exoscale snapshot: %w", err)
	}
	opResults, seen := m.settleOperations(ctx, listing, pools)
	if len(seen) > 0 {
		// A success polled after the pool list may be missing from it; a
		// second list shows it, or the next refresh settles it.
		if fresh, err := m.client.ListInstancePools(ctx); err == nil {
			pools = fresh
			for _, op := range seen {
				opResults[op.ID] = op
			}
		} else {
			klog.V(4).InfoS("Cannot list pools again after a polled success; settling it at the next refresh", "provider", ProviderName, "err", err)
			if m.reads.polled == nil {
				m.reads.polled = map[string]exoapi.Operation{}
			}
			for _, op := range seen {
				m.reads.polled[op.ID] = op
			}
		}
	}
	readClusters, readMembers := m.reads.plan(pools, force, len(opResults) > 0, round)
	var (
		wg             sync.WaitGroup
		clusters       = m.reads.clusters
		members        = m.reads.members
		quota          exoapi.Quota
		cErr, mErr, qE error
	)
	if readClusters {
		wg.Add(1)
		go func() { defer wg.Done(); clusters, cErr = m.client.ListSKSClusters(ctx) }()
	}
	if readMembers {
		wg.Add(1)
		go func() { defer wg.Done(); members, mErr = m.client.ListPoolMembers(ctx) }()
	}
	if quotaStale {
		wg.Add(1)
		go func() { defer wg.Done(); quota, qE = m.client.GetQuota(ctx, exoapi.QuotaEntityInstance) }()
	}
	wg.Wait()
	if err := errors.Join(cErr, mErr); err != nil {
		return fmt.Errorf("refresh exoscale snapshot: %w", err)
	}
	m.reads.record(pools, readClusters, clusters, readMembers, members, now)

	snap := &snapshot{
		listing:        listing,
		pools:          make(map[string]exoapi.InstancePool, len(pools)),
		nodepoolByPool: map[string]exoapi.Nodepool{},
		membersByPool:  map[string][]exoapi.Instance{},
	}
	for _, p := range pools {
		snap.pools[p.ID] = p
	}
	for _, c := range clusters {
		for _, np := range c.Nodepools {
			if np.InstancePoolID != "" {
				snap.nodepoolByPool[np.InstancePoolID] = np
			}
		}
	}
	index := make(map[string]string, len(members))
	for _, in := range members {
		if in.ManagerType == exoapi.ManagerTypeInstancePool && in.ManagerID != "" {
			snap.membersByPool[in.ManagerID] = append(snap.membersByPool[in.ManagerID], in)
			index[in.ID] = in.ManagerID
		}
	}

	m.mu.Lock()
	if quotaStale {
		m.quotaAt = now
		if qE != nil {
			klog.ErrorS(qE, "Cannot read the instance quota; keeping the previous default maximum", "provider", ProviderName, "retryIn", quotaTTL)
		} else {
			m.quota = &quota
		}
	}
	learned := make(map[string]bool, len(m.learned))
	for id := range m.learned {
		learned[id] = true
	}
	m.mu.Unlock()

	selected, err := m.selectGroups(clusters, snap, learned)
	if err != nil {
		return err
	}
	m.fetchTypes(ctx, selected, snap)

	states := make(map[string]func(*nodeGroup), len(selected))
	for id, sel := range selected {
		rec, v := m.buildState(id, sel, snap)
		states[id] = func(g *nodeGroup) { g.install(rec, v, opResults, listing) }
	}

	// Under mu, as in learn, so the ledger holds exactly the groups served.
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make(map[string]bool, len(selected))
	for id := range selected {
		ids[id] = true
	}
	for id := range m.learned {
		if m.groups.Holds(id) && !learned[id] {
			// Learnt by a lookup while this refresh ran; the next one covers it.
			ids[id] = true
		}
		if _, ok := snap.pools[id]; !ok && learned[id] {
			delete(m.learned, id)
		}
	}
	m.groups = m.groups.Next(slices.Sorted(maps.Keys(ids)), func(id string) *nodeGroup { return newNodeGroup(m, id) }, func(g *nodeGroup) {
		if install, ok := states[g.id]; ok {
			install(g)
		}
	}, m.ledger)
	m.reads.keepPolled(m.groups.List())
	m.snap = snap
	m.instancePool = index
	m.unknownNodes.Refreshed()
	m.lastRefresh = now
	m.refreshed = true
	m.fresh.End(round)
	klog.V(4).InfoS("Refreshed snapshot", "provider", ProviderName, "nodeGroups", m.groups.Len(), "pools", len(pools), "poolMembers", len(members))
	return nil
}

// settleOperations returns, by id, the operations this refresh settles and
// the successes it polled. The pool list settles most (poolShows); the rest
// need a GET /operation, as a failed or queued operation leaves the pool as is.
func (m *manager) settleOperations(ctx context.Context, listing groupstate.Listing, pools []exoapi.InstancePool) (results map[string]exoapi.Operation, seen []exoapi.Operation) {
	sizes := make(map[string]int, len(pools))
	for _, p := range pools {
		sizes[p.ID] = p.Size
	}
	results = map[string]exoapi.Operation{}
	for _, g := range m.nodeGroups() {
		var ops []submittedOp
		for _, o := range g.Settleable(listing) {
			if sub, ok := o.Data.(submittedOp); ok {
				ops = append(ops, sub)
			}
		}
		if size, listed := sizes[g.id]; listed && poolShows(ops, size) {
			for _, o := range ops {
				if !o.settled() {
					results[o.op.ID] = exoapi.Operation{ID: o.op.ID, State: exoapi.OperationSuccess}
				}
			}
			continue
		}
		for _, o := range ops {
			id := o.op.ID
			if o.settled() {
				continue
			}
			if polled, ok := m.reads.polled[id]; ok {
				results[id] = polled
				continue
			}
			op, err := m.client.GetOperation(ctx, id)
			switch {
			case err == nil && !op.Done():
			case err == nil && op.State != exoapi.OperationSuccess:
				results[id] = op
			case err == nil:
				op.ID = id // keyed as submitted, whatever the answer echoes
				seen = append(seen, op)
			case errors.Is(err, cloudprovider.ErrNotFound):
				// Exoscale forgets old operations; the lists show the result.
				seen = append(seen, exoapi.Operation{ID: id, State: exoapi.OperationSuccess})
			default:
				klog.V(4).InfoS("Cannot read operation; keeping it pending", "provider", ProviderName, "nodeGroup", g.id, "operation", id, "err", err)
			}
		}
	}
	return results, seen
}

// poolShows reports whether a pool of size shows a group's operations
// (oldest first) succeeded: the last scale's absolute size, or a chain of
// evictions reaching the last target. Mixed kinds, and scales back to the
// starting size, look the same applied or not, so those are polled.
func poolShows(ops []submittedOp, size int) bool {
	if len(ops) == 0 || ops[len(ops)-1].to != size || ops[len(ops)-1].to == ops[0].from {
		return false
	}
	kind := ops[len(ops)-1].kind
	for i, o := range ops {
		if o.kind != kind || (kind == opEvict && i > 0 && o.from != ops[i-1].to) {
			return false
		}
	}
	return true
}

// selection is why a pool is a node group, and its --nodes spec if any.
type selection struct {
	spec *groupconfig.NodeGroupSpec
	why  cloudprovider.Management
}

// selectGroups picks the node groups and why: by --nodes, then the SKS
// cluster's nodepools, then learnt pools.
func (m *manager) selectGroups(clusters []exoapi.Cluster, snap *snapshot, learned map[string]bool) (map[string]selection, error) {
	selected := map[string]selection{}
	for id := range learned {
		if _, ok := snap.pools[id]; ok {
			selected[id] = selection{why: cloudprovider.Management{By: cloudprovider.ManagedByLearnt}}
		}
	}
	var scoped *exoapi.Cluster
	if m.cfg.SKSCluster != "" {
		var matches []exoapi.Cluster
		for _, c := range clusters {
			if c.ID == m.cfg.SKSCluster || c.Name == m.cfg.SKSCluster {
				matches = append(matches, c)
			}
		}
		switch len(matches) {
		case 0:
			return nil, cloudprovider.Errorf(cloudprovider.ErrNotFound, "SKS cluster %q not found in zone %s", m.cfg.SKSCluster, m.cfg.Zone)
		case 1:
			scoped = &matches[0]
		default:
			return nil, cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "SKS cluster name %q is ambiguous in zone %s; use its id", m.cfg.SKSCluster, m.cfg.Zone)
		}
		for _, np := range scoped.Nodepools {
			if _, ok := snap.pools[np.InstancePoolID]; ok {
				selected[np.InstancePoolID] = selection{why: cloudprovider.Management{By: cloudprovider.ManagedByCluster, Detail: "SKS cluster " + scoped.Name}}
			}
		}
	}
	resolved := resolveSpecs(m.cfg.NodeGroupSpecs, scoped, snap)
	if err := m.specWatch.Check(resolved); err != nil {
		return nil, err
	}
	for poolID, spec := range resolved.ByGroup {
		selected[poolID] = specSelection(spec)
	}
	m.mu.Lock()
	m.resolved = resolved
	m.mu.Unlock()
	return selected, nil
}

// resolveSpecs matches --nodes specs to pools and nodepools by id or name; a
// nodepool of the configured SKS cluster wins a shared name.
func resolveSpecs(specs []groupconfig.NodeGroupSpec, scoped *exoapi.Cluster, snap *snapshot) groupconfig.SpecResolution {
	candidates := make([]groupconfig.SpecCandidate, 0, len(snap.pools))
	for id, p := range snap.pools {
		c := groupconfig.SpecCandidate{ID: id, Names: []string{p.Name}}
		if np, sks := snap.nodepoolByPool[id]; sks {
			c.Names = append(c.Names, np.ID, np.Name)
			c.Preferred = scoped != nil && np.ClusterID == scoped.ID
		}
		candidates = append(candidates, c)
	}
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].ID < candidates[j].ID })
	return groupconfig.ResolveSpecs(specs, candidates)
}

// specSelection is the selection of a pool --nodes names.
func specSelection(spec groupconfig.NodeGroupSpec) selection {
	return selection{spec: &spec, why: cloudprovider.Management{By: cloudprovider.ManagedByNodes, Detail: spec.String()}}
}

// buildState derives a group's record and view from the snapshot.
func (m *manager) buildState(poolID string, sel selection, snap *snapshot) (poolRecord, groupstate.View) {
	p := snap.pools[poolID]
	rec := poolRecord{name: p.Name, typeID: p.InstanceTypeID, diskSizeGiB: p.DiskSizeGiB}
	rec.settings = groupconfig.ParseGroupSettings(settingsSourcePool, p.Labels)
	if np, ok := snap.nodepoolByPool[poolID]; ok {
		rec.sks = true
		rec.clusterID, rec.nodepoolID, rec.nodepoolName = np.ClusterID, np.ID, np.Name
		// The target stays the pool's size: the nodepool list may be
		// older, and Exoscale keeps a nodepool's size equal to its pool's.
		if np.InstanceTypeID != "" {
			rec.typeID = np.InstanceTypeID
		}
		if np.DiskSizeGiB > 0 {
			rec.diskSizeGiB = np.DiskSizeGiB
		}
		rec.labels, rec.taints = np.Labels, np.Taints
		rec.settings = groupconfig.ParseGroupSettings(settingsSourceNodepool, np.Labels)
	}
	_, hasTemplate := m.instanceType(rec.typeID)
	hasTemplate = hasTemplate && rec.typeID != ""
	minSize, maxSize := defaultMinSize, m.defaultMax()
	switch {
	case sel.spec != nil:
		minSize, maxSize = sel.spec.MinSize, sel.spec.MaxSize
	case sel.why.By == cloudprovider.ManagedByLearnt && m.cfg.LearntPoolBounds != nil:
		minSize, maxSize = m.cfg.LearntPoolBounds.Min, m.cfg.LearntPoolBounds.Max
	}
	if minSize == 0 && !hasTemplate {
		// Without a template CA cannot scale an empty group back up.
		m.warnOnce("min0/"+poolID, "Raising min size to 1: no template for this group", "nodeGroup", poolID)
		minSize = 1
	}
	v := view(p, snap.membersByPool[poolID], minSize, maxSize)
	v.Managed = sel.why
	return rec, v
}

// quotaSnapshot returns a copy of the last instance quota read, or nil.
func (m *manager) quotaSnapshot() *exoapi.Quota {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.quota == nil {
		return nil
	}
	q := *m.quota
	return &q
}

// instanceType returns a cached instance type.
func (m *manager) instanceType(id string) (exoapi.InstanceType, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.types[id]
	return t, ok
}

// fetchTypes caches selected groups' instance types, which never change.
func (m *manager) fetchTypes(ctx context.Context, selected map[string]selection, snap *snapshot) {
	failed := map[string]bool{}
	for poolID := range selected {
		typeID := snap.pools[poolID].InstanceTypeID
		if np, ok := snap.nodepoolByPool[poolID]; ok && np.InstanceTypeID != "" {
			typeID = np.InstanceTypeID
		}
		if typeID == "" {
			continue
		}
		if _, ok := m.instanceType(typeID); ok || failed[typeID] {
			continue
		}
		t, err := m.client.GetInstanceType(ctx, typeID)
		if err != nil {
			failed[typeID] = true
			klog.V(2).InfoS("Cannot read instance type; no template for this group yet", "provider", ProviderName, "nodeGroup", poolID, "instanceType", typeID, "err", err)
			continue
		}
		m.mu.Lock()
		m.types[typeID] = t
		m.mu.Unlock()
	}
}

// defaultMax is the instance quota limit, or UnlimitedMaxSize for -1 (unlimited).
func (m *manager) defaultMax() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.quota == nil || m.quota.Limit < 0 {
		return m.cfg.UnlimitedMaxSize
	}
	return int(m.quota.Limit)
}

// gpuTypes returns the families of GPU instance types used by groups.
func (m *manager) gpuTypes() map[string]struct{} {
	out := map[string]struct{}{}
	for _, g := range m.nodeGroups() {
		if t, ok := m.instanceType(g.record().typeID); ok && t.GPUs > 0 {
			out[t.Family] = struct{}{}
		}
	}
	return out
}

// refreshReads keeps the last cluster and member lists for refreshes to reuse.
type refreshReads struct {
	clusters   []exoapi.Cluster
	clustersAt time.Time
	// clusterPoolManagers is each pool's manager at the last cluster read.
	clusterPoolManagers map[string]string
	members             []exoapi.Instance
	membersAt           time.Time
	// pools is the pool list at the last instance read.
	pools []exoapi.InstancePool
	// polled are successes no pool list showed yet, by id.
	polled map[string]exoapi.Operation
}

// keepPolled forgets polled successes of operations not pending.
func (r *refreshReads) keepPolled(groups []*nodeGroup) {
	if len(r.polled) == 0 {
		return
	}
	pending := map[string]bool{}
	for _, g := range groups {
		for _, o := range g.Pending() {
			pending[o.ID] = true
		}
	}
	for id := range r.polled {
		if !pending[id] {
			delete(r.polled, id)
		}
	}
}

// plan decides what this refresh reads besides the pool list. The cluster
// list is read when expired (nodepool labels and taints leave no trace in the
// pool list) or when the pools changed in a way only it explains. Instance
// states are read when expired, while any is not running, or after a change.
// Expired, not Due, keeps the refresh budget.
func (r *refreshReads) plan(pools []exoapi.InstancePool, force, opSettled bool, round refresh.Round) (readClusters, readMembers bool) {
	readClusters = force || round.Expired(r.clustersAt) || !r.explains(pools)
	readMembers = force || opSettled || round.Expired(r.membersAt) ||
		!samePools(r.pools, pools) || !allRunning(r.members)
	return readClusters, readMembers
}

// record notes what was read at now.
func (r *refreshReads) record(pools []exoapi.InstancePool, readClusters bool, clusters []exoapi.Cluster, readMembers bool, members []exoapi.Instance, now time.Time) {
	if readClusters {
		r.clusters, r.clustersAt = clusters, now
		r.clusterPoolManagers = make(map[string]string, len(pools))
		for _, p := range pools {
			r.clusterPoolManagers[p.ID] = poolManager(p)
		}
	}
	if readMembers {
		r.members, r.membersAt, r.pools = members, now, pools
	}
}

// explains reports whether the last cluster list maps every pool. A pool of a
// nodepool being created or deleted must not be scaled as a plain pool.
func (r *refreshReads) explains(pools []exoapi.InstancePool) bool {
	if len(pools) != len(r.clusterPoolManagers) {
		return false
	}
	var nodepoolOfPool map[string]string
	for _, p := range pools {
		mgr, seen := r.clusterPoolManagers[p.ID]
		if !seen || mgr != poolManager(p) {
			return false
		}
		if p.ManagerType != exoapi.ManagerTypeSKSNodepool {
			continue
		}
		if nodepoolOfPool == nil {
			nodepoolOfPool = map[string]string{}
			for _, c := range r.clusters {
				for _, np := range c.Nodepools {
					nodepoolOfPool[np.InstancePoolID] = np.ID
				}
			}
		}
		if nodepoolOfPool[p.ID] != p.ManagerID {
			return false
		}
	}
	return true
}

// poolManager is what the pool list says manages a pool ("" for none).
func poolManager(p exoapi.InstancePool) string {
	if p.ManagerType == "" {
		return ""
	}
	return p.ManagerType + "/" + p.ManagerID
}

// allRunning reports whether every pool member is running.
func allRunning(members []exoapi.Instance) bool {
	for _, in := range members {
		if in.ManagerType == exoapi.ManagerTypeInstancePool && in.State != "running" {
			return false
		}
	}
	return true
}

func samePoolIDs(a, b []exoapi.InstancePool) bool {
	if len(a) != len(b) {
		return false
	}
	ids := make(map[string]bool, len(a))
	for _, p := range a {
		ids[p.ID] = true
	}
	for _, p := range b {
		if !ids[p.ID] {
			return false
		}
	}
	return true
}

// samePools reports whether every pool kept its size, state and members; a
// pool with a size but no members listed cannot tell, so it counts as changed.
func samePools(a, b []exoapi.InstancePool) bool {
	if !samePoolIDs(a, b) {
		return false
	}
	byID := make(map[string]exoapi.InstancePool, len(a))
	for _, p := range a {
		byID[p.ID] = p
	}
	for _, p := range b {
		old := byID[p.ID]
		if p.Size != old.Size || p.State != old.State || (p.Size > 0 && len(p.InstanceIDs) == 0) {
			return false
		}
		x, y := slices.Clone(old.InstanceIDs), slices.Clone(p.InstanceIDs)
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(x, y) {
			return false
		}
	}
	return true
}
