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

// View is what one listing or read says of a node group, in CA's terms:
// the provider maps its cloud's group and instances into it (bounds,
// desired size, each instance's providerID and state) and gives it to the
// group's Group, which applies the ledger's rules once for every cloud.
type View struct {
	Min, Max int
	// Target is the cloud's desired size, failed slots included where the
	// cloud counts them (a slot outside the cloud's size is counted by
	// Group: see FailedSlots).
	Target int
	// TargetFromInstances says the cloud keeps no desired size for the
	// group: the target served is then the instances that stay (neither
	// listed Deleting nor in the group's DeletingSet), counted when read, so
	// a deletion whose grace ends counts its instance again at once, and
	// Target is not used.
	TargetFromInstances bool
	// Instances are the group's instances, each with Id its providerID and
	// Status its state as the cloud lists it; Group overlays Deleting and
	// adds the failed slots.
	Instances []cloudprovider.Instance
	// Unfilled and Failure are as GroupListing's: the slots a listing
	// reports unfilled and why, or Unfilled -1 when it says nothing.
	Unfilled int
	Failure  *cloudprovider.InstanceErrorInfo
	// Managed is why the provider manages the group, decided with Min and
	// Max by the refresh that selects it; a mutation's fresh read keeps the
	// served one (FreshFrom).
	Managed cloudprovider.Management
}

// Group is the one model of the state a provider serves for a node group:
// the view its last listing or read installed, our mutations' effects on
// it, and the ledger's rules (a listing older than a mutation keeps the
// mutation's effect; Deleting until the cloud agrees; failed slots shown as
// failed creations). Reads never wait for a cloud call: a mutation holds
// the group's guard while its call runs, and takes the group's lock only
// to apply its effect.
//
// A provider's node group embeds a *Group for Id, MinSize, MaxSize,
// TargetSize and Nodes, and keeps beside it only what its cloud adds (the
// cloud's own group record, its template inputs).
//
// It is safe for concurrent use.
type Group struct {
	id     string
	ledger *Ledger
	slotID func(n int) string
	// outside says failed slots are outside the cloud's desired size (an
	// operation failed to raise it), so the target served counts them.
	outside bool

	mu   sync.RWMutex
	view View
	// retired says the provider's snapshot no longer holds the group.
	retired atomic.Bool
}

// SlotsOutsideSize says a cloud's failed slots are not in its desired size
// (they come from failed operations, FailedSlots.Add), so Group adds them
// to the target it serves; see Ledger.Group.
const SlotsOutsideSize = true

// Group returns the served state of group id, made on first use with
// slotID, which builds the providerID of the failed slot numbered n (nil
// when the cloud has none), and outside (SlotsOutsideSize or false).
func (l *Ledger) Group(id string, slotID func(n int) string, outside bool) *Group {
	lg := l.group(id)
	l.mu.Lock()
	defer l.mu.Unlock()
	if lg.view == nil {
		lg.view = &Group{id: id, ledger: l, slotID: slotID, outside: outside, view: View{Unfilled: -1}}
	}
	return lg.view
}

// Guard is the group's mutation guard.
func (g *Group) Guard() *MutationGuard {
	guard := g.ledger.Guard(g.id)
	guard.view.CompareAndSwap(nil, g)
	return guard
}

// Deleting is the group's set of instances (by providerID) whose deletion
// the cloud accepted.
func (g *Group) Deleting() *DeletingSet { return g.ledger.Deleting(g.id) }

// Failed is the group's failed slots.
func (g *Group) Failed() *FailedSlots { return g.ledger.Failed(g.id) }

// Install applies a listing of the group that began at listing, by the
// ledger's rules (Ledger.Reconcile): the listed bounds and instances are
// served; the listed size is served unless a mutation of ours overtook the
// listing, in which case the size served now stays until a later listing.
// It reports whether the size was kept.
func (g *Group) Install(listing Listing, v View) (kept bool) {
	return g.InstallWith(listing, v, nil)
}

// InstallWith is Install with changes that must land together with the
// listing: then (when not nil) runs under the group's lock after the
// install, told whether the size was kept, so no read of the group sees
// the new view without them (the failed slots of an operation the listing
// settles, say). then changes only the ledger's sets (Deleting, Failed):
// the Group's own methods take the lock it runs under.
func (g *Group) InstallWith(listing Listing, v View, then func(kept bool)) (kept bool) {
	g.retired.Store(false)
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.ledger.Reconcile(listing, g.id, g.listing(v))
	if r.KeepSize {
		v.Target = g.view.Target
	}
	g.view = v
	if then != nil {
		then(r.KeepSize)
	}
	return r.KeepSize
}

// Fresh installs what a mutation's fresh read of the group says (the read
// the guard runs under the group's guard: newer than anything served, so
// installed whole; Ledger.Fresh).
func (g *Group) Fresh(v View) {
	g.FreshFrom(func(View) View { return v })
}

// FreshFrom is Fresh for a read that says only part of the view (a cloud
// whose group answer leaves out the bounds, or some members): build gets a
// copy of the served view and returns the view to install, under the
// group's lock, so a refresh installing between the two cannot be undone
// by the served values build copies. Why the group is managed is the
// refresh's choice, never a read's: the served one stays.
func (g *Group) FreshFrom(build func(served View) View) {
	g.mu.Lock()
	defer g.mu.Unlock()
	served := g.view
	served.Target = g.target()
	served.Instances = append([]cloudprovider.Instance(nil), served.Instances...)
	v := build(served)
	v.Managed = served.Managed
	g.ledger.Fresh(g.id, g.listing(v))
	g.view = v
}

