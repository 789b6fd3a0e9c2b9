package cloudprovider

import (
	"context"
	"fmt"
	"sync/atomic"
)

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
//  5. the answer is applied to the snapshot, or, when the outcome is
//     unknown, the group is marked so the next mutation re-reads first.
//
// Do runs those steps; providers with several calls per mutation (batched
// removals) use Lock, NeedsRead and Record directly.
type MutationGuard struct {
	group    string
	lock     chan struct{}
	unknown  atomic.Bool
	attempts atomic.Uint64
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
		return nil, fmt.Errorf("node group %s: waiting for another change of the group: %w", g.group, ctx.Err())
	}
}

// Attempts counts the mutations that took the lock, whatever their outcome:
// a refresh that reuses earlier reads compares it to tell that the group
// may have changed, even when the answer was lost.
func (g *MutationGuard) Attempts() uint64 { return g.attempts.Load() }

// NeedsRead reports whether the previous mutation's outcome is unknown, so
// the next one must re-read the group first.
func (g *MutationGuard) NeedsRead() bool { return g.unknown.Load() }

// Record notes the outcome of a mutating cloud call and returns err: an
// outcome-unknown error makes the next mutation re-read first; success
// leaves that mark alone (a fresh read clears it, see Confirmed).
func (g *MutationGuard) Record(err error) error {
	if OutcomeUnknown(err) {
		g.unknown.Store(true)
	}
	return err
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
	unlock, err := g.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := m.Check(); err != nil {
		return err
	}
	if m.Shrinks || g.NeedsRead() {
		if err := m.Read(ctx); err != nil {
			return fmt.Errorf("node group %s: re-read before the change: %w", g.group, err)
		}
		g.Confirmed()
		if err := m.Check(); err != nil {
			return err
		}
	}
	return g.Record(m.Call(ctx))
}
