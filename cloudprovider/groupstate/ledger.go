package groupstate

import (
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// Ledger holds each group's guard and bookkeeping, and orders our changes
// against listings with one sequence: a listing that began before our
// latest change of a group, or during one, keeps the size that change
// served. So a refresh never waits for a running change. A Ledger is safe
// for concurrent use.
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
	// last is the sequence after the latest change that may have applied.
	last      uint64
	inflight  int
	changedAt time.Time
	pending   []Operation
}

// NewLedger returns an empty ledger; now (nil: time.Now) times its
// bookkeeping.
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
// their outcome, so a refresh can tell that the group may have changed.
func (l *Ledger) Attempts(id string) uint64 { return l.guard(id).attempts.Load() }

// forget drops the groups keep rejects.
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
// began, or is in flight.
func (l *Ledger) overtaken(listing Listing, id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.groups[id]
	return ok && (g.inflight > 0 || g.last > listing.seq)
}

// seqNow is the sequence now. An operation takes it once the cloud
// answered but before the call ends, so a racing listing never looks
// later than the answer.
func (l *Ledger) seqNow() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// after reports whether the listing began after the answer numbered seq.
func (listing Listing) after(seq uint64) bool { return seq < listing.seq }

// read records the end of a fresh read; one that succeeded overtakes
// earlier listings.
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

func (l *Ledger) sending(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g, ok := l.groups[id]; ok {
		g.inflight++
	}
}

// sent records the end of a call. Anything but a refusal may have changed
// the group, so it overtakes earlier listings.
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

// groupListing is what one listing says of a group.
type groupListing struct {
	holds    func(id string) bool
	unfilled int
	failure  *cloudprovider.InstanceErrorInfo
}

// reconcile applies a listing of group id and reports whether the served
// size stays. An overtaken listing sets no slots: its count may name slots
// the change gave up.
func (l *Ledger) reconcile(listing Listing, id string, listed groupListing) (keepSize bool) {
	g := l.group(id)
	g.deleting.reconcile(listing.At, listed.holds)
	overtaken := l.overtaken(listing, id)
	if listed.unfilled >= 0 && !overtaken {
		g.failed.set(listed.unfilled, listed.failure)
	}
	return overtaken
}

// fresh applies a change's fresh read, which is newer than anything
// served.
func (l *Ledger) fresh(id string, read groupListing) {
	g := l.group(id)
	g.deleting.reconcile(l.now(), read.holds)
	if read.unfilled >= 0 {
		g.failed.set(read.unfilled, read.failure)
	}
}
