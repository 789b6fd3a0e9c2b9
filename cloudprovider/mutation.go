package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
)

// DefaultUnknownOutcomeWindow is how long a group's mutations are refused
// after a mutation whose outcome is unknown (see MutationGuard): the HTTP
// client's overall request lifetime (httpOverallTimeout). A request of ours
// that a gateway still holds after that long is one our own client would
// have abandoned too, and is assumed never to land.
const DefaultUnknownOutcomeWindow = httpOverallTimeout

var (
	unknownOutcomeWindow atomic.Int64 // nanoseconds
	mutationClockMu      sync.RWMutex
	mutationClock        = time.Now
)

func init() { unknownOutcomeWindow.Store(int64(DefaultUnknownOutcomeWindow)) }

// SetUnknownOutcomeWindow sets the quarantine after an outcome-unknown
// mutation for every group (--unknown-outcome-window); 0 turns it off,
// leaving only the fresh read before the next mutation.
func SetUnknownOutcomeWindow(d time.Duration) { unknownOutcomeWindow.Store(int64(max(d, 0))) }

// UnknownOutcomeWindow returns the window SetUnknownOutcomeWindow set.
func UnknownOutcomeWindow() time.Duration { return time.Duration(unknownOutcomeWindow.Load()) }

// SetMutationClock makes every MutationGuard measure the window with now
// (tests pass a ManualClock's Now) and returns a function restoring the
// previous clock. The window is real time in production: the late request
// it waits for travels on the real network.
func SetMutationClock(now func() time.Time) (restore func()) {
	mutationClockMu.Lock()
	defer mutationClockMu.Unlock()
	prev := mutationClock
	mutationClock = now
	return func() {
		mutationClockMu.Lock()
		defer mutationClockMu.Unlock()
		mutationClock = prev
	}
}

func mutationNow() time.Time {
	mutationClockMu.RLock()
	defer mutationClockMu.RUnlock()
	return mutationClock()
}

// MutationGuard is the one mutation discipline every node group follows:
//
//  1. a lock per group that serialises read-compute-mutate sequences and
//     gives up when the caller's context ends, so a queue behind a slow cloud
//     call answers within CA's deadline; reads never take it;
//  2. the request is checked against the snapshot, refusing bad requests
//     without a cloud call;
//  3. the group is re-read from the cloud first when the previous mutation's
//     outcome is unknown (OutcomeUnknown), and also when the cloud resizes
//     by absolute size and this call shrinks the group (an instance launched
//     since the snapshot would otherwise let the cloud remove one of its own
//     choosing); the request is checked again against the fresh state;
//  4. one cloud call;
//  5. the answer is applied to the snapshot; when the cloud applied the
//     change without stating the resulting size, one read establishes it
//     (Finish); when the outcome is unknown (OutcomeOf: no answer, a 5xx),
//     the group is marked so the next mutation re-reads first, and
//     quarantined: until UnknownOutcomeWindow has passed since the unknown
//     call ended, every mutation of the group is refused with ErrUnavailable
//     (retry later), without a cloud call.
//
// The quarantine exists because all three clouds resize by absolute size: a
// resize the client gave up on can still be applied by the cloud later,
// after a newer one, and the older, smaller size then makes the cloud remove
// instances nobody asked to delete. A fresh read cannot see a request that
// has not landed yet; only waiting until it can no longer land helps.
//
// Only an unknown outcome quarantines: a refusal proves nothing changed, and
// a change applied leaves nothing in flight.
//
// Do runs those steps; providers with several calls per mutation (batched
// removals) use BeginMutation, ReadFirst and Record or Finish directly.
type MutationGuard struct {
	group     string
	lock      chan struct{}
	unknown   atomic.Bool
	unknownAt atomic.Int64 // mutation clock, Unix nanoseconds; 0: none
	attempts  atomic.Uint64
}

// NewMutationGuard returns the guard of the group with id group.
func NewMutationGuard(group string) *MutationGuard {
	return &MutationGuard{group: group, lock: make(chan struct{}, 1)}
}

// Lock takes the group's mutation lock, or gives up when ctx ends.
func (g *MutationGuard) Lock(ctx context.Context) (unlock func(), err error) {
	select {
	case g.lock <- struct{}{}:
		// Counted when taken and when released, so a reader that sampled
		// the count while the mutation ran sees it change afterwards.
		g.attempts.Add(1)
		return func() { g.attempts.Add(1); <-g.lock }, nil
	case <-ctx.Done():
		return nil, Refusal(fmt.Errorf("node group %s: waiting for another change of the group: %w", g.group, ctx.Err()))
	}
}

