package cloudprovidertest

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// In-memory provider constants.
const (
	// InMemoryProviderName is the registry-style name of the in-memory provider.
	InMemoryProviderName = "inmemory"
	// InMemoryProviderIDPrefix prefixes every in-memory instance's providerID.
	InMemoryProviderIDPrefix = "inmemory://"
	// InMemoryGroupLabel is set on nodes of in-memory groups.
	InMemoryGroupLabel = "inmemory.test/group"
	// InMemoryGPULabel marks in-memory GPU nodes.
	InMemoryGPULabel = "inmemory.test/gpu"
)

// CloudGroup seeds one group of an InMemoryCloud.
type CloudGroup struct {
	ID       string
	Min, Max int
	// Running instances created at seed time.
	Running int
	// NoTemplate makes TemplateNodeInfo answer ErrNotImplemented.
	NoTemplate bool
	// Options, when set, are returned by GetOptions (with ScaleDownUnneededTime overridden).
	Options bool
	// Tags are the group's metadata, read for per-group settings
	// (groupconfig.ParseGroupSettings, AWS spelling).
	Tags map[string]string
}

// InMemoryProvider implements cloudprovider.CloudProvider over an InMemoryCloud
// the way a real provider should: reads from a snapshot taken at Refresh,
// every mutation through the shared groupstate.MutationGuard (checked
// against the snapshot before any cloud call, the group re-read before an
// absolute shrink or after an unknown outcome), every listing reconciled
// with our mutations by the shared groupstate.Ledger (an older listing
// keeps a mutation's effect, Deleting until the cloud agrees, failed
// slots), nodes the snapshot lacks looked up by the shared
// groupstate.UnknownNodeLookup.
type InMemoryProvider struct {
	// Guard is the clock and quarantine window of every group's mutation
	// guard (the zero value: wall clock, default window); set it before the
	// first Refresh. It is the one build option the in-memory provider
	// takes.
	Guard groupstate.GuardOptions

	cloud        *InMemoryCloud
	unknownNodes groupstate.UnknownNodeLookup

	ledgerOnce sync.Once
	ledger     *groupstate.Ledger

	mu      sync.RWMutex
	groups  map[string]*inMemoryGroup
	order   []string
	byID    map[string]*inMemoryGroup // providerID -> group
	cleaned bool
}

// NewInMemoryProvider returns a provider bound to cloud; call Refresh before use.
func NewInMemoryProvider(cloud *InMemoryCloud) *InMemoryProvider {
	p := &InMemoryProvider{cloud: cloud, groups: map[string]*inMemoryGroup{}, byID: map[string]*inMemoryGroup{}}
	p.unknownNodes.Provider = InMemoryProviderName
	p.unknownNodes.Lookup = p.list
	return p
}

// state returns the ledger of the provider's mutations, made with Guard on
// first use (Guard is set after NewInMemoryProvider).
func (p *InMemoryProvider) state() *groupstate.Ledger {
	p.ledgerOnce.Do(func() { p.ledger = groupstate.NewLedger(p.Guard, p.Guard.Now) })
	return p.ledger
}

