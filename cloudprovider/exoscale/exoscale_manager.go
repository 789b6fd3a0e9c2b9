package exoscale

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
)

// cloudAPI is the narrow set of Exoscale calls the provider makes.
type cloudAPI interface {
	ListSKSClusters(ctx context.Context) ([]exoapi.Cluster, error)
	ListInstancePools(ctx context.Context) ([]exoapi.InstancePool, error)
	ListPoolMembers(ctx context.Context) ([]exoapi.Instance, error)
	GetInstancePool(ctx context.Context, id string) (exoapi.InstancePool, error)
	GetInstance(ctx context.Context, id string) (exoapi.Instance, error)
	GetQuota(ctx context.Context, entity string) (exoapi.Quota, error)
	GetInstanceType(ctx context.Context, id string) (exoapi.InstanceType, error)
	GetOperation(ctx context.Context, id string) (exoapi.Operation, error)
	ScaleInstancePool(ctx context.Context, poolID string, size int) (exoapi.Operation, error)
	EvictInstancePoolMembers(ctx context.Context, poolID string, instanceIDs []string) (exoapi.Operation, error)
	ScaleSKSNodepool(ctx context.Context, clusterID, nodepoolID string, size int) (exoapi.Operation, error)
	EvictSKSNodepoolMembers(ctx context.Context, clusterID, nodepoolID string, instanceIDs []string) (exoapi.Operation, error)
}

// snapshot is the cloud as seen by the last successful Refresh.
type snapshot struct {
	pools          map[string]exoapi.InstancePool
	nodepoolByPool map[string]exoapi.Nodepool
	membersByPool  map[string][]exoapi.Instance
}

// lookup remembers one GET /instance for an instance missing from the snapshot.
type lookup struct {
	generation uint64
	err        error
}

// manager owns the snapshot and the node groups. Lock order: refreshMu, then
// a group's mu, then mu; mu is never held while taking a group's mu.
type manager struct {
	cfg    Config
	client cloudAPI
	now    func() time.Time

	refreshMu sync.Mutex

	mu           sync.RWMutex
	snap         *snapshot
	groups       map[string]*nodeGroup
	instancePool map[string]string // instance id -> pool id, for every pool member
	learned      map[string]bool   // pool ids learnt from NodeGroupForNode
	lookups      map[string]lookup
	unmanaged    map[string]bool // instances without a pool: a manager never appears later
	types        map[string]exoapi.InstanceType
	quota        *exoapi.Quota
	quotaAt      time.Time
	generation   uint64
	lastRefresh  time.Time
	refreshed    bool
	opSeq        atomic.Uint64
	warned       map[string]bool
	// resolved is where --nodes specs landed at the last refresh.
	resolved  cloudprovider.SpecResolution
	specWatch cloudprovider.SpecWatch
}

// String never shows credentials (fmt would print the unexported cfg raw).
func (m *manager) String() string { return "exoscale manager: " + m.cfg.String() }

// GoString never shows credentials.
func (m *manager) GoString() string { return m.String() }

func newManager(cfg Config, client cloudAPI, now func() time.Time) *manager {
	if now == nil {
		now = time.Now
	}
	return &manager{
		cfg: cfg, client: client, now: now,
		snap:         &snapshot{pools: map[string]exoapi.InstancePool{}, nodepoolByPool: map[string]exoapi.Nodepool{}, membersByPool: map[string][]exoapi.Instance{}},
		groups:       map[string]*nodeGroup{},
		instancePool: map[string]string{},
		learned:      map[string]bool{},
		lookups:      map[string]lookup{},
		unmanaged:    map[string]bool{},
		types:        map[string]exoapi.InstanceType{},
		warned:       map[string]bool{},
		specWatch:    cloudprovider.SpecWatch{Provider: ProviderName},
	}
}

// nextSeq orders mutations against refreshes: a refresh settles only
// operations recorded before it started, so its lists were taken after the
// cloud accepted them.
func (m *manager) nextSeq() uint64 { return m.opSeq.Add(1) }

// nodeGroups returns the groups sorted by id.
func (m *manager) nodeGroups() []*nodeGroup {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*nodeGroup, 0, len(m.groups))
	for _, g := range m.groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// group returns the group with id, or nil.
func (m *manager) group(id string) *nodeGroup {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.groups[id]
}

func (m *manager) quotaSnapshot() *exoapi.Quota {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.quota == nil {
		return nil
	}
	q := *m.quota
	return &q
}

