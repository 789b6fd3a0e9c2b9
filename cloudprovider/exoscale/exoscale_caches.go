package exoscale

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// The caches: instance types (immutable, fetched once) and the instance
// quota (re-read every quotaTTL), which give templates and default sizes.

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

// fetchTypes caches the instance types of selected groups; types never change,
// so each is fetched once per process. A failure only disables templates.
func (m *manager) fetchTypes(ctx context.Context, selected map[string]*groupconfig.NodeGroupSpec, snap *snapshot) {
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