// NewInMemoryEnv builds a conformance Env over a fresh cloud seeded with
// groups. Run it with InMemoryNotApplicable for the hooks it leaves nil.
func NewInMemoryEnv(groups ...CloudGroup) *Env {
	cloud := NewInMemoryCloud(groups...)
	p := NewInMemoryProvider(cloud)
	clock := fakecloud.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p.Guard.Now = clock.Now
	launch := func(f func(string) (string, error)) func(string) string {
		return func(groupID string) string {
			id, err := f(groupID)
			if err != nil {
				panic(fmt.Sprintf("cloudprovidertest: %v", err))
			}
			return InMemoryProviderIDPrefix + id
		}
	}
	env := &Env{
		Provider:   p,
		CloudCalls: cloud.Calls,
		Node: func(inst cloudprovider.Instance) *corev1.Node {
			return p.node(inst.Id)
		},
		Settle:            cloud.Settle,
		FailNextCalls:     cloud.FailNext,
		AddUnseenInstance: launch(cloud.LaunchUnseen),
		AddFailedInstance: launch(cloud.AddFailed),
		FailNextScaleUp:   cloud.FailNextScaleUp,
		RefuseForQuota:    cloud.RefuseForQuota,
		InjectMutationFault: MutationSelectors{
			MutationIncreaseSize:       {Operation: InMemoryOpResize},
			MutationDecreaseTargetSize: {Operation: InMemoryOpResize},
			MutationDeleteNodes:        {Operation: InMemoryOpDelete},
		}.Injector(cloud.AddFault),
		ClearFaults: cloud.ClearFaults,
		HoldRemoval: func(providerID string) {
			cloud.HoldRemoval(strings.TrimPrefix(providerID, InMemoryProviderIDPrefix))
		},
		InjectListingFault: func(f fakecloud.Fault) {
			f.Operation = InMemoryOpList
			cloud.AddFault(f)
		},
		Clock: clock,
		SetGroupSettings: func(groupID string, seed SettingsSeed) {
			cloud.SetTags(groupID, seed.AWSKeys())
		},
		// One list call reads every group and its instances.
		Budget: &RefreshBudget{Unchanged: 1},
	}
	for _, g := range groups {
		if !g.NoTemplate {
			env.TemplateGroups = append(env.TemplateGroups, g.ID)
		}
		if g.Options {
			env.OptionsGroups = append(env.OptionsGroups, g.ID)
		}
	}
	return env
}

// InMemoryNotApplicable states why the in-memory environment leaves its
// other hooks nil, for Harness.NotApplicable. A harness that serves it
// through the gRPC server sets Serve and ServeConn; a seed without options
// groups adds its own reason for Env.OptionsGroups.
func InMemoryNotApplicable() map[Hook]string {
	return map[Hook]string{
		HookNewEnvWithOptions:     "the in-memory provider takes no BuildOptions: it sends no HTTP request for a rate limiter to pace, and every Refresh lists every group, so no read is ever older than --max-staleness",
		HookStartWithSpecs:        "the in-memory provider serves the groups it is seeded with; it reads no --nodes specs",
		HookSpecNames:             "the in-memory provider reads no --nodes specs",
		HookFailEnrichmentLookups: "the in-memory template is built from the seed; the provider makes no lookup that only enriches it",
		HookReportMutationFailed:  "the in-memory cloud reports a failed change only as the call's error, never inside a success answer",
		HookChangeUnseen:          "every in-memory Refresh lists every group with its instances, so no change stays unseen by it",
	}
}

// Cloud returns the cloud behind the provider.
func (p *InMemoryProvider) Cloud() *InMemoryCloud { return p.cloud }

// CleanedUp reports whether Cleanup was called.
func (p *InMemoryProvider) CleanedUp() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.cleaned
}

func (p *InMemoryProvider) node(providerID string) *corev1.Node {
	p.mu.RLock()
	g := p.byID[providerID]
	p.mu.RUnlock()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: providerID[len(InMemoryProviderIDPrefix):], Labels: map[string]string{}}}
	n.Spec.ProviderID = providerID
	if g != nil {
		n.Labels[InMemoryGroupLabel] = g.id
	}
	return n
}

// Name implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) Name() string { return InMemoryProviderName }

// NodeGroups implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) NodeGroups(ctx context.Context) ([]cloudprovider.NodeGroup, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]cloudprovider.NodeGroup, 0, len(p.order))
	for _, id := range p.order {
		out = append(out, p.groups[id])
	}
	return out, nil
}

// NodeGroupForNode implements cloudprovider.CloudProvider by providerID; an
// in-memory node the snapshot lacks is looked up by the shared rule
// (groupstate.UnknownNodeLookup).
func (p *InMemoryProvider) NodeGroupForNode(ctx context.Context, node *corev1.Node) (cloudprovider.NodeGroup, error) {
	if node == nil {
		return nil, nil
	}
	if _, err := cloudprovider.ParseProviderID(InMemoryProviderIDPrefix, node.Spec.ProviderID); err != nil {
		return nil, nil
	}
	g := groupstate.ResolveUnknownNode(ctx, &p.unknownNodes, node.Spec.ProviderID, func(id string) (*inMemoryGroup, bool) {
		p.mu.RLock()
		defer p.mu.RUnlock()
		g, ok := p.byID[id]
		return g, ok
	})
	if g == nil {
		return nil, nil
	}
	return g, nil
}