func (m *manager) instanceType(id string) (exoapi.InstanceType, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.types[id]
	return t, ok
}

// refresh takes a new snapshot. Pending operations are checked before the
// lists are taken, so an operation seen as finished is reflected in them.
// Nothing is changed unless every list call succeeds.
func (m *manager) refresh(ctx context.Context, force bool) error {
	m.refreshMu.Lock()
	defer m.refreshMu.Unlock()
	now := m.now()
	m.mu.RLock()
	skip := !force && m.refreshed && m.cfg.RefreshInterval > 0 && now.Sub(m.lastRefresh) < m.cfg.RefreshInterval
	// Attempts count too: a key without get-quota must not cost a call per loop.
	quotaStale := m.quotaAt.IsZero() || now.Sub(m.quotaAt) >= quotaTTL
	m.mu.RUnlock()
	if skip {
		return nil
	}
	seq := m.nextSeq()
	opResults := m.checkOperations(ctx, seq)

	var (
		wg                   sync.WaitGroup
		clusters             []exoapi.Cluster
		pools                []exoapi.InstancePool
		members              []exoapi.Instance
		quota                exoapi.Quota
		cErr, pErr, mErr, qE error
	)
	wg.Add(3)
	go func() { defer wg.Done(); clusters, cErr = m.client.ListSKSClusters(ctx) }()
	go func() { defer wg.Done(); pools, pErr = m.client.ListInstancePools(ctx) }()
	go func() { defer wg.Done(); members, mErr = m.client.ListPoolMembers(ctx) }()
	if quotaStale {
		wg.Add(1)
		go func() { defer wg.Done(); quota, qE = m.client.GetQuota(ctx, exoapi.QuotaEntityInstance) }()
	}
	wg.Wait()
	if err := errors.Join(cErr, pErr, mErr); err != nil {
		return fmt.Errorf("refresh exoscale snapshot: %w", err)
	}

	snap := &snapshot{
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

	states := make(map[string]groupState, len(selected))
	for poolID, spec := range selected {
		states[poolID] = m.buildState(poolID, spec, snap)
	}

	// Apply to groups without holding mu (lock order).
	m.mu.RLock()
	existing := make(map[string]*nodeGroup, len(m.groups))
	for id, g := range m.groups {
		existing[id] = g
	}
	m.mu.RUnlock()
	next := make(map[string]*nodeGroup, len(states))
	for id, st := range states {
		g := existing[id]
		if g == nil {
			g = newNodeGroup(m, id)
			klog.InfoS("Discovered node group", "provider", ProviderName, "nodeGroup", id, "name", st.displayName(), "min", st.min, "max", st.max)
		}
		g.applySnapshot(st, opResults, seq, now)
		next[id] = g
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	for id, g := range m.groups {
		if _, ok := next[id]; ok {
			continue
		}
		if m.learned[id] && !learned[id] {
			// Learnt by a lookup while this refresh ran; the next one covers it.
			next[id] = g
			continue
		}
		klog.InfoS("Node group is gone", "provider", ProviderName, "nodeGroup", id)
	}
	for id := range m.learned {
		if _, ok := snap.pools[id]; !ok && learned[id] {
			delete(m.learned, id)
		}
	}
	m.snap = snap
	m.groups = next
	m.instancePool = index
	m.lookups = map[string]lookup{}
	m.generation++
	m.lastRefresh = now
	m.refreshed = true
	klog.V(4).InfoS("Refreshed snapshot", "provider", ProviderName, "nodeGroups", len(next), "pools", len(pools), "poolMembers", len(members))
	return nil
}

// checkOperations fetches the state of operations submitted before seq that
// were still pending; failures to read one leave it pending.
func (m *manager) checkOperations(ctx context.Context, seq uint64) map[string]exoapi.Operation {
	results := map[string]exoapi.Operation{}
	for _, g := range m.nodeGroups() {
		for _, id := range g.pendingOperationIDs(seq) {
			op, err := m.client.GetOperation(ctx, id)
			switch {
			case err == nil:
				if op.Done() {
					results[id] = op
				}
			case errors.Is(err, cloudprovider.ErrNotFound):
				// Expired operations are gone; the lists tell the truth now.
				results[id] = exoapi.Operation{ID: id, State: exoapi.OperationSuccess}
			default:
				klog.V(4).InfoS("Cannot read operation; keeping it pending", "provider", ProviderName, "nodeGroup", g.id, "operation", id, "err", err)
			}
		}
	}
	return results
}

// selectGroups decides which instance pools are node groups: every nodepool
// of the configured SKS cluster, every pool or nodepool named by --nodes, and
// every pool learnt from lookups. The value is the matching spec, if any.
func (m *manager) selectGroups(clusters []exoapi.Cluster, snap *snapshot, learned map[string]bool) (map[string]*cloudprovider.NodeGroupSpec, error) {
	selected := map[string]*cloudprovider.NodeGroupSpec{}
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
				selected[np.InstancePoolID] = nil
			}
		}
	}
	for id := range learned {
		if _, ok := snap.pools[id]; ok {
			selected[id] = nil
		}
	}
	resolved := resolveSpecs(m.cfg.NodeGroupSpecs, scoped, snap)
	if err := m.specWatch.Check(resolved); err != nil {
		return nil, err
	}
	for poolID, spec := range resolved.ByGroup {
		selected[poolID] = &spec
	}
	m.mu.Lock()
	m.resolved = resolved
	m.mu.Unlock()
	return selected, nil
}

