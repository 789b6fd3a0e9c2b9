package exoscale

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// nodeGroupForInstance answers NodeGroupForNode for a real instance id from
// the index; instances missing from it are resolved by the shared rule
// (groupstate.UnknownNodeLookup) with one instance listing per refresh
// (lookupMembers), never one call per instance: a thousand gone instances
// would otherwise cost a thousand GETs in every CA loop.
func (m *manager) nodeGroupForInstance(ctx context.Context, id string) *nodeGroup {
	return groupstate.ResolveUnknownNode(ctx, &m.unknownNodes, id, m.indexedGroup)
}

// lookupMembers is the lookup for instances missing from the index: the
// instance-pool member list, whose pools it adds to the index. It skips when
// a refresh is running, which brings the same list (the RefreshGate rule:
// waiting behind it could outlast CA's deadline), and holds refreshMu
// otherwise, so a refresh never replaces the index under it with an older
// list.
func (m *manager) lookupMembers(ctx context.Context) error {
	if !m.refreshMu.TryLock() {
		return nil
	}
	defer m.refreshMu.Unlock()
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

// indexedGroup answers from the index alone: known is false when the
// instance is in no pool the index holds. A member of a pool that is not a
// group yet becomes one (learn).
func (m *manager) indexedGroup(id string) (g *nodeGroup, known bool) {
	m.mu.RLock()
	poolID, indexed := m.instancePool[id]
	g = m.groups[poolID]
	m.mu.RUnlock()
	switch {
	case indexed && g != nil:
		return g, true
	case indexed:
		return m.learn(poolID), true
	}
	return nil, false
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
	var spec *groupconfig.NodeGroupSpec
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
