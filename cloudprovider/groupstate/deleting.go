package groupstate

import (
	"sync"
	"time"
)

// DeletingGrace is how long an instance whose deletion the cloud accepted
// shows Deleting while the cloud still lists it live. Once the cloud lists
// it as being removed, its own state says Deleting, so the grace covers
// only the time until the listing catches up. The slowest case is
// Exoscale's: an eviction queued behind a busy pool waits for its scale-up
// (5 to 15 minutes), and the upstream provider waits up to 10 minutes for
// the pool. 15 minutes covers both and equals CA's default
// --max-node-provision-time. After it, a removal the cloud dropped shows
// the instance live again, so CA can delete it again.
const DeletingGrace = 15 * time.Minute

// deletingSet holds the instances whose deletion the cloud accepted, by
// providerID, with when.
type deletingSet struct {
	grace time.Duration
	now   func() time.Time

	mu    sync.Mutex
	since map[string]time.Time
}

func newDeletingSet(grace time.Duration, now func() time.Time) *deletingSet {
	if now == nil {
		now = time.Now
	}
	return &deletingSet{grace: grace, now: now, since: map[string]time.Time{}}
}

// add records ids now; an id already held keeps its time, so a repeated
// deletion does not extend the grace.
func (s *deletingSet) add(ids ...string) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if _, held := s.since[id]; !held {
			s.since[id] = now
		}
	}
}

// forget drops ids: their deletion failed.
func (s *deletingSet) forget(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.since, id)
	}
}

func (s *deletingSet) holds(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, held := s.since[id]
	return held
}

func (s *deletingSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.since)
}

// reconcile drops the ids a listing that began at start lacks, and those
// whose grace had passed then.
func (s *deletingSet) reconcile(start time.Time, listed func(id string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, since := range s.since {
		if !listed(id) || start.Sub(since) >= s.grace {
			delete(s.since, id)
		}
	}
}
