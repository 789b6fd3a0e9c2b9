package cloudprovidertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
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
// every mutation through the shared groupstate.Group.Do and Transact (checked
// against the snapshot before any cloud call, the group re-read before an
// absolute shrink or after an unknown outcome), every listing reconciled
// with our mutations by the shared groupstate.Ledger (an older listing
// keeps a mutation's effect, Deleting until the cloud agrees, failed
// slots), nodes the snapshot lacks looked up by the shared
// refresh.UnknownNodeLookup.
type InMemoryProvider struct {
	// Guard is the clock and quarantine window of every group's mutation
	// guard (the zero value: wall clock, default window); set it before the
	// first Refresh. It is the one build option the in-memory provider
	// takes.
	Guard groupstate.GuardOptions

	cloud        *InMemoryCloud
	unknownNodes refresh.UnknownNodeLookup

	ledgerOnce sync.Once
	ledger     *groupstate.Ledger

	mu      sync.RWMutex
	groups  groupstate.Groups[*inMemoryGroup]
	byID    map[string]*inMemoryGroup // providerID -> group
	cleaned bool
}

// NewInMemoryProvider returns a provider bound to cloud; call Refresh before use.
func NewInMemoryProvider(cloud *InMemoryCloud) *InMemoryProvider {
	p := &InMemoryProvider{cloud: cloud, byID: map[string]*inMemoryGroup{}}
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
		ListScaleUpLate:   cloud.ListScaleUpLate,
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
		HookPermissions:           "the in-memory cloud has no credentials and no policy to enforce",
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
		n.Labels[InMemoryGroupLabel] = g.Id(context.Background())
	}
	return n
}

// Name implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) Name() string { return InMemoryProviderName }

// NodeGroups implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) NodeGroups(ctx context.Context) ([]cloudprovider.NodeGroup, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return cloudprovider.AsNodeGroups(p.groups.List()), nil
}

// NodeGroup implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) NodeGroup(_ context.Context, id string) (cloudprovider.NodeGroup, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	g, ok := p.groups.Get(id)
	return cloudprovider.FoundNodeGroup(id, g, ok)
}

// NodeGroupForNode implements cloudprovider.CloudProvider by providerID; an
// in-memory node the snapshot lacks is looked up by the shared rule
// (refresh.UnknownNodeLookup).
func (p *InMemoryProvider) NodeGroupForNode(ctx context.Context, node *corev1.Node) (cloudprovider.NodeGroup, error) {
	if node == nil {
		return nil, nil
	}
	if _, err := cloudprovider.ParseProviderID(InMemoryProviderIDPrefix, node.Spec.ProviderID); err != nil {
		return nil, nil
	}
	return refresh.ResolveNodeGroup(ctx, &p.unknownNodes, node.Spec.ProviderID, func(id string) (*inMemoryGroup, bool) {
		p.mu.RLock()
		defer p.mu.RUnlock()
		g, ok := p.byID[id]
		return g, ok
	}), nil
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
	listed := make(map[string]cloudGroup, len(groups))
	order := make([]string, 0, len(groups))
	for _, cg := range groups {
		listed[cg.spec.ID] = cg
		order = append(order, cg.spec.ID)
	}
	p.groups = p.groups.Next(order, func(id string) *inMemoryGroup {
		return &inMemoryGroup{p: p, Group: p.state().Group(id, slotIDs(id), false)}
	}, func(g *inMemoryGroup) { g.reconcile(listing, listed[g.Id(context.Background())]) }, p.state())
	p.byID = map[string]*inMemoryGroup{}
	for _, g := range p.groups.List() {
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

// inMemoryGroup is an in-memory group: its served state is the shared
// groupstate.Group (bounds, target, instances, the ledger's rules), beside
// which it keeps only the seed's template and options and the settings
// read from its tags.
type inMemoryGroup struct {
	*groupstate.Group
	p *InMemoryProvider

	mu       sync.Mutex
	spec     CloudGroup
	settings groupconfig.GroupSettings
}

// slotFailure says why the in-memory cloud leaves a slot unfilled.
func slotFailure() *cloudprovider.InstanceErrorInfo {
	return &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OtherErrorClass, ErrorCode: "scale-up-failed", ErrorMessage: "the cloud failed to fill the slot"}
}

// view maps the cloud's group to CA's terms: the state mapping is the
// in-memory provider's whole part of the group state.
func view(cg cloudGroup) groupstate.View {
	// Every group of its cloud is one: listed from the cluster.
	v := groupstate.View{Min: cg.spec.Min, Max: cg.spec.Max, Target: cg.desired, Unfilled: cg.failedSlots, Failure: slotFailure(),
		Managed: cloudprovider.Management{By: cloudprovider.ManagedByCluster}}
	for _, in := range cg.instances {
		st := &cloudprovider.InstanceStatus{State: in.state}
		if in.failed && in.state == cloudprovider.InstanceCreating {
			st = cloudprovider.FailedCreation(cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OtherErrorClass, ErrorCode: "start-failed", ErrorMessage: "the instance failed to start"})
		}
		v.Instances = append(v.Instances, cloudprovider.Instance{Id: InMemoryProviderIDPrefix + in.id, Status: st})
	}
	return v
}