// resolveSpecs matches --nodes specs against every pool by its id or name,
// or its nodepool's id or name; a nodepool of the configured SKS cluster
// wins a name it shares with other pools. Refresh and NodeGroupForNode's
// lookups both read this one answer.
func resolveSpecs(specs []cloudprovider.NodeGroupSpec, scoped *exoapi.Cluster, snap *snapshot) cloudprovider.SpecResolution {
	candidates := make([]cloudprovider.SpecCandidate, 0, len(snap.pools))
	for id, p := range snap.pools {
		c := cloudprovider.SpecCandidate{ID: id, Names: []string{p.Name}}
		if np, sks := snap.nodepoolByPool[id]; sks {
			c.Names = append(c.Names, np.ID, np.Name)
			c.Preferred = scoped != nil && np.ClusterID == scoped.ID
		}
		candidates = append(candidates, c)
	}
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].ID < candidates[j].ID })
	return cloudprovider.ResolveSpecs(specs, candidates)
}

func (m *manager) warnOnce(key, msg string, kv ...any) {
	m.mu.Lock()
	seen := m.warned[key]
	m.warned[key] = true
	m.mu.Unlock()
	if !seen {
		klog.InfoS(msg, append([]any{"provider", ProviderName}, kv...)...)
	}
}

// fetchTypes caches the instance types of selected groups; types never change,
// so each is fetched once per process. A failure only disables templates.
func (m *manager) fetchTypes(ctx context.Context, selected map[string]*cloudprovider.NodeGroupSpec, snap *snapshot) {
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

// buildState derives one group's view from the snapshot.
func (m *manager) buildState(poolID string, spec *cloudprovider.NodeGroupSpec, snap *snapshot) groupState {
	p := snap.pools[poolID]
	st := groupState{
		poolID: poolID, name: p.Name, cloudSize: p.Size, poolState: p.State,
		typeID: p.InstanceTypeID, diskSizeGiB: p.DiskSizeGiB,
		members: append([]exoapi.Instance(nil), snap.membersByPool[poolID]...),
	}
	if np, ok := snap.nodepoolByPool[poolID]; ok {
		st.sks = true
		st.clusterID, st.nodepoolID, st.nodepoolName = np.ClusterID, np.ID, np.Name
		// The nodepool's size is the one users set; the pool follows it.
		st.cloudSize = np.Size
		if np.InstanceTypeID != "" {
			st.typeID = np.InstanceTypeID
		}
		if np.DiskSizeGiB > 0 {
			st.diskSizeGiB = np.DiskSizeGiB
		}
		st.labels, st.taints = np.Labels, np.Taints
	}
	_, hasTemplate := m.instanceType(st.typeID)
	st.hasTemplate = hasTemplate && st.typeID != ""
	st.min, st.max = defaultMinSize, m.defaultMax()
	if spec != nil {
		st.min, st.max = spec.MinSize, spec.MaxSize
	}
	if st.min == 0 && !st.hasTemplate {
		// Without a template CA cannot scale an empty group back up.
		m.warnOnce("min0/"+poolID, "Raising min size to 1: no template for this group", "nodeGroup", poolID)
		st.min = 1
	}
	return st
}

// defaultMax is upstream's default: the instance quota limit, with a cap for
// the unlimited quota (-1), which upstream would pass on as a max of -1.
func (m *manager) defaultMax() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.quota == nil || m.quota.Limit < 0 {
		return m.cfg.UnlimitedMaxSize
	}
	return int(m.quota.Limit)
}

