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

// slotIDPrefix starts the instance id under which a slot of the desired
// number the service failed to fill (groupstate.FailedSlot) is reported;
// ECS ids start with "i-", so the two never collide.
const slotIDPrefix = "placeholder-"

// slotID is the instance id of failed slot n of group groupID. It keeps the
// form a running CA has seen from earlier versions of this provider, so
// ParseProviderID and every node-to-group lookup treat it as before.
func slotID(groupID string, n int) string {
	return fmt.Sprintf("%s%s-%d", slotIDPrefix, groupID, n)
}

// parseSlotID returns the group and slot number an id built by slotID
// names; ok is false for any other id.
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

	// unknownNodes allows one refresh per CA refresh for nodes missing from
	// the snapshot, and remembers instances it found in no managed group (a
	// control plane, an unmanaged group).
	unknownNodes refresh.UnknownNodeLookup

	// refreshGate serialises Refresh calls and the lookup refresh.
	refreshGate refresh.Gate
	// listings is each group's last instance listing; only Refresh (under
	// refreshGate) reads and writes it.
	listings map[string]groupListing
	// catalog is each group's last DescribeScalingGroups answer; only
	// Refresh (under refreshGate) reads and writes it.
	catalog groupCatalog
	// fresh is the one rule for when a refresh reads again what it read
	// before (group descriptions, pages of the group list, instance
	// listings): nothing served is older than --max-staleness.
	fresh     *refresh.Freshness
	specWatch groupconfig.SpecWatch

	// ledger is the record of our mutations per group: each group's
	// guard, the instances whose removal the API accepted, the slots the
	// service failed to fill, and the one sequence that tells a Refresh whether a mutation
	// overtook its listing. It outlives snapshots.
	ledger *groupstate.Ledger

	// mu guards the snapshot's index of groups and instances and the
	// template inputs; each group's served state is its own (nodeGroup).
	mu     sync.RWMutex
	groups groupstate.Groups[*nodeGroup]
	// byInstance maps the ECS instance ids the snapshot lists to their
	// groups.
	byInstance map[string]string
	templates  map[string]*templateEntry
}

// newManager returns an empty manager whose guards measure their quarantine
// with guardOpts (BuildOptions.Guard), which serves nothing older than
// maxStaleness (--max-staleness), and whose other times come from now.
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

// groupForInstance maps an ECS instance id, or the id of a failed slot, to
// its group.
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

// index points the instance index at group id's listed instances it does
// not know yet, after a read of that group alone.
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

// lookupRefresh is the lookup for instances missing from the snapshot: a
// refresh, unless one is running already (the shared RefreshGate rule).
func (m *manager) lookupRefresh(ctx context.Context) error {
	return m.refreshGate.RunUnlessBusy(ctx, func(ctx context.Context) error { return m.refreshWith(ctx, true) })
}
