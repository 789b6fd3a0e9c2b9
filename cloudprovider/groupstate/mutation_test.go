package groupstate

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

// fakeGroup records which steps of a change ran.
type fakeGroup struct {
	reads, calls int
	readErr      error
	callErr      error
	checkErr     error
}

func (f *fakeGroup) read(context.Context) error { f.reads++; return f.readErr }

func (f *fakeGroup) plan(shrinks bool) func() (Plan, error) {
	return func() (Plan, error) {
		return Plan{Shrinks: shrinks, Send: func(ctx context.Context) (Effect, error) {
			cloudhttp.MarkSent(ctx)
			f.calls++
			return Effect{}, f.callErr
		}}, f.checkErr
	}
}

func TestMutationGuardReadsAfterUnknownOutcomeOnly(t *testing.T) {
	ctx := context.Background()
	// No quarantine, so the mutation after the unknown outcome is sent.
	g := newMutationGuard("g", GuardOptions{UnknownOutcomeWindow: NoUnknownOutcomeWindow})
	f := &fakeGroup{callErr: &cloudhttp.APIError{Status: 400, Class: cloudprovider.ErrFailedPrecondition, Outcome: cloudprovider.MutationRefused}}
	_ = g.Do(ctx, f.read, f.plan(false))
	_ = g.Do(ctx, f.read, f.plan(false))
	if f.reads != 0 || f.calls != 2 {
		t.Fatalf("after refusals: reads %d calls %d, want 0 and 2", f.reads, f.calls)
	}
	f.callErr = &cloudhttp.APIError{Status: 503, Class: cloudprovider.ErrUnavailable, Outcome: cloudprovider.MutationUnknown}
	_ = g.Do(ctx, f.read, f.plan(false))
	if !g.unknown.Load() {
		t.Fatal("a 5xx must leave the group needing a fresh read")
	}
	f.callErr = nil
	if err := g.Do(ctx, f.read, f.plan(false)); err != nil {
		t.Fatal(err)
	}
	if f.reads != 1 || g.unknown.Load() {
		t.Fatalf("after an unknown outcome: reads %d, needs read %v; want 1 and false", f.reads, g.unknown.Load())
	}
}

func TestMutationGuardShrinkReadsAndRechecks(t *testing.T) {
	g := newMutationGuard("g", GuardOptions{})
	f := &fakeGroup{}
	checks := 0
	plan := f.plan(true)
	err := g.Do(context.Background(), f.read, func() (Plan, error) {
		checks++
		if checks == 2 {
			return Plan{}, cloudprovider.ErrFailedPrecondition
		}
		return plan()
	})
	if !errors.Is(err, cloudprovider.ErrFailedPrecondition) || f.reads != 1 || f.calls != 0 {
		t.Fatalf("shrink refused after the fresh read: err %v reads %d calls %d", err, f.reads, f.calls)
	}
}

func TestMutationGuardRefusalMakesNoCall(t *testing.T) {
	g := newMutationGuard("g", GuardOptions{})
	f := &fakeGroup{checkErr: cloudprovider.ErrInvalidArgument}
	g.unknown.Store(true)
	if err := g.Do(context.Background(), f.read, f.plan(true)); !errors.Is(err, cloudprovider.ErrInvalidArgument) || f.reads+f.calls != 0 {
		t.Fatalf("err %v reads %d calls %d", err, f.reads, f.calls)
	}
}

func TestMutationGuardFailedReadKeepsMark(t *testing.T) {
	g := newMutationGuard("g", GuardOptions{})
	g.unknown.Store(true)
	f := &fakeGroup{readErr: &cloudhttp.APIError{Status: 500, Class: cloudprovider.ErrUnavailable, Outcome: cloudprovider.MutationUnknown}}
	if err := g.Do(context.Background(), f.read, f.plan(false)); !errors.Is(err, cloudprovider.ErrUnavailable) || f.calls != 0 || !g.unknown.Load() {
		t.Fatalf("err %v calls %d needsRead %v", err, f.calls, g.unknown.Load())
	}
}

