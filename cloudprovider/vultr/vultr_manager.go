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

// cloudAPI is the Vultr calls the manager makes; *vultrapi.Client implements it.
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

// manager holds the snapshot of the cluster's node pools that CA's reads see.
type manager struct {
	client    cloudAPI
	clusterID string
	specs     []groupconfig.NodeGroupSpec
	specWatch groupconfig.SpecWatch
	now       func() time.Time

	// ledger holds each pool's groupstate.Group and orders changes and listings.
	ledger *groupstate.Ledger

	// unknownNodes looks up nodes the snapshot lacks.
	unknownNodes refresh.UnknownNodeLookup
	// identityMismatch counts errIdentityMismatch refusals; nil counts nothing.
	identityMismatch func(groupID string)

	// refreshGate serialises Refresh and the lookup refresh; reads never wait for it.
	refreshGate refresh.Gate

	mu       sync.RWMutex
	groups   groupstate.Groups[*nodeGroup]
	byNodeID map[string]*nodeGroup
	// otherPoolNodes are nodes of listed pools that are not groups: no lookup.
	otherPoolNodes map[string]bool
	refreshed      bool
	// reported is each pool's last logged problem, logged again on a change.
	reported map[string]string

	// attempts holds the enrichment reads tried within infoRetryInterval.
	attempts *refresh.TTLCache[infoRead, struct{}]

	// infoMu guards the data below and is never held across a call.
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

// newManager returns an empty manager whose groups' guards use guard.
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

// lookupRefresh looks up unknown nodes with a refresh, unless one is running.
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

// gpuTypes is the known plans' GPU models, or false until plans are loaded.
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

// indexed is a node id's group; known is also true for otherPoolNodes.
func (m *manager) indexed(nodeID string) (g *nodeGroup, known bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g = m.byNodeID[nodeID]
	return g, g != nil || m.otherPoolNodes[nodeID]
}

// nodeIDFromProviderID is the instance id of a vultr:// providerID, else "".
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
