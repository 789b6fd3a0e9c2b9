package groupstate

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// View is what one listing or read says of a node group, in CA's terms.
type View struct {
	Min, Max int
	Target   int
	// TargetFromInstances says the cloud keeps no desired size: the
	// target is the instances that stay, counted when read.
	TargetFromInstances bool
	Instances           []cloudprovider.Instance
	// Unfilled is how many slots the cloud failed to fill, and Failure
	// why; -1 when the listing does not say.
	Unfilled int
	Failure  *cloudprovider.InstanceErrorInfo
	// Managed is why the provider manages the group; a fresh read keeps
	// the served one.
	Managed cloudprovider.Management
}

// Group is the state a provider serves for one node group: the last
// listing or read, with our changes' effects applied. A provider's node
// group embeds it. Reads never wait for a cloud call. It is safe for
// concurrent use.
type Group struct {
	id     string
	ledger *Ledger
	slotID func(n int) string
	// outside says the cloud's size does not count failed slots.
	outside bool

	mu      sync.RWMutex
	view    View
	retired atomic.Bool
}

// Group returns the state of group id, made on first use. slotID builds
// the providerID of failed slot n (nil when the cloud has none); outside
// says the cloud's size does not count failed slots.
func (l *Ledger) Group(id string, slotID func(n int) string, outside bool) *Group {
	lg := l.group(id)
	l.mu.Lock()
	defer l.mu.Unlock()
	if lg.view == nil {
		lg.view = &Group{id: id, ledger: l, slotID: slotID, outside: outside, view: View{Unfilled: -1}}
	}
	return lg.view
}

// guard returns the group's guard, bound to g, so that a retired group's
// changes are refused even after the ledger forgot it.
func (g *Group) guard() *mutationGuard {
	guard := g.ledger.guard(g.id)
	guard.view.CompareAndSwap(nil, g)
	return guard
}

// Do runs a change of one cloud call; read re-reads the group when the
// guard asks for a fresh state.
func (g *Group) Do(ctx context.Context, read func(ctx context.Context) error, plan func() (Plan, error)) error {
	return g.guard().Transact(ctx, read, func(tx *Txn) error { return tx.Step(plan) })
}

// Transact runs a change of several cloud calls under one lock.
func (g *Group) Transact(ctx context.Context, read func(ctx context.Context) error, body func(tx *Txn) error) error {
	return g.guard().Transact(ctx, read, body)
}

func (g *Group) deleting() *deletingSet { return g.ledger.group(g.id).deleting }

func (g *Group) failed() *failedSlots { return g.ledger.group(g.id).failed }

// Install serves a listing that began at listing and settles pending
// operations by s. If a change of ours overtook the listing, the served
// size stays until a later listing; it reports whether it did.
func (g *Group) Install(listing Listing, v View, s Settling) (kept bool) {
	g.retired.Store(false)
	g.mu.Lock()
	defer g.mu.Unlock()
	served := g.target()
	kept = g.ledger.reconcile(listing, g.id, g.listing(v))
	if s.Result != nil {
		v.Target = g.settle(listing, v, s, kept, served)
	}
	if kept {
		v.Target = g.view.Target
	}
	g.view = v
	return kept
}

// Fresh installs a change's fresh read. build turns a copy of the served
// view into the one to install, under the lock, so a partial answer keeps
// the served fields without a racing refresh undoing them.
func (g *Group) Fresh(build func(served View) View) {
	g.mu.Lock()
	defer g.mu.Unlock()
	served := g.view
	served.Target = g.target()
	served.Instances = append([]cloudprovider.Instance(nil), served.Instances...)
	v := build(served)
	v.Managed = served.Managed
	g.ledger.fresh(g.id, g.listing(v))
	g.view = v
}

func (g *Group) listing(v View) groupListing {
	held := make(map[string]bool, len(v.Instances))
	for _, in := range v.Instances {
		held[in.Id] = true
	}
	return groupListing{holds: func(id string) bool { return held[id] }, unfilled: v.Unfilled, failure: v.Failure}
}

// retire marks the group dropped from the snapshot. CA may still hold it,
// so it answers NotFound until a listing installs it again.
func (g *Group) retire() { g.retired.Store(true) }