func TestMutationGuardLockHonoursDeadline(t *testing.T) {
	g := newMutationGuard("g", GuardOptions{})
	unlock, err := g.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := g.Lock(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock = %v, want DeadlineExceeded", err)
	}
}

// A NotFound answer (a retried delete finding the instance gone) leaves the
// snapshot's target wrong but nothing in flight: the next mutation re-reads
// and is not quarantined.
func TestMutationGuardNotFoundReadsWithoutQuarantine(t *testing.T) {
	ctx := context.Background()
	g := newMutationGuard("g", GuardOptions{})
	f := &fakeGroup{callErr: &cloudhttp.APIError{Status: 404, Class: cloudprovider.ErrNotFound, Outcome: cloudprovider.MutationRefused}}
	_ = g.Do(ctx, f.read, f.plan(false))
	if !g.unknown.Load() {
		t.Fatal("a NotFound answer must make the next mutation re-read")
	}
	f.callErr = nil
	if err := g.Do(ctx, f.read, f.plan(false)); err != nil {
		t.Fatalf("mutation after a NotFound answer: %v (quarantined?)", err)
	}
	if f.reads != 1 || g.unknown.Load() {
		t.Fatalf("after a NotFound answer: reads %d, needs read %v; want 1 and false", f.reads, g.unknown.Load())
	}
}

// A success whose body does not state the resulting size: one read
// establishes it at once, the call succeeds, nothing is quarantined.
func TestMutationGuardAppliedWithoutSizeReadsOnce(t *testing.T) {
	ctx := context.Background()
	g := newMutationGuard("g", GuardOptions{})
	f := &fakeGroup{callErr: cloudhttp.MalformedAnswer("c", "PATCH /pools/{id}", 200, "empty body")}
	if err := g.Do(ctx, f.read, f.plan(false)); err != nil {
		t.Fatalf("applied change with an empty answer: %v, want success after the read", err)
	}
	if f.reads != 1 || g.unknown.Load() {
		t.Fatalf("reads %d, needs read %v; want 1 and false", f.reads, g.unknown.Load())
	}
	f.callErr = nil
	if err := g.Do(ctx, f.read, f.plan(false)); err != nil || f.calls != 2 {
		t.Fatalf("next mutation: %v, calls %d; want no quarantine", err, f.calls)
	}
}

// An applied change that still failed (an operation that timed out) is
// re-read at once and returned; a failed read leaves the mark, not a
// quarantine.
func TestMutationGuardAppliedErrorIsReturnedAfterTheRead(t *testing.T) {
	ctx := context.Background()
	g := newMutationGuard("g", GuardOptions{})
	timedOut := cloudprovider.WithOutcome(errors.New("operation ended in timeout"), cloudprovider.MutationApplied)
	f := &fakeGroup{callErr: timedOut}
	if err := g.Do(ctx, f.read, f.plan(false)); !errors.Is(err, timedOut) || f.reads != 1 || g.unknown.Load() {
		t.Fatalf("err %v reads %d needsRead %v; want the error, one read, no mark", err, f.reads, g.unknown.Load())
	}
	f.readErr = &cloudhttp.APIError{Status: 503, Class: cloudprovider.ErrUnavailable, Outcome: cloudprovider.MutationUnknown}
	err := g.Do(ctx, f.read, f.plan(false))
	if cloudprovider.OutcomeOf(err) != cloudprovider.MutationApplied || !g.unknown.Load() {
		t.Fatalf("read failed after an applied change: err %v (outcome %s), needs read %v; want applied and the mark", err, cloudprovider.OutcomeOf(err), g.unknown.Load())
	}
	f.readErr, f.callErr = nil, nil
	if err := g.Do(ctx, f.read, f.plan(false)); err != nil {
		t.Fatalf("next mutation: %v, want no quarantine", err)
	}
}

