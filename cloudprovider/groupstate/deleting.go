package groupstate

import (
	"sync"
	"time"
)

// DeletingGrace is how long an instance whose deletion the cloud accepted
// is reported as Deleting while the cloud's listing still shows it live.
//
// Within the grace, the instance is reported Deleting because the cloud
// took the removal and its listing has not caught up: CA must not count the
// node as capacity, nor send its deletion again (a second removal would
// lower the size twice). Once the cloud lists the instance as being removed
// (Removing, destroying, closed), its own state says Deleting, so the grace
// only has to cover the time from an accepted removal to the listing showing
// it. The slowest such time the three clouds' documentation and their
// upstream providers allow for is Exoscale's: upstream waits up to 10
// minutes for a pool to run again around an eviction, and an eviction
// queued behind a busy pool waits for its scale-up, which users report takes
// 5 to 15 minutes. 15 minutes covers both, and equals CA's default
// --max-node-provision-time, the time CA itself gives a cloud to act on a
// size change. After the grace, a removal the cloud dropped without a word
// shows the instance as the cloud lists it again, so CA can delete it again.
const DeletingGrace = 15 * time.Minute

// DeletingSet is the one rule for "deleting until the cloud agrees": an
// instance whose deletion the cloud accepted shows Deleting until a listing
// no longer holds it, or until the grace has passed since the cloud
// accepted it (as of the listing's start). It is safe for concurrent use.
type DeletingSet struct {
	grace time.Duration
	now   func() time.Time

	mu    sync.Mutex
	since map[string]time.Time
}

// NewDeletingSet returns an empty set with grace (DeletingGrace unless a
// cloud documents a reason for another) measured with now (time.Now when
// nil), the provider's injected clock.
func NewDeletingSet(grace time.Duration, now func() time.Time) *DeletingSet {
	if now == nil {
		now = time.Now
	}
	return &DeletingSet{grace: grace, now: now, since: map[string]time.Time{}}
}

// Add records that the cloud accepted the deletion of ids now. An id
// already held keeps its first time: a repeated deletion does not extend
// the grace.
func (s *DeletingSet) Add(ids ...string) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if _, held := s.since[id]; !held {
			s.since[id] = now
		}
	}
}

// Forget drops ids: the cloud reported that their deletion failed, so
// they are live again.
func (s *DeletingSet) Forget(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.since, id)
	}
}

// Holds reports whether id shows as Deleting.
func (s *DeletingSet) Holds(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, held := s.since[id]
	return held
}

// Len is the number of instances held.
func (s *DeletingSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.since)
}

// Reconcile applies a listing that began at start: it forgets every id the
// listing does not hold (the cloud removed it), and every id whose grace
// had passed when the listing began (the cloud still lists it live long
// after it accepted the removal, so it dropped it). A listing that began
// before an id was added never ends its grace.
func (s *DeletingSet) Reconcile(start time.Time, listed func(id string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, since := range s.since {
		if !listed(id) || start.Sub(since) >= s.grace {
			delete(s.since, id)
		}
	}
}