// Pricing implements cloudprovider.CloudProvider with a flat hourly price.
func (p *InMemoryProvider) Pricing(ctx context.Context) (cloudprovider.PricingModel, error) {
	return inMemoryPricing{}, nil
}

// GPULabel implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) GPULabel(ctx context.Context) (string, error) {
	return InMemoryGPULabel, nil
}

// GetAvailableGPUTypes implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) GetAvailableGPUTypes(ctx context.Context) (map[string]struct{}, error) {
	return map[string]struct{}{"test-gpu": {}}, nil
}

// Cleanup implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) Cleanup(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleaned = true
	return nil
}

// Refresh implements cloudprovider.CloudProvider: one list call.
func (p *InMemoryProvider) Refresh(ctx context.Context) error {
	if err := p.list(ctx); err != nil {
		return err
	}
	p.unknownNodes.Refreshed()
	return nil
}

// list lists every group and reconciles the listing with the ledger; it
// never waits for a running mutation (see groupstate.Ledger).
func (p *InMemoryProvider) list(ctx context.Context) error {
	listing := p.state().Begin()
	groups, err := p.cloud.list(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	p.apply(listing, groups)
	return nil
}

// apply replaces the snapshot with a listing that began at listing, group
// by group through the ledger's reconcile step.
func (p *InMemoryProvider) apply(listing groupstate.Listing, groups []cloudGroup) {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := map[string]*inMemoryGroup{}
	order := make([]string, 0, len(groups))
	for _, cg := range groups {
		g := p.groups[cg.spec.ID]
		if g == nil {
			g = &inMemoryGroup{p: p, id: cg.spec.ID, guard: p.state().Guard(cg.spec.ID)}
		}
		g.reconcile(listing, cg)
		next[g.id] = g
		order = append(order, g.id)
	}
	p.state().Forget(func(id string) bool { return next[id] != nil })
	p.groups, p.order = next, order
	p.byID = map[string]*inMemoryGroup{}
	for _, g := range next {
		for _, in := range g.Instances() {
			p.byID[in.Id] = g
		}
	}
}

// reindex points the index at g's instances after a read of g alone.
func (p *InMemoryProvider) reindex(g *inMemoryGroup) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, owner := range p.byID {
		if owner == g {
			delete(p.byID, id)
		}
	}
	for _, in := range g.Instances() {
		p.byID[in.Id] = g
	}
}

type inMemoryGroup struct {
	p     *InMemoryProvider
	id    string
	guard *groupstate.MutationGuard

	mu        sync.Mutex
	spec      CloudGroup
	settings  groupconfig.GroupSettings
	target    int
	instances []cloudInstance
}

// slotFailure says why the in-memory cloud leaves a slot unfilled.
func slotFailure() *cloudprovider.InstanceErrorInfo {
	return &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OtherErrorClass, ErrorCode: "scale-up-failed", ErrorMessage: "the cloud failed to fill the slot"}
}

// reconcile applies a listing of the group that began at listing: the
// ledger ends Deleting marks and sets the failed slots by its rules, and
// the listed state replaces the snapshot unless a mutation of ours
// overtook the listing, in which case the snapshot (which holds the
// mutation's effect) stays until a later listing.
func (g *inMemoryGroup) reconcile(listing groupstate.Listing, cg cloudGroup) {
	if g.p.state().Reconcile(listing, g.id, g.listed(cg)).KeepSize {
		return
	}
	g.install(cg)
}

// listed is what a listing or read of the group says, for the ledger.
func (g *inMemoryGroup) listed(cg cloudGroup) groupstate.GroupListing {
	held := make(map[string]bool, len(cg.instances))
	for _, in := range cg.instances {
		held[in.id] = true
	}
	return groupstate.GroupListing{Holds: func(id string) bool { return held[id] }, Unfilled: cg.failedSlots, Failure: slotFailure()}
}

// install replaces the snapshot with what the cloud listed.
func (g *inMemoryGroup) install(cg cloudGroup) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.spec = cg.spec
	g.settings = groupconfig.ParseGroupSettings("in-memory group tags", cg.spec.Tags)
	g.target = cg.desired
	g.instances = cg.instances
}