// Every refusal the guard makes itself (a failed check, a failed read
// before the change, the quarantine) reads as refused: nothing was sent.
func TestMutationGuardOwnRefusalsAreRefused(t *testing.T) {
	ctx := context.Background()
	g := newMutationGuard("g", GuardOptions{})
	f := &fakeGroup{checkErr: errors.New("beyond max")}
	if err := g.Do(ctx, f.read, f.plan(false)); cloudprovider.OutcomeOf(err) != cloudprovider.MutationRefused {
		t.Fatalf("failed check: %v reads as %s", err, cloudprovider.OutcomeOf(err))
	}
	g.unknown.Store(true)
	f = &fakeGroup{readErr: &cloudhttp.APIError{Status: 503, Class: cloudprovider.ErrUnavailable, Outcome: cloudprovider.MutationUnknown}}
	if err := g.Do(ctx, f.read, f.plan(false)); cloudprovider.OutcomeOf(err) != cloudprovider.MutationRefused || f.calls != 0 {
		t.Fatalf("failed read before the change: %v reads as %s, calls %d", err, cloudprovider.OutcomeOf(err), f.calls)
	}
}

// TestMutationGuardPlanFromFreshState: a shrink is planned again from the
// state the fresh read left, so the call sends what that state asks for,
// not what the first plan computed from the snapshot.
func TestMutationGuardPlanFromFreshState(t *testing.T) {
	g := newMutationGuard("g", GuardOptions{})
	target, sent := 5, -1
	err := g.Do(context.Background(), func(context.Context) error { target = 6; return nil }, func() (Plan, error) {
		want := target - 1
		return Plan{Shrinks: true, Send: func(context.Context) (Effect, error) { sent = want; return Effect{}, nil }}, nil
	})
	if err != nil || sent != 5 {
		t.Fatalf("err %v, sent %d; want the size planned from the fresh target 6, 5", err, sent)
	}
}

// TestTxnShrinkAlwaysReadsFirst: an absolute-size step of a transaction
// re-reads the group even when nothing marked it, and only once when no
// call was sent since; a step sent in between makes the next one read
// again.
func TestTxnShrinkAlwaysReadsFirst(t *testing.T) {
	g := newMutationGuard("g", GuardOptions{})
	reads, calls := 0, 0
	call := func(context.Context) (Effect, error) { calls++; return Effect{}, nil }
	plan := func() (Plan, error) { return Plan{Send: call}, nil }
	err := g.Transact(context.Background(), func(context.Context) error { reads++; return nil }, func(tx *Txn) error {
		if err := tx.Shrink(plan); err != nil || reads != 1 {
			return fmt.Errorf("first shrink: err %v, reads %d; want one read", err, reads)
		}
		if err := tx.Step(plan); err != nil || reads != 1 {
			return fmt.Errorf("relative step: err %v, reads %d; want no read", err, reads)
		}
		if err := tx.Shrink(plan); err != nil || reads != 2 {
			return fmt.Errorf("shrink after a call: err %v, reads %d; want a second read", err, reads)
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v, calls %d; want 3 calls", err, calls)
	}
}

// TestTxnShrinkFailedReadSendsNothing: a failed fresh read refuses the
// absolute-size step without a call.
func TestTxnShrinkFailedReadSendsNothing(t *testing.T) {
	g := newMutationGuard("g", GuardOptions{})
	calls := 0
	err := g.Transact(context.Background(), func(context.Context) error { return errors.New("read failed") }, func(tx *Txn) error {
		return tx.Shrink(func() (Plan, error) {
			return Plan{Send: func(context.Context) (Effect, error) { calls++; return Effect{}, nil }}, nil
		})
	})
	if cloudprovider.OutcomeOf(err) != cloudprovider.MutationRefused || calls != 0 {
		t.Fatalf("err %v (outcome %s), calls %d; want a refusal and no call", err, cloudprovider.OutcomeOf(err), calls)
	}
}

func TestUnknownOutcomeWindowIsTheCallLifetime(t *testing.T) {
	t.Parallel()
	if DefaultUnknownOutcomeWindow != cloudhttp.CallLifetime {
		t.Fatal("the quarantine window is the cloud call's lifetime")
	}
}