// lookupMargin is how long before the caller's deadline an instance lookup
// gives up, so that NodeGroupForNode answers (with an error CA logs) while CA
// still listens, instead of running into its deadline when the API is slow
// (found by hack/soak).
const lookupMargin = 500 * time.Millisecond

func lookupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, dl.Add(-lookupMargin))
	}
	return context.WithCancel(ctx)
}

// nodeGroupForInstance answers NodeGroupForNode for a real instance id from
// the index; an instance missing from it costs at most one GET per refresh.
func (m *manager) nodeGroupForInstance(ctx context.Context, id string) (*nodeGroup, error) {
	m.mu.RLock()
	poolID, indexed := m.instancePool[id]
	g := m.groups[poolID]
	unmanaged := m.unmanaged[id]
	l, looked := m.lookups[id]
	gen := m.generation
	m.mu.RUnlock()
	switch {
	case indexed && g != nil:
		return g, nil
	case indexed:
		return m.learn(poolID), nil
	case unmanaged:
		return nil, nil
	case looked && l.generation == gen:
		return nil, l.err
	}
	m.mu.Lock()
	if l, ok := m.lookups[id]; ok && l.generation == m.generation {
		m.mu.Unlock()
		return nil, l.err
	}
	m.lookups[id] = lookup{generation: gen}
	m.mu.Unlock()

	lctx, cancel := lookupContext(ctx)
	inst, err := m.client.GetInstance(lctx, id)
	cancel()
	if err != nil {
		if errors.Is(err, cloudprovider.ErrNotFound) {
			return nil, nil
		}
		err = fmt.Errorf("look up instance %s: %w", id, err)
		m.mu.Lock()
		if m.generation == gen {
			m.lookups[id] = lookup{generation: gen, err: err}
		}
		m.mu.Unlock()
		return nil, err
	}
	if inst.ManagerType != exoapi.ManagerTypeInstancePool || inst.ManagerID == "" {
		m.mu.Lock()
		m.unmanaged[id] = true
		m.mu.Unlock()
		return nil, nil
	}
	m.mu.Lock()
	m.instancePool[id] = inst.ManagerID
	m.mu.Unlock()
	return m.learn(inst.ManagerID), nil
}

// learn makes poolID a node group. When the pool is in the snapshot the group
// exists at once (so NodeGroups lists it); otherwise the next Refresh adds it.
func (m *manager) learn(poolID string) *nodeGroup {
	m.mu.Lock()
	if g := m.groups[poolID]; g != nil {
		m.mu.Unlock()
		return g
	}
	m.learned[poolID] = true
	snap := m.snap
	_, inSnap := snap.pools[poolID]
	m.mu.Unlock()
	if !inSnap {
		klog.V(2).InfoS("Learnt a new instance pool; it becomes a node group at the next refresh", "provider", ProviderName, "nodeGroup", poolID)
		return nil
	}
	var spec *cloudprovider.NodeGroupSpec
	m.mu.RLock()
	if s, ok := m.resolved.ByGroup[poolID]; ok {
		spec = &s
	}
	m.mu.RUnlock()
	st := m.buildState(poolID, spec, snap)
	g := newNodeGroup(m, poolID)
	g.st = st
	m.mu.Lock()
	defer m.mu.Unlock()
	if existing := m.groups[poolID]; existing != nil {
		return existing
	}
	m.groups[poolID] = g
	klog.InfoS("Learnt node group from a node lookup", "provider", ProviderName, "nodeGroup", poolID, "name", st.displayName(), "min", st.min, "max", st.max)
	return g
}

// ownerOf returns the pool of each instance id per the index (including
// instances found by lookups after the last refresh).
func (m *manager) ownerOf(ids []string) map[string]string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		if p, ok := m.instancePool[id]; ok {
			out[id] = p
		}
	}
	return out
}

// gpuTypes returns the families of GPU instance types used by groups.
func (m *manager) gpuTypes() map[string]struct{} {
	out := map[string]struct{}{}
	for _, g := range m.nodeGroups() {
		st := g.state()
		if t, ok := m.instanceType(st.typeID); ok && t.GPUs > 0 {
			out[t.Family] = struct{}{}
		}
	}
	return out
}