// reconcile applies a listing of the group that began at listing
// (groupstate.Group.Install).
func (g *inMemoryGroup) reconcile(listing groupstate.Listing, cg cloudGroup) {
	g.Install(listing, view(cg), groupstate.Settling{})
	g.setSpec(cg.spec)
}

func (g *inMemoryGroup) setSpec(spec CloudGroup) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.spec = spec
	g.settings = groupconfig.ParseGroupSettings("in-memory group tags", spec.Tags)
}

// read re-reads the group from the cloud into the snapshot; the guard calls
// it, under the group's guard, so what it reads is newer than anything
// served and is installed whole (groupstate.Group.Fresh).
func (g *inMemoryGroup) read(ctx context.Context) error {
	cg, err := g.p.cloud.get(ctx, g.Id(ctx))
	if err != nil {
		return fmt.Errorf("read group %s: %w", g.Id(ctx), err)
	}
	g.Fresh(func(groupstate.View) groupstate.View { return view(cg) })
	g.setSpec(cg.spec)
	g.p.reindex(g)
	return nil
}

// Status implements cloudprovider.NodeGroup: the guard reports the
// quarantine it enforces, beside the group's settings.
func (g *inMemoryGroup) Status(context.Context) cloudprovider.GroupStatus {
	g.mu.Lock()
	settings := g.settings
	g.mu.Unlock()
	return g.StatusWith(settings)
}

func (g *inMemoryGroup) Debug(ctx context.Context) string {
	g.mu.Lock()
	summary := g.settings.Summary()
	g.mu.Unlock()
	d := fmt.Sprintf("%s min %d max %d target %d", g.Id(ctx), g.MinSize(ctx), g.MaxSize(ctx), g.Target())
	if summary != "" {
		d += "; settings " + summary
	}
	return d
}

// IncreaseSize raises the desired number by delta through the guard.
func (g *inMemoryGroup) IncreaseSize(ctx context.Context, delta int) error {
	return g.Do(ctx, g.read, func() (groupstate.Plan, error) {
		v := g.Read()
		if err := groupstate.CheckIncrease(g.Id(ctx), delta, v.Target, v.Max); err != nil {
			return groupstate.Plan{}, err
		}
		return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) { return g.resize(ctx, v.Target, v.Target+delta) }}, nil
	})
}

// DecreaseTargetSize lowers the desired number by -delta through the guard;
// the size is absolute, so the guard plans it from a fresh read.
func (g *inMemoryGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	return g.Do(ctx, g.read, func() (groupstate.Plan, error) {
		from := g.Target()
		if err := groupstate.CheckDecrease(g.Id(ctx), delta, from, g.existing()); err != nil {
			return groupstate.Plan{}, err
		}
		return groupstate.Plan{Shrinks: true, Send: func(ctx context.Context) (groupstate.Effect, error) { return g.resize(ctx, from, from+delta) }}, nil
	})
}

// resize sets the cloud's desired number; once the cloud took it, that is
// the target served.
func (g *inMemoryGroup) resize(ctx context.Context, from, to int) (groupstate.Effect, error) {
	id := g.Id(ctx)
	if err := g.p.cloud.resize(ctx, id, to); err != nil {
		klog.ErrorS(err, "Resize failed", "provider", InMemoryProviderName, "nodeGroup", id, "from", from, "to", to)
		return groupstate.Effect{}, fmt.Errorf("resize %s from %d to %d: %w", id, from, to, err)
	}
	klog.InfoS("Resized node group", "provider", InMemoryProviderName, "nodeGroup", id, "from", from, "to", to)
	return groupstate.Resize(to), nil
}

// existing counts the instances a decrease must keep: those that stay
// (Group.Stays, as Group.Live counts them) but the ones still being
// created for a request, which this cloud cancels on a shrink. One read,
// so both counts come from the same listing.
func (g *inMemoryGroup) existing() int {
	n := 0
	for _, in := range g.Read().Instances {
		if g.Stays(in) && !cancellable(in) {
			n++
		}
	}
	return n
}

// cancellable reports whether a shrink may cancel in: one still being
// created for a request, not one that failed.
func cancellable(in cloudprovider.Instance) bool {
	return in.Status != nil && in.Status.State == cloudprovider.InstanceCreating && in.Status.ErrorInfo == nil
}

// slotPrefix marks the providerID of a slot the cloud failed to fill.
const slotPrefix = "failed-slot-"

// slotIDs builds the providerIDs of group's failed slots from their numbers
// (groupstate.FailedSlot.N).
func slotIDs(group string) func(n int) string {
	return func(n int) string { return fmt.Sprintf("%s%s%s-%d", InMemoryProviderIDPrefix, slotPrefix, group, n) }
}