// CheckManaged returns ErrNodeGroupNotFound once the group is retired.
func (g *Group) CheckManaged() error {
	if !g.retired.Load() {
		return nil
	}
	return cloudprovider.Errorf(cloudprovider.ErrNodeGroupNotFound, "node group %s is no longer managed: it left the cloud, or --nodes and auto-discovery no longer take it", g.id)
}

// Read returns a copy of the served view, without what Nodes adds.
func (g *Group) Read() View {
	g.mu.RLock()
	defer g.mu.RUnlock()
	v := g.view
	v.Target = g.target()
	v.Instances = append([]cloudprovider.Instance(nil), v.Instances...)
	return v
}

// target and live need mu held.
func (g *Group) target() int {
	if !g.view.TargetFromInstances {
		return g.view.Target
	}
	return g.live()
}

func (g *Group) live() int {
	deleting := g.deleting()
	n := 0
	for _, in := range g.view.Instances {
		if stays(in, deleting) {
			n++
		}
	}
	return n
}

// Stays reports whether an instance counts towards the target: it is not
// Deleting, by the cloud's listing or by our accepted deletion.
func (g *Group) Stays(in cloudprovider.Instance) bool { return stays(in, g.deleting()) }

func stays(in cloudprovider.Instance, deleting *deletingSet) bool {
	return (in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting) && !deleting.holds(in.Id)
}

// StatusWith is NodeGroup.Status: settings, quarantine and why managed.
func (g *Group) StatusWith(settings groupconfig.GroupSettings) cloudprovider.GroupStatus {
	st := settings.Status()
	st.QuarantinedUntil = g.guard().QuarantinedUntil()
	g.mu.RLock()
	st.Managed = g.view.Managed
	g.mu.RUnlock()
	return st
}

// Id implements cloudprovider.NodeGroup.
func (g *Group) Id(context.Context) string { return g.id }

// MinSize implements cloudprovider.NodeGroup.
func (g *Group) MinSize(context.Context) int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.view.Min
}

// MaxSize implements cloudprovider.NodeGroup.
func (g *Group) MaxSize(context.Context) int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.view.Max
}

// TargetSize implements cloudprovider.NodeGroup.
func (g *Group) TargetSize(context.Context) (int, error) {
	if err := g.CheckManaged(); err != nil {
		return 0, err
	}
	return g.Target(), nil
}

// Target is the served size, plus failed slots the cloud does not count.
func (g *Group) Target() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	t := g.target()
	if g.outside {
		t += g.failed().len()
	}
	return t
}

// Nodes implements cloudprovider.NodeGroup.
func (g *Group) Nodes(context.Context) ([]cloudprovider.Instance, error) {
	if err := g.CheckManaged(); err != nil {
		return nil, err
	}
	return g.Instances(), nil
}

// Instances returns the instances, those whose deletion the cloud
// accepted shown Deleting, and the failed slots as failed creations.
func (g *Group) Instances() []cloudprovider.Instance {
	deleting := g.deleting()
	// The slots are read under the lock: an install sets them with the view.
	g.mu.RLock()
	var slots []FailedSlot
	if g.slotID != nil {
		slots = g.failed().list()
	}
	out := make([]cloudprovider.Instance, 0, len(g.view.Instances)+len(slots))
	for _, in := range g.view.Instances {
		if deleting.holds(in.Id) && (in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting) {
			in.Status = &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
		}
		out = append(out, in)
	}
	g.mu.RUnlock()
	for _, s := range slots {
		out = append(out, cloudprovider.Instance{Id: g.slotID(s.N), Status: cloudprovider.FailedCreation(*s.Info)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out
}

// FailedSlots returns the group's failed slots, oldest first.
func (g *Group) FailedSlots() []FailedSlot { return g.failed().list() }

// SlotFailed reports whether slot n is still failed.
func (g *Group) SlotFailed(n int) bool { return g.failed().holds(n) }

func (g *Group) slot(providerID string) (int, bool) {
	if g.slotID == nil {
		return 0, false
	}
	for _, s := range g.failed().list() {
		if g.slotID(s.N) == providerID {
			return s.N, true
		}
	}
	return 0, false
}

// Live counts the instances that stay: no decrease may cancel them.
func (g *Group) Live() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.live()
}

// ChangedAt is when our latest change that reached the cloud ended.
func (g *Group) ChangedAt() time.Time { return g.ledger.changedAt(g.id) }

// Pending returns the operations not yet settled, oldest first.
func (g *Group) Pending() []Operation { return g.ledger.pendingOf(g.id) }