// read re-reads the group from the cloud into the snapshot; the guard calls
// it, under the group's lock, so what it reads is newer than anything the
// snapshot holds and is installed whole (Ledger.Fresh).
func (g *inMemoryGroup) read(ctx context.Context) error {
	cg, err := g.p.cloud.get(g.id)
	if err != nil {
		return fmt.Errorf("read group %s: %w", g.id, err)
	}
	g.p.state().Fresh(g.id, g.listed(cg))
	g.install(cg)
	g.p.reindex(g)
	return nil
}

// Status implements cloudprovider.NodeGroup: the guard reports the
// quarantine it enforces, beside the group's settings.
func (g *inMemoryGroup) Status(context.Context) cloudprovider.GroupStatus {
	g.mu.Lock()
	settings := g.settings
	g.mu.Unlock()
	return g.guard.Status(settings)
}

func (g *inMemoryGroup) Id(ctx context.Context) string { return g.id }

func (g *inMemoryGroup) MinSize(ctx context.Context) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.spec.Min
}

func (g *inMemoryGroup) MaxSize(ctx context.Context) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.spec.Max
}

func (g *inMemoryGroup) Debug(ctx context.Context) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := fmt.Sprintf("%s min %d max %d target %d", g.id, g.spec.Min, g.spec.Max, g.target)
	if s := g.settings.Summary(); s != "" {
		d += "; settings " + s
	}
	return d
}

func (g *inMemoryGroup) TargetSize(ctx context.Context) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.target, nil
}

// IncreaseSize raises the desired number by delta through the guard.
func (g *inMemoryGroup) IncreaseSize(ctx context.Context, delta int) error {
	return g.guard.Do(ctx, groupstate.Mutation{Read: g.read, Plan: func() (groupstate.Plan, error) {
		g.mu.Lock()
		from, maxSize := g.target, g.spec.Max
		g.mu.Unlock()
		if err := groupstate.CheckIncrease(g.id, delta, from, maxSize); err != nil {
			return groupstate.Plan{}, err
		}
		return groupstate.Plan{Call: func(ctx context.Context) error { return g.resize(ctx, from, from+delta) }}, nil
	}})
}

// DecreaseTargetSize lowers the desired number by -delta through the guard;
// the size is absolute, so the guard plans it from a fresh read.
func (g *inMemoryGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	return g.guard.Do(ctx, groupstate.Mutation{Read: g.read, Plan: func() (groupstate.Plan, error) {
		g.mu.Lock()
		from, existing := g.target, g.existing()
		g.mu.Unlock()
		if err := groupstate.CheckDecrease(g.id, delta, from, existing); err != nil {
			return groupstate.Plan{}, err
		}
		return groupstate.Plan{Shrinks: true, Call: func(ctx context.Context) error { return g.resize(ctx, from, from+delta) }}, nil
	}})
}

// resize sets the cloud's desired number and, once it took it, the snapshot's.
func (g *inMemoryGroup) resize(ctx context.Context, from, to int) error {
	if err := g.p.cloud.resize(ctx, g.id, to); err != nil {
		klog.ErrorS(err, "Resize failed", "provider", InMemoryProviderName, "nodeGroup", g.id, "from", from, "to", to)
		return fmt.Errorf("resize %s from %d to %d: %w", g.id, from, to, err)
	}
	g.mu.Lock()
	g.target = to
	g.mu.Unlock()
	klog.InfoS("Resized node group", "provider", InMemoryProviderName, "nodeGroup", g.id, "from", from, "to", to)
	return nil
}

// deleting reports whether in is going away: the cloud lists it so, or it
// accepted our deletion of it (the ledger's Deleting rule).
func (g *inMemoryGroup) deleting(in cloudInstance) bool {
	return in.state == cloudprovider.InstanceDeleting || g.p.state().Deleting(g.id).Holds(in.id)
}

// existing counts the instances a decrease must keep: all but those going
// away and those still being created for a request, which the cloud
// cancels on a shrink; g.mu is held.
func (g *inMemoryGroup) existing() int {
	n := 0
	for _, in := range g.instances {
		if !g.deleting(in) && !in.cancellable() {
			n++
		}
	}
	return n
}

