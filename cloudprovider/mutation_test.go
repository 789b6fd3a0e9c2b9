package cloudprovider

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeGroup records which steps of a Mutation ran.
type fakeGroup struct {
	reads, calls int
	readErr      error
	callErr      error
	checkErr     error
}

func (f *fakeGroup) mutation(shrinks bool) Mutation {
	return Mutation{
		Check:   func() error { return f.checkErr },
		Shrinks: shrinks,
		Read:    func(context.Context) error { f.reads++; return f.readErr },
		Call:    func(context.Context) error { f.calls++; return f.callErr },
	}
}

func TestMutationGuardReadsAfterUnknownOutcomeOnly(t *testing.T) {
	ctx := context.Background()
	g := NewMutationGuard("g")
	f := &fakeGroup{callErr: &APIError{Status: 400, Class: ErrFailedPrecondition, Outcome: MutationRefused}}
	_ = g.Do(ctx, f.mutation(false))
	_ = g.Do(ctx, f.mutation(false))
	if f.reads != 0 || f.calls != 2 {
		t.Fatalf("after refusals: reads %d calls %d, want 0 and 2", f.reads, f.calls)
	}
	f.callErr = &APIError{Status: 503, Class: ErrUnavailable, Outcome: MutationUnknown}
	_ = g.Do(ctx, f.mutation(false))
	if !g.NeedsRead() {
		t.Fatal("a 5xx must leave the group needing a fresh read")
	}
	f.callErr = nil
	SetUnknownOutcomeWindow(0)
	defer SetUnknownOutcomeWindow(DefaultUnknownOutcomeWindow)
	if err := g.Do(ctx, f.mutation(false)); err != nil {
		t.Fatal(err)
	}
	if f.reads != 1 || g.NeedsRead() {
		t.Fatalf("after an unknown outcome: reads %d, needs read %v; want 1 and false", f.reads, g.NeedsRead())
	}
}

func TestMutationGuardShrinkReadsAndRechecks(t *testing.T) {
	g := NewMutationGuard("g")
	f := &fakeGroup{}
	checks := 0
	m := f.mutation(true)
	m.Check = func() error {
		checks++
		if checks == 2 {
			return ErrFailedPrecondition
		}
		return nil
	}
	err := g.Do(context.Background(), m)
	if !errors.Is(err, ErrFailedPrecondition) || f.reads != 1 || f.calls != 0 {
		t.Fatalf("shrink refused after the fresh read: err %v reads %d calls %d", err, f.reads, f.calls)
	}
}

func TestMutationGuardRefusalMakesNoCall(t *testing.T) {
	g := NewMutationGuard("g")
	f := &fakeGroup{checkErr: ErrInvalidArgument}
	g.unknown.Store(true)
	if err := g.Do(context.Background(), f.mutation(true)); !errors.Is(err, ErrInvalidArgument) || f.reads+f.calls != 0 {
		t.Fatalf("err %v reads %d calls %d", err, f.reads, f.calls)
	}
}

func TestMutationGuardFailedReadKeepsMark(t *testing.T) {
	g := NewMutationGuard("g")
	g.unknown.Store(true)
	f := &fakeGroup{readErr: &APIError{Status: 500, Class: ErrUnavailable, Outcome: MutationUnknown}}
	if err := g.Do(context.Background(), f.mutation(false)); !errors.Is(err, ErrUnavailable) || f.calls != 0 || !g.NeedsRead() {
		t.Fatalf("err %v calls %d needsRead %v", err, f.calls, g.NeedsRead())
	}
}

func TestMutationGuardLockHonoursDeadline(t *testing.T) {
	g := NewMutationGuard("g")
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
	g := NewMutationGuard("g")
	f := &fakeGroup{callErr: &APIError{Status: 404, Class: ErrNotFound, Outcome: MutationRefused}}
	_ = g.Do(ctx, f.mutation(false))
	if !g.NeedsRead() {
		t.Fatal("a NotFound answer must make the next mutation re-read")
	}
	f.callErr = nil
	if err := g.Do(ctx, f.mutation(false)); err != nil {
		t.Fatalf("mutation after a NotFound answer: %v (quarantined?)", err)
	}
	if f.reads != 1 || g.NeedsRead() {
		t.Fatalf("after a NotFound answer: reads %d, needs read %v; want 1 and false", f.reads, g.NeedsRead())
	}
}

// A success whose body does not state the resulting size: one read
// establishes it at once, the call succeeds, nothing is quarantined.
func TestMutationGuardAppliedWithoutSizeReadsOnce(t *testing.T) {
	ctx := context.Background()
	g := NewMutationGuard("g")
	f := &fakeGroup{callErr: MalformedAnswer("c", "PATCH /pools/{id}", 200, "empty body")}
	if err := g.Do(ctx, f.mutation(false)); err != nil {
		t.Fatalf("applied change with an empty answer: %v, want success after the read", err)
	}
	if f.reads != 1 || g.NeedsRead() {
		t.Fatalf("reads %d, needs read %v; want 1 and false", f.reads, g.NeedsRead())
	}
	f.callErr = nil
	if err := g.Do(ctx, f.mutation(false)); err != nil || f.calls != 2 {
		t.Fatalf("next mutation: %v, calls %d; want no quarantine", err, f.calls)
	}
}

// An applied change that still failed (an operation that timed out) is
// re-read at once and returned; a failed read leaves the mark, not a
// quarantine.
func TestMutationGuardAppliedErrorIsReturnedAfterTheRead(t *testing.T) {
	ctx := context.Background()
	g := NewMutationGuard("g")
	timedOut := WithOutcome(errors.New("operation ended in timeout"), MutationApplied)
	f := &fakeGroup{callErr: timedOut}
	if err := g.Do(ctx, f.mutation(false)); !errors.Is(err, timedOut) || f.reads != 1 || g.NeedsRead() {
		t.Fatalf("err %v reads %d needsRead %v; want the error, one read, no mark", err, f.reads, g.NeedsRead())
	}
	f.readErr = &APIError{Status: 503, Class: ErrUnavailable, Outcome: MutationUnknown}
	err := g.Do(ctx, f.mutation(false))
	if OutcomeOf(err) != MutationApplied || !g.NeedsRead() {
		t.Fatalf("read failed after an applied change: err %v (outcome %s), needs read %v; want applied and the mark", err, OutcomeOf(err), g.NeedsRead())
	}
	f.readErr, f.callErr = nil, nil
	if err := g.Do(ctx, f.mutation(false)); err != nil {
		t.Fatalf("next mutation: %v, want no quarantine", err)
	}
}

// Every refusal the guard makes itself (a failed check, a failed read
// before the change, the quarantine) reads as refused: nothing was sent.
func TestMutationGuardOwnRefusalsAreRefused(t *testing.T) {
	ctx := context.Background()
	g := NewMutationGuard("g")
	f := &fakeGroup{checkErr: errors.New("beyond max")}
	if err := g.Do(ctx, f.mutation(false)); OutcomeOf(err) != MutationRefused {
		t.Fatalf("failed check: %v reads as %s", err, OutcomeOf(err))
	}
	g.unknown.Store(true)
	f = &fakeGroup{readErr: &APIError{Status: 503, Class: ErrUnavailable, Outcome: MutationUnknown}}
	if err := g.Do(ctx, f.mutation(false)); OutcomeOf(err) != MutationRefused || f.calls != 0 {
		t.Fatalf("failed read before the change: %v reads as %s, calls %d", err, OutcomeOf(err), f.calls)
	}
}
