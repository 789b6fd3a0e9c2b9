package groupstate

import (
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// Ledger is the one record of the changes we sent to a cloud, per node group,
// and of what they imply until the cloud's listings show them: it holds each
// group's MutationGuard, the instances whose deletion the cloud accepted
// (DeletingSet), and the slots the cloud failed to fill (FailedSlots), and it
// orders mutations against listings with one sequence.
//
// Its reconcile step (Reconcile) is the one place where a listing meets our
// changes, and applies the same rules for every cloud:
//
//   - a listing that began before our latest accepted mutation of a group,
//     or while one was in flight, does not overwrite that mutation's effect:
//     the provider keeps the size it serves until a later listing (a
//     mutation's fresh read counts as such a mutation: what it installed
//     is newer than the listing);
//   - an instance we asked to delete shows Deleting until a listing no longer
//     holds it, or DeletingGrace ends (DeletingSet);
//   - a slot the cloud failed to fill shows as a failed creation until CA
//     deletes it or the cloud fills it (FailedSlots).
//
// A refresh never waits for a running mutation: the sequence already keeps
// the mutation's effect, and waiting would hold a refresh (and CA's loop
// behind it) for as long as a slow cloud call takes. A mutation's fresh read
// (MutationGuard's Read) runs under the group's lock and installs what it
// reads directly.
//
// A Ledger is safe for concurrent use.
type Ledger struct {
	opts GuardOptions
	now  func() time.Time

	mu     sync.Mutex
	seq    uint64
	groups map[string]*ledgerGroup
}

type ledgerGroup struct {
	guard    *MutationGuard
	deleting *DeletingSet
	failed   *FailedSlots
	// view is the group's served state, when the provider keeps it in a
	// Group (Ledger.Group).
	view *Group
	// last is the sequence after the group's latest accepted mutation
	// ended; inflight counts its mutations whose cloud call has not ended.
	last     uint64
	inflight int
	// changedAt is when a mutation of the group the cloud may have
	// applied last ended, on the ledger's clock.
	changedAt time.Time
	// pending are the operations the cloud accepted and has not been seen
	// finishing (Effect.Pending), oldest first.
	pending []Operation
}

// NewLedger returns an empty ledger whose guards measure their quarantine
// with opts, and whose deleting grace and failed slots are timed with now
// (time.Now when nil), the provider's injected clock.
func NewLedger(opts GuardOptions, now func() time.Time) *Ledger {
	if now == nil {
		now = time.Now
	}
	return &Ledger{opts: opts, now: now, groups: map[string]*ledgerGroup{}}
}

func (l *Ledger) group(id string) *ledgerGroup {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.groups[id]
	if !ok {
		g = &ledgerGroup{
			guard:    NewMutationGuard(id, l.opts),
			deleting: NewDeletingSet(DeletingGrace, l.now),
			failed:   newFailedSlots(l.now),
		}
		g.guard.ledger = l
		l.groups[id] = g
	}
	return g
}

// Guard returns the mutation guard of group id, created on first use; its
// calls are recorded in the ledger, so a listing that races with one keeps
// its effect.
func (l *Ledger) Guard(id string) *MutationGuard { return l.group(id).guard }

// Deleting returns the instances of group id whose deletion the cloud
// accepted.
func (l *Ledger) Deleting(id string) *DeletingSet { return l.group(id).deleting }

// Failed returns the slots of group id the cloud failed to fill.
func (l *Ledger) Failed(id string) *FailedSlots { return l.group(id).failed }

// Forget drops what the ledger holds of groups that are no longer managed,
// keeping those keep reports true for. A group managed again later starts
// afresh.
func (l *Ledger) Forget(keep func(id string) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, g := range l.groups {
		// A guard whose group is mid-change stays: the change's caller
		// still holds it.
		if !keep(id) && g.inflight == 0 && len(g.guard.lock) == 0 {
			delete(l.groups, id)
		}
	}
}

// Listing marks the start of a listing: taken before its first call, it
// tells which mutations the listing may not have seen.
type Listing struct {
	seq uint64
	// At is when the listing began, on the ledger's clock.
	At time.Time
}

// Begin marks the start of a listing.
func (l *Ledger) Begin() Listing {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	return Listing{seq: l.seq, At: now}
}

// Overtaken reports whether a mutation of group id was accepted, or a
// mutation's fresh read installed, since listing began, or a mutation is
// still in flight: what the listing says of the group may predate it.
func (l *Ledger) Overtaken(listing Listing, id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.groups[id]
	return ok && (g.inflight > 0 || g.last > listing.seq)
}

// Seq is the ledger's sequence now: a value that orders a cloud call a
// provider tracks itself (an Exoscale operation) against later listings
// (Listing.After). The provider takes it once the cloud has answered the
// call, still inside the guarded call (before the guard records the call's
// end): taken before the call, another group's call ending meanwhile would
// make a listing that began while ours was in flight look later than it.
func (l *Ledger) Seq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// After reports whether a call whose sequence was seq (Seq, taken once the
// cloud answered it) was answered before the listing began, so the listing
// shows its effect if the cloud applied it.
func (listing Listing) After(seq uint64) bool { return seq < listing.seq }

// read records that a mutation's fresh read of group id ended with err:
// one that installed what the cloud holds now (err nil) makes every listing
// that began before it older than what the provider serves, so they are
// overtaken too. Like a cloud call, the read counts as in flight from
// before it starts (sending), so a listing that races with it is overtaken
// while the read installs its state.
func (l *Ledger) read(id string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.groups[id]
	if !ok {
		return
	}
	g.inflight--
	if err == nil {
		l.seq++
		g.last = l.seq
	}
}

// sending records that a mutation's cloud call of group id starts.
func (l *Ledger) sending(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g, ok := l.groups[id]; ok {
		g.inflight++
	}
}

// sent records that the call ended with err: one the cloud may have
// applied (anything but a refusal) moves the sequence on, so every listing
// that began before now is overtaken for the group. reached says a request
// left: only then can the cloud have changed the group (ChangedAt).
func (l *Ledger) sent(id string, err error, reached bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	g, ok := l.groups[id]
	if !ok {
		return
	}
	g.inflight--
	if err == nil || cloudprovider.OutcomeOf(err) != cloudprovider.MutationRefused {
		g.last = l.seq
		if reached {
			g.changedAt = l.now()
		}
	}
}

// changedAt returns when the latest mutation of group id the cloud may
// have applied ended (zero: none since the group was first managed).
func (l *Ledger) changedAt(id string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g, ok := l.groups[id]; ok {
		return g.changedAt
	}
	return time.Time{}
}

func (l *Ledger) addPending(id string, op Operation) {
	g := l.group(id)
	l.mu.Lock()
	defer l.mu.Unlock()
	g.pending = append(g.pending, op)
}

func (l *Ledger) pendingOf(id string) []Operation {
	g := l.group(id)
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Operation(nil), g.pending...)
}