// slotPrefix marks the providerID of a slot the cloud failed to fill.
const slotPrefix = "failed-slot-"

// slotID is the providerID of the group's failed slot numbered n
// (groupstate.FailedSlot.N).
func (g *inMemoryGroup) slotID(n int) string {
	return fmt.Sprintf("%s%s%s-%d", InMemoryProviderIDPrefix, slotPrefix, g.id, n)
}

// slotNumber returns the number of the group's failed slot providerID
// names, if it names one the ledger holds.
func (g *inMemoryGroup) slotNumber(providerID string) (int, bool) {
	rest, ok := strings.CutPrefix(providerID, fmt.Sprintf("%s%s%s-", InMemoryProviderIDPrefix, slotPrefix, g.id))
	n, err := strconv.Atoi(rest)
	if !ok || err != nil || g.slotID(n) != providerID {
		return 0, false
	}
	return n, g.p.state().Failed(g.id).Holds(n)
}

// deletion is a DeleteNodes request sorted by path: instances are deleted
// one by one (each lowers the desired number by one); failed slots have no
// instance, so lowering the desired number (an absolute size) gives them up.
type deletion struct {
	instances []string
	slots     []int
}

// DeleteNodes removes exactly these nodes through one guard transaction:
// each instance with its own call, failed slots by lowering the desired
// number, planned from a fresh read (groupstate.Txn.Shrink) so an
// instance launched since the snapshot is not removed in their place.
func (g *inMemoryGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	return g.guard.Transact(ctx, g.read, func(tx *groupstate.Txn) error {
		d, err := groupstate.Prepare(tx, func() (deletion, error) { return g.planDeletion(nodes) })
		if err != nil {
			return err
		}
		for _, id := range d.instances {
			if err := tx.Step(func() (groupstate.Plan, error) {
				return groupstate.Plan{Call: func(ctx context.Context) error { return g.deleteInstance(ctx, id) }}, nil
			}); err != nil {
				return err
			}
		}
		if len(d.slots) == 0 {
			return nil
		}
		return tx.Shrink(func() (groupstate.Plan, error) { return g.planDropSlots(d.slots) })
	})
}

// planDeletion checks the request against the snapshot: every node is an
// instance or failed slot of this group, listed once, and registered nodes
// never take the group below min.
func (g *inMemoryGroup) planDeletion(nodes []*corev1.Node) (deletion, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var d deletion
	live := map[string]bool{}
	for _, in := range g.instances {
		if !g.deleting(in) {
			live[InMemoryProviderIDPrefix+in.id] = true
		}
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if n == nil {
			return d, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: nil node", g.id)
		}
		name := cloudprovider.NodeName(n.Name, n.Spec.ProviderID)
		id, err := cloudprovider.ParseProviderID(InMemoryProviderIDPrefix, n.Spec.ProviderID)
		if err != nil {
			return d, fmt.Errorf("node %s: %w", name, err)
		}
		if seen[id] {
			return d, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s listed twice", name)
		}
		seen[id] = true
		switch {
		case live[n.Spec.ProviderID]:
			d.instances = append(d.instances, id)
		case g.isSlot(n.Spec.ProviderID):
			n, _ := g.slotNumber(n.Spec.ProviderID)
			d.slots = append(d.slots, n)
		default:
			return d, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s does not belong to node group %s", name, g.id)
		}
	}
	return d, groupstate.CheckDeleteMin(g.id, g.target, g.spec.Min, nodes)
}

// isSlot reports whether providerID is one of the group's failed slots.
func (g *inMemoryGroup) isSlot(providerID string) bool {
	_, ok := g.slotNumber(providerID)
	return ok
}

