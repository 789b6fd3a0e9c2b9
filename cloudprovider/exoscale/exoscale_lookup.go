package exoscale

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
)

// nodeGroupForInstance answers NodeGroupForNode for a real instance id from
// the index; an instance missing from it costs at most one GET per refresh
// (cloudprovider.UnknownNodeLookup).
func (m *manager) nodeGroupForInstance(ctx context.Context, id string) (*nodeGroup, error) {
	if g, known := m.indexedGroup(id); known {
		return g, nil
	}
	_, err := m.unknownNodes.Do(ctx, id, func(ctx context.Context) error {
		inst, err := m.client.GetInstance(ctx, id)
		switch {
		case errors.Is(err, cloudprovider.ErrNotFound):
			return nil
		case err != nil:
			return fmt.Errorf("look up instance %s: %w", id, err)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if inst.ManagerType != exoapi.ManagerTypeInstancePool || inst.ManagerID == "" {
			m.unmanaged[id] = true
		} else {
			m.instancePool[id] = inst.ManagerID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	g, _ := m.indexedGroup(id)
	return g, nil
}

// indexedGroup answers from the index alone: known is false when the
// instance is in neither the pool index nor the unmanaged set.
func (m *manager) indexedGroup(id string) (g *nodeGroup, known bool) {
	m.mu.RLock()
	poolID, indexed := m.instancePool[id]
	g = m.groups[poolID]
	unmanaged := m.unmanaged[id]
	m.mu.RUnlock()
	switch {
	case indexed && g != nil:
		return g, true
	case indexed:
		return m.learn(poolID), true
	}
	return nil, unmanaged
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
