package vultr

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// cloudAPI holds only the Vultr calls the manager makes; *vultrapi.Client
// implements it, and tests may substitute a stateful fake.
type cloudAPI interface {
	GetCluster(ctx context.Context, clusterID string) (*vultrapi.Cluster, error)
	ListNodePools(ctx context.Context, clusterID string) ([]vultrapi.NodePool, error)
	GetNodePool(ctx context.Context, clusterID, poolID string) (*vultrapi.NodePool, error)
	SetNodePoolQuantity(ctx context.Context, clusterID, poolID string, quantity int) (*vultrapi.NodePool, error)
	DeleteNode(ctx context.Context, clusterID, poolID, nodeID string) error
	ListPlans(ctx context.Context) ([]vultrapi.Plan, error)
	ListMetalPlans(ctx context.Context) ([]vultrapi.MetalPlan, error)
}

var _ cloudAPI = (*vultrapi.Client)(nil)

// manager owns the snapshot of the cluster's node pools. Every read CA makes
// is served from it; Refresh replaces it with one paginated node-pool list.
type manager struct {
	client    cloudAPI
	clusterID string
	specs     []groupconfig.NodeGroupSpec
	specWatch groupconfig.SpecWatch
	now       func() time.Time

	// ledger records our mutations per pool and holds each group's served
	// state (groupstate.Group): its guard, its deleting set (by
	// providerID), and the sequence by which Refresh tells a listing that
	// may predate a mutation (groupstate.Ledger).
	ledger *groupstate.Ledger

	// unknownNodes allows one pool listing per refresh for nodes missing
	// from the snapshot, and remembers nodes in no pool.
	unknownNodes refresh.UnknownNodeLookup
	// identityMismatch counts a node refused because its node-id label and
	// providerID disagree (BuildOptions.NodeIdentityMismatch); nil counts
	// nothing.
	identityMismatch func(groupID string)

	// refreshGate serialises Refresh and the lookup refresh; reads never wait for it.
	refreshGate refresh.Gate

	mu       sync.RWMutex
	groups   groupstate.Groups[*nodeGroup]
	byNodeID map[string]*nodeGroup
	// otherPoolNodes are the nodes of listed pools that are not node groups
	// (not named by --nodes): known, so they cost no lookup.
	otherPoolNodes map[string]bool
	refreshed      bool
	// reported remembers pool problems already logged, so a bad pool is
	// reported once and again only when its problem changes.
	reported map[string]string

	// attempts remembers the enrichment reads (infoRead) tried within
	// infoRetryInterval: one that failed, or a plan list that lacks a
	// pool's plan, is not tried again before.
	attempts *refresh.TTLCache[infoRead, struct{}]

	// infoMu guards the enrichment data below; it is held only for memory
	// access, so templates and prices never wait for the calls that read it.
	infoMu          sync.Mutex
	region          string
	plans           map[string]planInfo
	plansFetched    time.Time
	plansEverLoaded bool
}

// infoRead names an enrichment read, for manager.attempts.
type infoRead string

const (
	readRegion infoRead = "region"
	readPlans  infoRead = "plans"
)

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

// newManager returns a manager with an empty snapshot; guard is how the
// groups' guards measure their quarantine (BuildOptions.Guard).
func newManager(client cloudAPI, clusterID string, specs []groupconfig.NodeGroupSpec, guard groupstate.GuardOptions, now func() time.Time) *manager {
	if now == nil {
		now = time.Now
	}
	m := &manager{
		client: client, clusterID: clusterID, specs: specs, now: now, ledger: groupstate.NewLedger(guard, now),
		specWatch: groupconfig.SpecWatch{Provider: ProviderName},
		byNodeID:  map[string]*nodeGroup{},
		reported:  map[string]string{}, plans: map[string]planInfo{},
		attempts: refresh.NewTTLCache[infoRead, struct{}](infoRetryInterval, now),
	}
	m.unknownNodes.Provider, m.unknownNodes.Now, m.unknownNodes.Lookup = ProviderName, now, m.lookupRefresh
	return m
}

// lookupRefresh is the lookup for nodes missing from the snapshot: a refresh,
// unless one is running already (the shared RefreshGate rule).
func (m *manager) lookupRefresh(ctx context.Context) error {
	return m.refreshGate.RunUnlessBusy(ctx, m.refreshLocked)
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
	return m.groups.List()
}

func (m *manager) group(id string) (*nodeGroup, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.groups.Get(id)
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