// planDropSlots lowers the desired number by the failed slots asked for,
// all of which the fresh read must still report; a slot the cloud filled
// meanwhile is an instance now, which CA sees at the next Refresh. Once
// the cloud took the size, the slots end in the ledger.
func (g *inMemoryGroup) planDropSlots(slots []int) (groupstate.Plan, error) {
	failed := g.p.state().Failed(g.id)
	held := 0
	for _, n := range slots {
		if failed.Holds(n) {
			held++
		}
	}
	if held < len(slots) {
		return groupstate.Plan{}, cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
			"node group %s: %d of the %d failed slots asked for were filled since the last refresh; nothing removed", g.id, len(slots)-held, len(slots))
	}
	g.mu.Lock()
	from := g.target
	g.mu.Unlock()
	return groupstate.Plan{Shrinks: true, Call: func(ctx context.Context) error {
		if err := g.resize(ctx, from, from-len(slots)); err != nil {
			return err
		}
		failed.Drop(slots...)
		return nil
	}}, nil
}

// deleteInstance deletes one instance and marks it deleting in the snapshot.
func (g *inMemoryGroup) deleteInstance(ctx context.Context, id string) error {
	if err := g.p.cloud.deleteInstance(ctx, g.id, id); err != nil {
		klog.ErrorS(err, "Deleting instance failed", "provider", InMemoryProviderName, "nodeGroup", g.id, "instance", id)
		return fmt.Errorf("delete instance %s of %s: %w", id, g.id, err)
	}
	g.p.state().Deleting(g.id).Add(id)
	g.mu.Lock()
	g.target--
	g.mu.Unlock()
	klog.InfoS("Deleted instance", "provider", InMemoryProviderName, "nodeGroup", g.id, "instance", id)
	return nil
}

// Instances lists the group's instances and failed slots, sorted by id; an
// instance whose deletion the cloud accepted shows Deleting until the
// ledger's rule ends it.
func (g *inMemoryGroup) Instances() []cloudprovider.Instance {
	deleting := g.p.state().Deleting(g.id)
	slots := g.p.state().Failed(g.id).List()
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]cloudprovider.Instance, 0, len(g.instances)+len(slots))
	for _, in := range g.instances {
		st := &cloudprovider.InstanceStatus{State: in.state}
		if deleting.Holds(in.id) {
			st.State = cloudprovider.InstanceDeleting
		}
		if in.failed && in.state == cloudprovider.InstanceCreating {
			st = cloudprovider.FailedCreation(cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OtherErrorClass, ErrorCode: "start-failed", ErrorMessage: "the instance failed to start"})
		}
		out = append(out, cloudprovider.Instance{Id: InMemoryProviderIDPrefix + in.id, Status: st})
	}
	for _, s := range slots {
		out = append(out, cloudprovider.Instance{Id: g.slotID(s.N), Status: cloudprovider.FailedCreation(*s.Info)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out
}

func (g *inMemoryGroup) Nodes(ctx context.Context) ([]cloudprovider.Instance, error) {
	return g.Instances(), nil
}

func (g *inMemoryGroup) TemplateNodeInfo(ctx context.Context) (*corev1.Node, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.spec.NoTemplate {
		return nil, cloudprovider.ErrNotImplemented
	}
	return groupconfig.BuildTemplateNode(groupconfig.TemplateSpec{
		GroupID: g.id, CPUs: 2, MemoryBytes: 4 << 30,
		ProviderLabels: map[string]string{InMemoryGroupLabel: g.id},
		Hints:          g.settings.Hints, HintsSource: g.settings.Source,
	}), nil
}

func (g *inMemoryGroup) GetOptions(ctx context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.spec.Options {
		return g.settings.GetOptions(defaults)
	}
	o := defaults
	o.ScaleDownUnneededTime = 42 * time.Minute
	return &o, nil
}

type inMemoryPricing struct{}

// InMemoryHourlyPrice is the in-memory provider's price per node-hour.
const InMemoryHourlyPrice = 0.5

func (inMemoryPricing) NodePrice(ctx context.Context, node *corev1.Node, start, end time.Time) (float64, error) {
	return InMemoryHourlyPrice * end.Sub(start).Hours(), nil
}

func (inMemoryPricing) PodPrice(ctx context.Context, pod *corev1.Pod, start, end time.Time) (float64, error) {
	return 0.01 * end.Sub(start).Hours(), nil
}

// TemplateNode builds a minimal ready template node with cpu, memory and 110 pods.
func TemplateNode(name string, labels map[string]string, cpu int64, memoryBytes int64) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memoryBytes, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	all := map[string]string{"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
	for k, v := range labels {
		all[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}
