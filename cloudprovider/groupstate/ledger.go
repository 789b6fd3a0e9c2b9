package groupstate

import (
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// Ledger records the changes we sent to a cloud, per node group, and
// orders them against listings with one sequence. It holds each group's
// guard, the instances whose deletion the cloud accepted, the slots the
// cloud failed to fill and the operations still pending.
//
// A listing that began before our latest change of a group, or while one
// was in flight, does not overwrite the change's effect: the served size
// stays until a later listing. A change's fresh read counts as such a
// change. So a refresh never waits for a running change.
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
	guard    *mutationGuard
	deleting *deletingSet
	failed   *failedSlots
	view     *Group
	// last is the sequence after the latest change that may have applied;
	// inflight counts the calls and reads not yet ended.
	last     uint64
	inflight int
	// changedAt is when the latest change that reached the cloud ended.
	changedAt time.Time
	// pending are the operations not yet settled, oldest first.
	pending []Operation
}

// NewLedger returns an empty ledger whose guards use opts and whose
// timers use now (nil means time.Now).
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
			guard:    newMutationGuard(id, l.opts),
			deleting: newDeletingSet(DeletingGrace, l.now),
			failed:   newFailedSlots(l.now),
		}
		g.guard.ledger = l
		l.groups[id] = g
	}
	return g
}

func (l *Ledger) guard(id string) *mutationGuard { return l.group(id).guard }

// Attempts counts the changes of group id that took its lock, whatever
// their outcome: a refresh that reuses earlier reads compares it to tell
// that the group may have changed, even when an answer was lost.
func (l *Ledger) Attempts(id string) uint64 { return l.guard(id).attempts.Load() }

// forget drops the groups keep rejects; a group managed again starts
// afresh.
func (l *Ledger) forget(keep func(id string) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, g := range l.groups {
		// A group mid-change stays: its caller still holds the guard.
		if !keep(id) && g.inflight == 0 && len(g.guard.sem) == 0 {
			delete(l.groups, id)
		}
	}
}

// Listing marks the start of a listing, taken before its first call.
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

// overtaken reports whether a change of group id ended since listing
// began, or one is in flight: the listing may predate it.
func (l *Ledger) overtaken(listing Listing, id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.groups[id]
	return ok && (g.inflight > 0 || g.last > listing.seq)
}

// seqNow is the sequence now. An operation takes it once the cloud
// answered, still inside the call: taken before, another group's call
// ending meanwhile would make a racing listing look later than it is.
func (l *Ledger) seqNow() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// after reports whether the cloud answered the call numbered seq
// (Operation.Seq) before the listing began, so the listing shows it.
func (listing Listing) after(seq uint64) bool { return seq < listing.seq }

// read records that a fresh read of group id ended. One that succeeded
// overtakes every listing that began before it.
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

// sending records that a call or read of group id starts.
func (l *Ledger) sending(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g, ok := l.groups[id]; ok {
		g.inflight++
	}
}

// sent records that a call ended with err. Anything but a refusal may
// have changed the group, so it overtakes earlier listings; reached says
// a request left.
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

// groupListing is what one listing says of a group: which instances it
// holds, and how many slots are unfilled and why (-1: it does not say).
type groupListing struct {
	holds    func(id string) bool
	unfilled int
	failure  *cloudprovider.InstanceErrorInfo
}

// reconcile applies a listing of group id and reports whether the served
// size stays. It ends Deleting for instances gone or past their grace, and
// sets the unfilled slots unless a change overtook the listing: an older
// count may name slots the change gave up.
func (l *Ledger) reconcile(listing Listing, id string, listed groupListing) (keepSize bool) {
	g := l.group(id)
	g.deleting.reconcile(listing.At, listed.holds)
	overtaken := l.overtaken(listing, id)
	if listed.unfilled >= 0 && !overtaken {
		g.failed.set(listed.unfilled, listed.failure)
	}
	return overtaken
}

// fresh applies a change's fresh read of group id, newer than anything
// served. The read counts as in flight meanwhile, so reconcile would keep
// the old size.
func (l *Ledger) fresh(id string, read groupListing) {
	g := l.group(id)
	g.deleting.reconcile(l.now(), read.holds)
	if read.unfilled >= 0 {
		g.failed.set(read.unfilled, read.failure)
	}
}
