package groupstate

import (
	"sync"
	"time"
)

// Freshness is the one rule for when a provider reads something again
// instead of serving what it read before: nothing it serves is older than
// the bound (--max-staleness). A refresh asks it once (Begin) and gets a
// Round that says, for each thing read at some time, whether it is due.
//
// What makes a read due early is the horizon: what a refresh reads is
// served until the next refresh has run. If CA keeps its pace (the time
// between the last two refreshes) and the next refresh takes as long as
// the last one, something read at t is served until now + horizon; so it
// is read again when its age plus the horizon reaches the bound (Due), and
// what is served between two refreshes stays younger than the bound. The
// horizon is at most the bound, and the bound itself before the first
// refresh ends.
//
// A Freshness is safe for concurrent use.
type Freshness struct {
	bound time.Duration
	now   func() time.Time

	mu sync.Mutex
	// lastAt is when the last paced refresh began; lastTook how long it
	// took.
	lastAt   time.Time
	lastTook time.Duration
}

// NewFreshness returns the rule for bound (DefaultMaxStaleness when not
// positive), measured with now (time.Now when nil), the provider's
// injected clock.
func NewFreshness(bound time.Duration, now func() time.Time) *Freshness {
	if bound <= 0 {
		bound = DefaultMaxStaleness
	}
	if now == nil {
		now = time.Now
	}
	return &Freshness{bound: bound, now: now}
}

// Bound is the oldest data the provider may serve.
func (f *Freshness) Bound() time.Duration { return f.bound }

// Round is one refresh's view of freshness: its start and its horizon.
type Round struct {
	// At is when the round began.
	At      time.Time
	horizon time.Duration
	bound   time.Duration
	paced   bool
}

// Begin starts a round. paced says the round is one of CA's refreshes,
// whose pace sets the horizon of the next; a lookup between two refreshes
// says nothing of CA's pace and passes false.
func (f *Freshness) Begin(paced bool) Round {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	r := Round{At: now, horizon: f.bound, bound: f.bound, paced: paced}
	if !f.lastAt.IsZero() {
		r.horizon = min(now.Sub(f.lastAt)+f.lastTook, f.bound)
	}
	return r
}

// End records that a round ended successfully; a paced one sets the pace
// the next round's horizon is measured with. A failed round is not ended:
// the next round measures from the last one that read.
func (f *Freshness) End(r Round) {
	if !r.paced {
		return
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastAt, f.lastTook = r.At, now.Sub(r.At)
}

// Due reports whether something read at must be read again this round: it
// would reach the bound before the next round has run (or it was never
// read: the zero time).
func (r Round) Due(at time.Time) bool {
	return at.IsZero() || r.At.Sub(at)+r.horizon >= r.bound
}

// Expired reports whether something read at has reached the bound (or was
// never read): the plain bound, for a read the round only checks, whose
// reuse is decided again at every round.
func (r Round) Expired(at time.Time) bool {
	return at.IsZero() || r.At.Sub(at) >= r.bound
}

// Horizon is how long what this round reads will be served, by the pace
// rule above.
func (r Round) Horizon() time.Duration { return r.horizon }