// DeleteNodes removes exactly these nodes through one guard transaction
// (checked by Group.PlanDeletion): each instance with its own call, failed
// slots by lowering the desired number, planned from a fresh read
// (groupstate.Txn.Shrink) so an instance launched since the snapshot is
// not removed in their place. Slots have no instance, so lowering the
// desired number (an absolute size) gives them up.
func (g *inMemoryGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	return g.Transact(ctx, g.read, func(tx *groupstate.Txn) error {
		d, err := groupstate.Prepare(tx, func() (groupstate.Deletion, error) { return g.PlanDeletion(nodes, providerID, nil) })
		if err != nil {
			return err
		}
		for _, pid := range d.Instances {
			if err := tx.Step(func() (groupstate.Plan, error) {
				target := g.Target() - 1
				return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) { return g.deleteInstance(ctx, pid, target) }}, nil
			}); err != nil {
				return err
			}
		}
		if len(d.Slots) == 0 {
			return nil
		}
		return tx.Shrink(func() (groupstate.Plan, error) { return g.planDropSlots(d.Slots) })
	})
}

// providerID is the in-memory providerID a node names.
func providerID(n *corev1.Node) (string, error) {
	id, err := cloudprovider.ParseProviderID(InMemoryProviderIDPrefix, n.Spec.ProviderID)
	if err != nil {
		return "", fmt.Errorf("node %s: %w", cloudprovider.NodeName(n.Name, n.Spec.ProviderID), err)
	}
	return InMemoryProviderIDPrefix + id, nil
}

// planDropSlots lowers the desired number by the failed slots asked for,
// all of which the fresh read must still report; a slot the cloud filled
// meanwhile is an instance now, which CA sees at the next Refresh. Once
// the cloud took the size, the slots end in the ledger.
func (g *inMemoryGroup) planDropSlots(slots []int) (groupstate.Plan, error) {
	held := 0
	for _, n := range slots {
		if g.SlotFailed(n) {
			held++
		}
	}
	if held < len(slots) {
		return groupstate.Plan{}, cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
			"node group %s: %d of the %d failed slots asked for were filled since the last refresh; nothing removed", g.Id(context.Background()), len(slots)-held, len(slots))
	}
	from := g.Target()
	return groupstate.Plan{Shrinks: true, Send: func(ctx context.Context) (groupstate.Effect, error) {
		e, err := g.resize(ctx, from, from-len(slots))
		e.DropSlots = slots
		return e, err
	}}, nil
}

// deleteInstance deletes the instance with providerID pid; once the cloud
// took it, it shows Deleting until the ledger's rule ends it, and the
// target is target, which no longer counts it.
func (g *inMemoryGroup) deleteInstance(ctx context.Context, pid string, target int) (groupstate.Effect, error) {
	id, instance := g.Id(ctx), strings.TrimPrefix(pid, InMemoryProviderIDPrefix)
	if err := g.p.cloud.deleteInstance(ctx, id, instance); err != nil {
		klog.ErrorS(err, "Deleting instance failed", "provider", InMemoryProviderName, "nodeGroup", id, "instance", instance)
		return groupstate.Effect{}, fmt.Errorf("delete instance %s of %s: %w", instance, id, err)
	}
	klog.InfoS("Deleted instance", "provider", InMemoryProviderName, "nodeGroup", id, "instance", instance, "target", target)
	return groupstate.Effect{Deleting: []string{pid}, Target: target, SetTarget: true}, nil
}

func (g *inMemoryGroup) TemplateNodeInfo(ctx context.Context) (*corev1.Node, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.spec.NoTemplate {
		return nil, cloudprovider.ErrNotImplemented
	}
	return groupconfig.BuildTemplateNode(groupconfig.TemplateSpec{
		GroupID: g.spec.ID, CPUs: 2, MemoryBytes: 4 << 30,
		ProviderLabels: map[string]string{InMemoryGroupLabel: g.spec.ID},
		Settings:       g.settings,
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

// ScanNodeGroup answers CloudProvider.NodeGroup from a NodeGroups answer,
// for a test provider that wraps NodeGroups and must answer alike.
func ScanNodeGroup(ctx context.Context, groups []cloudprovider.NodeGroup, err error, id string) (cloudprovider.NodeGroup, error) {
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		if g.Id(ctx) == id {
			return g, nil
		}
	}
	return cloudprovider.FoundNodeGroup[cloudprovider.NodeGroup](id, nil, false)
}

// SeededProvider is an in-memory provider with two groups, refreshed:
// pool-a (1..5, two running) and pool-b (0..3, one running, no template,
// with options); its guards measure the quarantine by guard.
func SeededProvider(t testing.TB, guard groupstate.GuardOptions) *InMemoryProvider {
	t.Helper()
	p := NewInMemoryProvider(NewInMemoryCloud(
		CloudGroup{ID: "pool-a", Min: 1, Max: 5, Running: 2},
		CloudGroup{ID: "pool-b", Min: 0, Max: 3, Running: 1, NoTemplate: true, Options: true},
	))
	p.Guard = guard
	if err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}
