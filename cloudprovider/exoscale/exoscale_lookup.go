package exoscale

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
)

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