// BeginMutation takes the group's mutation lock like Lock, then refuses
// while the group is quarantined after an outcome-unknown mutation (see
// MutationGuard); the error wraps ErrUnavailable, which CA receives as
// Unavailable and retries in a later loop.
func (g *MutationGuard) BeginMutation(ctx context.Context) (unlock func(), err error) {
	unlock, err = g.Lock(ctx)
	if err != nil {
		return nil, err
	}
	if err := g.quarantined(); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

func (g *MutationGuard) quarantined() error {
	at := g.unknownAt.Load()
	if at == 0 {
		return nil
	}
	until := time.Unix(0, at).Add(UnknownOutcomeWindow())
	if !mutationNow().Before(until) {
		return nil
	}
	return Refusal(fmt.Errorf("node group %s: an earlier change's outcome is unknown and the cloud may still apply it until %s; no change is sent before then: %w",
		g.group, until.UTC().Format(time.RFC3339), ErrUnavailable))
}

// QuarantinedUntil returns when the group's quarantine after an
// outcome-unknown mutation ends, or the zero time when its mutations are not
// being refused.
func (g *MutationGuard) QuarantinedUntil() time.Time {
	at := g.unknownAt.Load()
	if at == 0 {
		return time.Time{}
	}
	until := time.Unix(0, at).Add(UnknownOutcomeWindow())
	if !mutationNow().Before(until) {
		return time.Time{}
	}
	return until
}

// QuarantineReporter is implemented by node groups whose mutations a
// MutationGuard runs, by delegating to it; the server counts the groups
// currently quarantined for the quarantined-groups metric.
type QuarantineReporter interface {
	// QuarantinedUntil is MutationGuard.QuarantinedUntil of the group.
	QuarantinedUntil() time.Time
}

// Attempts counts the mutations that took the lock, whatever their outcome:
// a refresh that reuses earlier reads compares it to tell that the group
// may have changed, even when the answer was lost.
func (g *MutationGuard) Attempts() uint64 { return g.attempts.Load() }

// NeedsRead reports whether the previous mutation's outcome is unknown, so
// the next one must re-read the group first.
func (g *MutationGuard) NeedsRead() bool { return g.unknown.Load() }

// Record notes the outcome of a mutating cloud call (OutcomeOf) and returns
// err: an unknown outcome quarantines the group and makes the next mutation
// re-read first; a change applied without its resulting size (SizeUnstated)
// makes the next mutation re-read first, without a quarantine (nothing is
// left in flight); a refusal and a plain success leave the marks alone (a
// fresh read clears them, see Confirmed). Finish also makes that read at
// once.
//
// A mutation answered NotFound also makes the next one re-read first, without
// a quarantine: nothing is left in flight, but the snapshot was wrong about
// the group. The common case is a retried delete whose first answer was lost:
// the retry finds the instance gone, the cloud has already lowered its
// target, and a later delete checked against the old target would take the
// group below min.
func (g *MutationGuard) Record(err error) error {
	switch {
	case err == nil:
	case OutcomeOf(err) == MutationUnknown:
		g.unknown.Store(true)
		g.unknownAt.Store(mutationNow().UnixNano())
	case OutcomeOf(err) == MutationApplied, errors.Is(err, ErrNotFound):
		g.unknown.Store(true)
	}
	return err
}

// Finish records err like Record. When the cloud applied the change but its
// answer does not state the resulting size (SizeUnstated: an empty or
// unusable success body, a size other than asked, an Exoscale operation that
// timed out or finished partly), read re-reads the group at once, so the
// snapshot (TargetSize) holds what the cloud did instead of a guess. A
// success whose only fault was its body (ErrMalformedResponse) then
// returns nil; any other error is returned, the group already re-read. If
// the read fails, the next mutation re-reads first.
func (g *MutationGuard) Finish(ctx context.Context, err error, read func(ctx context.Context) error) error {
	err = g.Record(err)
	if !SizeUnstated(err) {
		return err
	}
	if rerr := read(ctx); rerr != nil {
		return WithOutcome(fmt.Errorf("node group %s: %w; reading the group after the change failed, the next change re-reads it first: %v", g.group, err, rerr), MutationApplied)
	}
	g.Confirmed()
	if errors.Is(err, ErrMalformedResponse) {
		klog.InfoS("Cloud applied a change without stating the resulting size; read the group", "nodeGroup", g.group, "err", err)
		return nil
	}
	return err
}

// ReadFirst re-reads the group with read when the previous mutation left
// its size unknown (NeedsRead), for providers that run their mutation steps
// themselves (batched removals). A failed read refuses the mutation: no
// change was sent.
func (g *MutationGuard) ReadFirst(ctx context.Context, read func(ctx context.Context) error) error {
	if !g.NeedsRead() {
		return nil
	}
	if err := read(ctx); err != nil {
		return Refusal(fmt.Errorf("node group %s: re-read before the change: %w", g.group, err))
	}
	g.Confirmed()
	return nil
}

// Confirmed clears the outcome-unknown mark after a successful fresh read.
func (g *MutationGuard) Confirmed() { g.unknown.Store(false) }

// Mutation is one change of a group run by MutationGuard.Do.
type Mutation struct {
	// Check validates the request against the group's current snapshot. It
	// runs before any cloud call and again after a fresh read.
	Check func() error
	// Shrinks marks a change the cloud applies as an absolute size that is
	// smaller than the cloud's current one; it forces a fresh read.
	Shrinks bool
	// Read re-reads the group from the cloud into the snapshot.
	Read func(ctx context.Context) error
	// Call makes the one cloud call and, when it succeeds, applies the answer
	// to the snapshot (new instances as creating, the new target).
	Call func(ctx context.Context) error
}

// Do runs m under the discipline described on MutationGuard.
func (g *MutationGuard) Do(ctx context.Context, m Mutation) error {
	unlock, err := g.BeginMutation(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := m.Check(); err != nil {
		return Refusal(err)
	}
	if m.Shrinks || g.NeedsRead() {
		if err := m.Read(ctx); err != nil {
			return Refusal(fmt.Errorf("node group %s: re-read before the change: %w", g.group, err))
		}
		g.Confirmed()
		if err := m.Check(); err != nil {
			return Refusal(err)
		}
	}
	return g.Finish(ctx, m.Call(ctx), m.Read)
}
