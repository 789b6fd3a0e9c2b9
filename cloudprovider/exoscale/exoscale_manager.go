package exoscale

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
)

// cloudAPI is the narrow set of Exoscale calls the provider makes.
type cloudAPI interface {
	ListSKSClusters(ctx context.Context) ([]exoapi.Cluster, error)
	ListInstancePools(ctx context.Context) ([]exoapi.InstancePool, error)
	ListPoolMembers(ctx context.Context) ([]exoapi.Instance, error)
	GetInstancePool(ctx context.Context, id string) (exoapi.InstancePool, error)
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
	// listing is when the snapshot's refresh began.
	listing        groupstate.Listing
	pools          map[string]exoapi.InstancePool
	nodepoolByPool map[string]exoapi.Nodepool
	membersByPool  map[string][]exoapi.Instance
}

// manager owns the snapshot and the node groups. Lock order: refreshGate,
// mu, then groupstate's locks; a group's mu is held alone.
type manager struct {
	cfg    Config
	client cloudAPI
	now    func() time.Time

	// refreshGate serialises refreshes and member lookups; reads never wait.
	refreshGate refresh.Gate
	// reads (under refreshGate) and fresh let a refresh skip unchanged lists.
	reads refreshReads
	fresh *refresh.Freshness

	mu           sync.RWMutex
	snap         *snapshot
	groups       groupstate.Groups[*nodeGroup]
	instancePool map[string]string // instance id -> pool id, for every pool member
	learned      map[string]bool   // pool ids learnt from NodeGroupForNode
	unknownNodes refresh.UnknownNodeLookup
	// ledger is never replaced, so groups' guards and state outlive refreshes.
	ledger      *groupstate.Ledger
	types       map[string]exoapi.InstanceType
	quota       *exoapi.Quota
	quotaAt     time.Time
	lastRefresh time.Time
	refreshed   bool
	warned      map[string]bool
	// resolved is where --nodes specs landed at the last refresh.
	resolved  groupconfig.SpecResolution
	specWatch groupconfig.SpecWatch
}

// String never shows credentials (fmt would print the unexported cfg raw).
func (m *manager) String() string { return "exoscale manager: " + m.cfg.String() }

// GoString never shows credentials.
func (m *manager) GoString() string { return m.String() }

// newManager returns an empty manager whose groups' guards use guard.
func newManager(cfg Config, client cloudAPI, now func() time.Time, guard groupstate.GuardOptions) *manager {
	if now == nil {
		now = time.Now
	}
	m := &manager{
		cfg: cfg, client: client, now: now,
		ledger:       groupstate.NewLedger(guard, now),
		snap:         &snapshot{pools: map[string]exoapi.InstancePool{}, nodepoolByPool: map[string]exoapi.Nodepool{}, membersByPool: map[string][]exoapi.Instance{}},
		instancePool: map[string]string{},
		learned:      map[string]bool{},
		types:        map[string]exoapi.InstanceType{},
		warned:       map[string]bool{},
		specWatch:    groupconfig.SpecWatch{Provider: ProviderName},
		fresh:        refresh.NewFreshness(refresh.DefaultMaxStaleness, now),
	}
	m.unknownNodes.Provider, m.unknownNodes.Now, m.unknownNodes.Lookup = ProviderName, now, m.lookupMembers
	return m
}

// nodeGroups returns the groups by id, any learnt since the last refresh last.
func (m *manager) nodeGroups() []*nodeGroup {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.groups.List()
}

// group returns the group with id, or nil.
func (m *manager) group(id string) *nodeGroup {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g, _ := m.groups.Get(id)
	return g
}

// warnOnce logs msg at Info the first time key is seen.
func (m *manager) warnOnce(key, msg string, kv ...any) {
	m.mu.Lock()
	seen := m.warned[key]
	m.warned[key] = true
	m.mu.Unlock()
	if !seen {
		klog.InfoS(msg, append([]any{"provider", ProviderName}, kv...)...)
	}
}

// nodeGroupForInstance answers from the index; instances missing from it
// share one member listing per refresh, not a GET each.
func (m *manager) nodeGroupForInstance(ctx context.Context, id string) cloudprovider.NodeGroup {
	return refresh.ResolveNodeGroup(ctx, &m.unknownNodes, id, m.indexedGroup)
}

// lookupMembers indexes all instance-pool members. It skips while a refresh
// runs and holds the gate otherwise, so no older list replaces its index.
func (m *manager) lookupMembers(ctx context.Context) error {
	return m.refreshGate.RunUnlessBusy(ctx, m.lookupMembersLocked)
}

// lookupMembersLocked is lookupMembers; callers hold refreshGate.
func (m *manager) lookupMembersLocked(ctx context.Context) error {
	members, err := m.client.ListPoolMembers(ctx)
	if err != nil {
		return fmt.Errorf("list instance-pool members: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, in := range members {
		if in.ManagerType == exoapi.ManagerTypeInstancePool && in.ManagerID != "" {
			m.instancePool[in.ID] = in.ManagerID
		}
	}
	return nil
}

// indexedGroup answers from the index; known is false outside indexed pools.
// A member makes its pool a group unless EXOSCALE_LEARN_POOLS=false.
func (m *manager) indexedGroup(id string) (g *nodeGroup, known bool) {
	m.mu.RLock()
	poolID, indexed := m.instancePool[id]
	g, _ = m.groups.Get(poolID)
	m.mu.RUnlock()
	switch {
	case indexed && g != nil:
		return g, true
	case indexed && m.cfg.LearnPools:
		return m.learn(poolID), true
	}
	return nil, indexed
}

// learn makes poolID a node group, at once if the snapshot holds the pool.
func (m *manager) learn(poolID string) *nodeGroup {
	m.mu.Lock()
	if g, ok := m.groups.Get(poolID); ok {
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
	sel := selection{why: cloudprovider.Management{By: cloudprovider.ManagedByLearnt}}
	m.mu.RLock()
	if s, ok := m.resolved.ByGroup[poolID]; ok {
		sel = specSelection(s)
	}
	m.mu.RUnlock()
	rec, v := m.buildState(poolID, sel, snap)
	m.mu.Lock()
	defer m.mu.Unlock()
	if existing, ok := m.groups.Get(poolID); ok {
		return existing
	}
	// Under mu, so a refresh cannot drop the new group's ledger entry.
	g := newNodeGroup(m, poolID)
	g.rec = rec
	g.Install(snap.listing, v, groupstate.Settling{})
	m.groups = m.groups.With(poolID, g)
	klog.V(2).InfoS("Learnt node group from a node lookup", "provider", ProviderName, "nodeGroup", poolID, "name", rec.displayName(), "min", v.Min, "max", v.Max)
	return g
}

// ownerOf returns each instance's pool per the index.
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