func (l *Ledger) setPending(id string, ops []Operation) {
	g := l.group(id)
	l.mu.Lock()
	defer l.mu.Unlock()
	g.pending = append([]Operation(nil), ops...)
}

// GroupListing is what one listing says of a group.
type GroupListing struct {
	// Holds reports whether the listing holds the instance id (in any
	// state).
	Holds func(id string) bool
	// Unfilled is the number of slots the cloud reports it failed to fill
	// (a failed scaling activity with fewer instances than the desired
	// number), with Failure describing why; -1 when the listing does not
	// say (the cloud reports failures through its operations instead, see
	// FailedSlots.Add), which leaves the slots as they are.
	Unfilled int
	Failure  *cloudprovider.InstanceErrorInfo
}

// Reconciled is what a provider serves of a group after Reconcile.
type Reconciled struct {
	// KeepSize says a mutation of ours overtook the listing: the provider
	// keeps the size it serves now instead of the listed one.
	KeepSize bool
}

// Reconcile applies a listing that began at listing to group id, by the
// rules on Ledger: it ends the Deleting state of instances the listing no
// longer holds or whose grace has passed, sets the slots the cloud reports
// unfilled (unless a mutation overtook the listing), and says whether the
// listed size may be served.
func (l *Ledger) Reconcile(listing Listing, id string, listed GroupListing) Reconciled {
	g := l.group(id)
	g.deleting.Reconcile(listing.At, listed.Holds)
	overtaken := l.Overtaken(listing, id)
	// Unfilled slots are part of the size a mutation overtook: an older
	// listing's count may name slots the mutation already gave up.
	if listed.Unfilled >= 0 && !overtaken {
		g.failed.Set(listed.Unfilled, listed.Failure)
	}
	return Reconciled{KeepSize: overtaken}
}

// Fresh applies what a mutation's fresh read of group id says (the read
// the guard runs under the group's lock, MutationGuard's Read), which is
// always newer than what the provider serves and is installed whole: it
// ends the Deleting state of instances the read no longer holds or whose
// grace has passed, and sets the slots the cloud reports unfilled. The
// read counts as in flight meanwhile, so Reconcile would keep the old
// size: a provider's read uses Fresh instead.
func (l *Ledger) Fresh(id string, read GroupListing) {
	g := l.group(id)
	g.deleting.Reconcile(l.now(), read.Holds)
	if read.Unfilled >= 0 {
		g.failed.Set(read.Unfilled, read.Failure)
	}
}
