package exoscale

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
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
	pools          map[string]exoapi.InstancePool
	nodepoolByPool map[string]exoapi.Nodepool
	membersByPool  map[string][]exoapi.Instance
}

// manager owns the snapshot and the node groups. Lock order: refreshMu, then
// a group's mu, then mu; mu is never held while taking a group's mu.
type manager struct {
	cfg    Config
	client cloudAPI
	now    func() time.Time

	refreshMu sync.Mutex
	// reads and maxStaleness (--max-staleness) let an unchanged refresh
	// skip the cluster and instance lists; refreshMu guards reads.
	reads        refreshReads
	maxStaleness time.Duration

	mu           sync.RWMutex
	snap         *snapshot
	groups       map[string]*nodeGroup
	instancePool map[string]string // instance id -> pool id, for every pool member
	learned      map[string]bool   // pool ids learnt from NodeGroupForNode
	// unknownNodes allows one instance listing per refresh for instances
	// missing from the index, and remembers those in no pool.
	unknownNodes groupstate.UnknownNodeLookup
	// guardOpts are the node groups' MutationGuard options
	// (BuildOptions.Guard).
	guardOpts   groupstate.GuardOptions
	types       map[string]exoapi.InstanceType
	quota       *exoapi.Quota
	quotaAt     time.Time
	lastRefresh time.Time
	refreshed   bool
	opSeq       atomic.Uint64
	warned      map[string]bool
	// resolved is where --nodes specs landed at the last refresh.
	resolved  groupconfig.SpecResolution
	specWatch groupconfig.SpecWatch
}

// String never shows credentials (fmt would print the unexported cfg raw).
func (m *manager) String() string { return "exoscale manager: " + m.cfg.String() }

// GoString never shows credentials.
func (m *manager) GoString() string { return m.String() }

func newManager(cfg Config, client cloudAPI, now func() time.Time) *manager {
	if now == nil {
		now = time.Now
	}
	m := &manager{
		cfg: cfg, client: client, now: now,
		snap:         &snapshot{pools: map[string]exoapi.InstancePool{}, nodepoolByPool: map[string]exoapi.Nodepool{}, membersByPool: map[string][]exoapi.Instance{}},
		groups:       map[string]*nodeGroup{},
		instancePool: map[string]string{},
		learned:      map[string]bool{},
		types:        map[string]exoapi.InstanceType{},
		warned:       map[string]bool{},
		specWatch:    groupconfig.SpecWatch{Provider: ProviderName},
		maxStaleness: groupstate.DefaultMaxStaleness,
	}
	m.unknownNodes.Provider, m.unknownNodes.Now, m.unknownNodes.Lookup = ProviderName, now, m.lookupMembers
	return m
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
