package volcengine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
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

// instanceState is one instance in the snapshot.
type instanceState struct {
	id     string
	status string
	zone   string
	// failure is the failed scaling activity's message for Error instances.
	failure string
	// removing is set when we asked for the removal and the API still lists
	// the instance as live (the cloud has not caught up yet).
	removing bool
}

func (i instanceState) live() bool { return isLive(i.status) && !i.removing }

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

// groupState is one group in the snapshot. It is never modified in place:
// mutations install a modified copy, so readers can use it without locks.
type groupState struct {
	cloud volcapi.ScalingGroup
	min   int
	max   int
	// target is the desired number, or the live instance count for groups
	// created without a desired number.
	target       int
	instances    []instanceState
	discoveredBy string
	// settings are read from the group's tags at each Refresh.
	settings groupconfig.GroupSettings
}

func (g *groupState) hasDesired() bool { return g.cloud.Desired != volcapi.NoDesiredNumber }

func (g *groupState) liveCount() int {
	n := 0
	for _, in := range g.instances {
		if in.live() {
			n++
		}
	}
	return n
}

func (g *groupState) clone() *groupState {
	c := *g
	c.instances = slices.Clone(g.instances)
	return &c
}

// active reports whether the group scales: only an Active group does (an
// empty state, from an API that omits it, counts as active).
func (g *groupState) active() bool {
	return g.cloud.LifecycleState == "" || strings.EqualFold(g.cloud.LifecycleState, "Active")
}

// errDisabled refuses a change to a group the service will not scale.
func errDisabled(g *groupState, verb string) error {
	return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
		"scaling group %s is disabled (LifecycleState %s): Volcengine scales only Active groups; enable it to %s", g.cloud.ID, g.cloud.LifecycleState, verb)
}

func (g *groupState) debug() string {
	desired := fmt.Sprintf("desired %d", g.cloud.Desired)
	if !g.hasDesired() {
		desired = "no desired number"
	}
	how := "static"
	if g.discoveredBy != "" {
		how = "discovered by " + g.discoveredBy
	}
	instances := fmt.Sprintf("%d instances", len(g.instances))
	if len(g.instances) == 1 {
		instances = "1 instance"
	}
	d := fmt.Sprintf("%s (%s) min %d max %d, %s, %s, %s", g.cloud.ID, g.cloud.Name, g.min, g.max, desired, instances, how)
	if !g.active() {
		d += fmt.Sprintf(", disabled (LifecycleState %s)", g.cloud.LifecycleState)
	}
	if s := g.settings.Summary(); s != "" {
		d += "; settings " + s
	}
	return d
}

// raisedAt is when we last changed the group's desired number (zero when
// we have not since start).
func (m *manager) raisedAt(id string) time.Time {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.changedAt[id]
}

// noteDesiredChange records that the desired number changed now.
func (m *manager) noteDesiredChange(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.changedAt == nil {
		m.changedAt = map[string]time.Time{}
	}
	m.changedAt[id] = m.now().Truncate(time.Second)
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
	unknownNodes groupstate.UnknownNodeLookup

	// refreshGate serialises Refresh calls and the lookup refresh.
	refreshGate groupstate.RefreshGate
	// listings is each group's last instance listing; only Refresh (under
	// refreshGate) reads and writes it.
	listings map[string]groupListing
	// catalog is each group's last DescribeScalingGroups answer; only
	// Refresh (under refreshGate) reads and writes it.
	catalog groupCatalog
	// maxStaleness is how old a reused listing may get (--max-staleness).
	maxStaleness time.Duration
	specWatch    groupconfig.SpecWatch

	// ledger is the record of our mutations per group: each group's
	// MutationGuard, the instances whose removal the API accepted
	// (DeletingSet), the slots the service failed to fill (FailedSlots),
	// and the one sequence that tells a Refresh whether a mutation
	// overtook its listing. It outlives snapshots.
	ledger *groupstate.Ledger

	mu         sync.RWMutex
	groups     map[string]*groupState
	order      []string
	byInstance map[string]string
	templates  map[string]*templateEntry
	// changedAt is when we last set a group's desired number, truncated to
	// the second (activity times have second precision).
	changedAt map[string]time.Time
}

// newManager returns an empty manager whose guards measure their quarantine
// with guardOpts (BuildOptions.Guard) and whose other times come from now.
func newManager(api cloudAPI, region string, static []groupconfig.NodeGroupSpec, selectors []tagSelector, guardOpts groupstate.GuardOptions, now func() time.Time) *manager {
	if now == nil {
		now = time.Now
	}
	m := &manager{
		api:          api,
		region:       region,
		static:       static,
		selectors:    selectors,
		now:          now,
		specWatch:    groupconfig.SpecWatch{Provider: ProviderName},
		ledger:       groupstate.NewLedger(guardOpts, now),
		groups:       map[string]*groupState{},
		byInstance:   map[string]string{},
		templates:    map[string]*templateEntry{},
		listings:     map[string]groupListing{},
		maxStaleness: groupstate.DefaultMaxStaleness,
	}
	m.unknownNodes.Provider, m.unknownNodes.Now, m.unknownNodes.Lookup = ProviderName, now, m.lookupRefresh
	return m
}

// guard returns the mutation guard of group id.
func (m *manager) guard(id string) *groupstate.MutationGuard { return m.ledger.Guard(id) }