func (g *Group) listing(v View) GroupListing {
	held := make(map[string]bool, len(v.Instances))
	for _, in := range v.Instances {
		held[in.Id] = true
	}
	return GroupListing{Holds: func(id string) bool { return held[id] }, Unfilled: v.Unfilled, Failure: v.Failure}
}

// Retire marks the group as no longer managed: the provider's snapshot
// dropped it (it left the cloud, or --nodes or auto-discovery no longer
// take it). CA may still hold it from before its next Refresh, so its
// TargetSize and Nodes answer ErrNodeGroupNotFound, never the last state
// as if it were still managed, until a listing installs it again.
func (g *Group) Retire() { g.retired.Store(true) }

// Managed reports whether the group was installed and not retired since.
func (g *Group) Managed() bool { return !g.retired.Load() }

// CheckManaged returns ErrNodeGroupNotFound once the group is retired: a
// mutation of a group CA still holds but the provider no longer manages is
// refused without a cloud call.
func (g *Group) CheckManaged() error {
	if g.Managed() {
		return nil
	}
	return cloudprovider.Errorf(cloudprovider.ErrNodeGroupNotFound, "node group %s is no longer managed: it left the cloud, or --nodes and auto-discovery no longer take it", g.id)
}

// Update applies an accepted mutation's effect to the served view (a new
// target, say), under the group's lock.
func (g *Group) Update(apply func(v *View)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	apply(&g.view)
}

// Read returns a copy of the served view as installed (without the
// Deleting overlay and the failed slots Nodes adds), its Target the
// instances that stay when TargetFromInstances.
func (g *Group) Read() View {
	g.mu.RLock()
	defer g.mu.RUnlock()
	v := g.view
	v.Target = g.target()
	v.Instances = append([]cloudprovider.Instance(nil), v.Instances...)
	return v
}

// target is the view's target, or the instances that stay when the cloud
// keeps no desired size. Callers hold mu.
func (g *Group) target() int {
	if !g.view.TargetFromInstances {
		return g.view.Target
	}
	deleting := g.Deleting()
	n := 0
	for _, in := range g.view.Instances {
		if Stays(in, deleting) {
			n++
		}
	}
	return n
}

// Stays reports whether an instance counts towards a target: the cloud
// does not list it Deleting, and it is not one whose deletion the cloud
// accepted from us (deleting, by providerID).
func Stays(in cloudprovider.Instance, deleting *DeletingSet) bool {
	return (in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting) && !deleting.Holds(in.Id)
}

// StatusWith is the group's NodeGroup.Status: its per-group settings, the
// guard's quarantine (MutationGuard.Status) and why it is managed.
func (g *Group) StatusWith(settings groupconfig.GroupSettings) cloudprovider.GroupStatus {
	st := g.Guard().Status(settings)
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

// TargetSize implements cloudprovider.NodeGroup: the served size, plus the
// failed slots where the cloud keeps them outside its size;
// ErrNodeGroupNotFound once retired.
func (g *Group) TargetSize(context.Context) (int, error) {
	if err := g.CheckManaged(); err != nil {
		return 0, err
	}
	return g.Target(), nil
}

// Target is TargetSize without its context and error.
func (g *Group) Target() int {
	// The slots are read under the lock too: an install changes them with
	// the view (InstallWith).
	g.mu.RLock()
	defer g.mu.RUnlock()
	t := g.target()
	if g.outside {
		t += g.Failed().Len()
	}
	return t
}

// Nodes implements cloudprovider.NodeGroup: the instances, an instance
// whose deletion the cloud accepted shown Deleting (DeletingSet), and the
// failed slots as failed creations, sorted by id; ErrNodeGroupNotFound
// once retired.
func (g *Group) Nodes(context.Context) ([]cloudprovider.Instance, error) {
	if err := g.CheckManaged(); err != nil {
		return nil, err
	}
	return g.Instances(), nil
}

// Instances is Nodes without its context and error.
func (g *Group) Instances() []cloudprovider.Instance {
	deleting := g.Deleting()
	// The slots are read under the lock too: an install changes them with
	// the view (InstallWith).
	g.mu.RLock()
	var slots []FailedSlot
	if g.slotID != nil {
		slots = g.Failed().List()
	}
	out := make([]cloudprovider.Instance, 0, len(g.view.Instances)+len(slots))
	for _, in := range g.view.Instances {
		if deleting.Holds(in.Id) && (in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting) {
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

// Slot returns the number of the failed slot providerID names, if the
// group holds it: DeleteNodes uses it to tell a slot from an instance.
func (g *Group) Slot(providerID string) (int, bool) {
	if g.slotID == nil {
		return 0, false
	}
	for _, s := range g.Failed().List() {
		if g.slotID(s.N) == providerID {
			return s.N, true
		}
	}
	return 0, false
}

// Live counts the instances that stay (Stays): the ones a decrease may not
// cancel, and the floor of a target.
func (g *Group) Live() int {
	deleting := g.Deleting()
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := 0
	for _, in := range g.view.Instances {
		if Stays(in, deleting) {
			n++
		}
	}
	return n
}

// ChangedAt is when the latest change of the group the cloud may have
// applied ended (zero when none since the group was first managed).
func (g *Group) ChangedAt() time.Time { return g.ledger.changedAt(g.id) }

// Pending returns the operations the cloud accepted for the group and has
// not been seen finishing (Effect.Pending), oldest first.
func (g *Group) Pending() []Operation { return g.ledger.pendingOf(g.id) }
