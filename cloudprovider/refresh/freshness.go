package refresh

import (
	"sync"
	"time"
)

// Freshness decides when a provider reads something again, so nothing it
// serves is older than the bound (--max-staleness). What a refresh reads
// is served until the next refresh ends; the horizon estimates that time
// from CA's pace and the last refresh's length, and a read is due when its
// age plus the horizon reaches the bound.
type Freshness struct {
	bound time.Duration
	now   func() time.Time

	mu sync.Mutex
	// lastAt is when the last paced refresh began, lastTook its length.
	lastAt   time.Time
	lastTook time.Duration
}

// NewFreshness returns the rule for bound (DefaultMaxStaleness when not
// positive), measured with now (nil means time.Now).
func NewFreshness(bound time.Duration, now func() time.Time) *Freshness {
	if bound <= 0 {
		bound = DefaultMaxStaleness
	}
	if now == nil {
		now = time.Now
	}
	return &Freshness{bound: bound, now: now}
}

// Round is one refresh's start and horizon.
type Round struct {
	At      time.Time
	horizon time.Duration
	bound   time.Duration
	paced   bool
}

// Begin starts a round. paced says it is one of CA's refreshes, whose pace
// sets the next horizon; a lookup between refreshes passes false.
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

// End records that a round succeeded; a paced one sets the pace. A failed
// round is not ended, so the next measures from the last one that read.
func (f *Freshness) End(r Round) {
	if !r.paced {
		return
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastAt, f.lastTook = r.At, now.Sub(r.At)
}

// Due reports whether something read at (zero: never) must be read again
// this round: it would reach the bound before the next round ends.
func (r Round) Due(at time.Time) bool {
	return at.IsZero() || r.At.Sub(at)+r.horizon >= r.bound
}

// Expired reports whether something read at (zero: never) has reached the
// bound, for a read whose reuse each round decides again.
func (r Round) Expired(at time.Time) bool {
	return at.IsZero() || r.At.Sub(at) >= r.bound
}
