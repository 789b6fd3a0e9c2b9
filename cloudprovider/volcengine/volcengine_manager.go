package volcengine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

// cloudAPI is the narrow set of Volcengine calls the manager makes.
type cloudAPI interface {
	ListScalingGroups(ctx context.Context, ids []string) ([]volcapi.ScalingGroup, error)
	ScalingGroupsPage(ctx context.Context, page int) (volcapi.GroupPage, error)
	ListScalingInstances(ctx context.Context, groupID string) ([]volcapi.ScalingInstance, error)
	SetDesiredInstances(ctx context.Context, groupID string, desired int) error
	RemoveInstances(ctx context.Context, groupID string, ids []string, decreaseDesired bool) (string, error)
	ActivitiesSince(ctx context.Context, groupID string, since time.Time) ([]volcapi.Activity, error)
	ListScalingConfigurations(ctx context.Context, ids []string) ([]volcapi.ScalingConfiguration, error)
	ListInstanceTypes(ctx context.Context, ids []string) ([]volcapi.InstanceType, error)
	ListImages(ctx context.Context, ids []string) ([]volcapi.Image, error)
	ListSubnets(ctx context.Context, ids []string) ([]volcapi.Subnet, error)
}

// slotIDPrefix starts a failed slot's id; ECS ids start with "i-".
const slotIDPrefix = "placeholder-"

// slotID is the instance id of failed slot n of group groupID. Its form is
// fixed: a running CA may hold such ids across an upgrade.
func slotID(groupID string, n int) string {
	return fmt.Sprintf("%s%s-%d", slotIDPrefix, groupID, n)
}

// parseSlotID reverses slotID; ok is false for any other id.
func parseSlotID(id string) (groupID string, n int, ok bool) {
	rest, found := strings.CutPrefix(id, slotIDPrefix)
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n <= 0 || strconv.Itoa(n) != rest[i+1:] {
		return "", 0, false
	}
	return rest[:i], n, true
}

// manager owns the snapshot and performs every cloud call.
type manager struct {
	api       cloudAPI
	region    string
	static    []groupconfig.NodeGroupSpec
	selectors []tagSelector
	now       func() time.Time

	unknownNodes refresh.UnknownNodeLookup

	// refreshGate serialises Refresh calls and the lookup refresh.
	refreshGate refresh.Gate
	// listings are the last instance listings; only Refresh uses them.
	listings map[string]groupListing
	// catalog holds the last group descriptions; only Refresh uses it.
	catalog groupCatalog
	// fresh keeps what is served younger than --max-staleness.
	fresh     *refresh.Freshness
	specWatch groupconfig.SpecWatch

	// ledger keeps each group's guard and mutation record across snapshots.
	ledger *groupstate.Ledger

	// mu guards the groups, the instance index and the template inputs.
	mu     sync.RWMutex
	groups groupstate.Groups[*nodeGroup]
	// byInstance maps listed ECS instance ids to their groups.
	byInstance map[string]string
	templates  map[string]*templateEntry
}

// newManager returns an empty manager (guard options, staleness bound, clock).
func newManager(api cloudAPI, region string, static []groupconfig.NodeGroupSpec, selectors []tagSelector, guardOpts groupstate.GuardOptions, maxStaleness time.Duration, now func() time.Time) *manager {
	if now == nil {
		now = time.Now
	}
	m := &manager{
		api:        api,
		region:     region,
		static:     static,
		selectors:  selectors,
		now:        now,
		specWatch:  groupconfig.SpecWatch{Provider: ProviderName},
		ledger:     groupstate.NewLedger(guardOpts, now),
		byInstance: map[string]string{},
		templates:  map[string]*templateEntry{},
		listings:   map[string]groupListing{},
		fresh:      refresh.NewFreshness(maxStaleness, now),
	}
	m.unknownNodes.Provider, m.unknownNodes.Now, m.unknownNodes.Lookup = ProviderName, now, m.lookupRefresh
	return m
}

// group returns the snapshot's node group id.
func (m *manager) group(id string) (*nodeGroup, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.groups.Get(id)
}

// groupList returns the snapshot's groups in a stable order.
func (m *manager) groupList() []*nodeGroup {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.groups.List()
}

// groupForInstance maps an ECS instance id, or a failed slot's id, to its group.
func (m *manager) groupForInstance(instanceID string) (*nodeGroup, bool) {
	if id, n, ok := parseSlotID(instanceID); ok {
		g, managed := m.group(id)
		if !managed || !g.SlotFailed(n) {
			return nil, false
		}
		return g, true
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	id, ok := m.byInstance[instanceID]
	if !ok {
		return nil, false
	}
	return m.groups.Get(id)
}

// index adds group id's listed instances the index lacks.
func (m *manager) index(id string, listed []volcapi.ScalingInstance) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, si := range listed {
		if _, known := m.byInstance[si.ID]; !known {
			m.byInstance[si.ID] = id
		}
	}
}

// staticSpec returns the --nodes spec of group id, nil when none names it.
func (m *manager) staticSpec(id string) *groupconfig.NodeGroupSpec {
	var spec *groupconfig.NodeGroupSpec
	for i := range m.static {
		if m.static[i].Name == id {
			spec = &m.static[i]
		}
	}
	return spec
}

// lookupRefresh refreshes for unknown instances unless a refresh is running.
func (m *manager) lookupRefresh(ctx context.Context) error {
	return m.refreshGate.RunUnlessBusy(ctx, func(ctx context.Context) error { return m.refreshWith(ctx, true) })
}