// group returns the snapshot of one group.
func (m *manager) group(id string) (*groupState, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g, ok := m.groups[id]
	return g, ok
}

// groupList returns the snapshot's groups in a stable order.
func (m *manager) groupList() []*groupState {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*groupState, 0, len(m.order))
	for _, id := range m.order {
		out = append(out, m.groups[id])
	}
	return out
}

// groupForInstance maps an ECS instance id, or the id of a failed slot, to
// its group.
func (m *manager) groupForInstance(instanceID string) (*groupState, bool) {
	if id, n, ok := parseSlotID(instanceID); ok {
		g, managed := m.group(id)
		if !managed || !m.ledger.Failed(id).Holds(n) {
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
	g, ok := m.groups[id]
	return g, ok
}

// update installs fn's modified copy of a group after a successful mutation.
func (m *manager) update(id string, fn func(g *groupState)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.groups[id]
	if !ok {
		return
	}
	c := g.clone()
	fn(c)
	m.groups[id] = c
}

// reload re-reads one group (bounds, desired number and instances) before a
// mutation: after an unconfirmed change, and before every shrink, because
// an instance launched since the snapshot would otherwise let the service
// remove one of its own choosing. Called with the group's mutation lock held.
func (m *manager) reload(ctx context.Context, id string) error {
	gs, err := m.api.ListScalingGroups(ctx, []string{id})
	if err != nil {
		return fmt.Errorf("re-read scaling group %s: %w", id, err)
	}
	var cg *volcapi.ScalingGroup
	for i := range gs {
		if gs[i].ID == id {
			cg = &gs[i]
		}
	}
	if cg == nil {
		return cloudprovider.Errorf(cloudprovider.ErrNodeGroupNotFound, "scaling group %s no longer exists", id)
	}
	listing := m.ledger.Begin()
	listed, err := m.api.ListScalingInstances(ctx, id)
	if err != nil {
		return fmt.Errorf("re-read instances of scaling group %s: %w", id, err)
	}
	inListing := make(map[string]bool, len(listed))
	for _, si := range listed {
		inListing[si.ID] = true
	}
	// The read runs under the group's mutation lock, so no mutation of the
	// group overtakes it and what it read is installed as it is; it does
	// not say which slots are unfilled (that needs the scaling
	// activities), so the failed slots stay as the last Refresh set them.
	m.ledger.Reconcile(listing, id, groupstate.GroupListing{Holds: func(iid string) bool { return inListing[iid] }, Unfilled: -1})
	deleting := m.ledger.Deleting(id)
	m.mu.Lock()
	for _, si := range listed {
		if _, known := m.byInstance[si.ID]; !known {
			m.byInstance[si.ID] = id
		}
	}
	m.mu.Unlock()
	m.update(id, func(g *groupState) {
		spec := managedGroup{cloud: *cg}
		for _, s := range m.static {
			if s.Name == id {
				spec.spec = &s
			}
		}
		g.min, g.max = spec.bounds()
		g.cloud.Min, g.cloud.Max, g.cloud.HasMin, g.cloud.HasMax = cg.Min, cg.Max, cg.HasMin, cg.HasMax
		g.cloud.Desired = cg.Desired
		old := make(map[string]instanceState, len(g.instances))
		for _, in := range g.instances {
			old[in.id] = in
		}
		fresh := make([]instanceState, 0, len(listed))
		for _, si := range listed {
			in := instanceState{id: si.ID, status: si.Status, zone: si.ZoneID, failure: old[si.ID].failure}
			in.removing = deleting.Holds(si.ID) && isLive(si.Status)
			fresh = append(fresh, in)
		}
		g.instances = fresh
		if g.hasDesired() {
			g.target = cg.Desired
		} else {
			g.target = g.liveCount()
		}
	})
	return nil
}

// markRemoved records accepted removals of group id's instances.
func (m *manager) markRemoved(id string, ids []string) { m.ledger.Deleting(id).Add(ids...) }

// lookupRefresh is the lookup for instances missing from the snapshot: a
// refresh, unless one is running already (the shared RefreshGate rule).
func (m *manager) lookupRefresh(ctx context.Context) error {
	return m.refreshGate.RunUnlessBusy(ctx, func(ctx context.Context) error { return m.refreshWith(ctx, true) })
}

// instancesView returns the CA view of a group's instances and of the
// slots the service failed to fill: each slot is a failed creation, so CA
// backs the group off and deletes it, which lowers the desired number.
func (g *groupState) instancesView(slots []groupstate.FailedSlot) []cloudprovider.Instance {
	out := make([]cloudprovider.Instance, 0, len(g.instances)+len(slots))
	for _, in := range g.instances {
		st := instanceStatus(in.status, in.failure)
		if in.removing {
			st = &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
		}
		out = append(out, cloudprovider.Instance{Id: cloudprovider.BuildProviderID(ProviderIDPrefix, in.id), Status: st})
	}
	for _, s := range slots {
		info := creationError("")
		if s.Info != nil {
			info = *s.Info
		}
		out = append(out, cloudprovider.Instance{Id: cloudprovider.BuildProviderID(ProviderIDPrefix, slotID(g.cloud.ID, s.N)), Status: cloudprovider.FailedCreation(info)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out
}
