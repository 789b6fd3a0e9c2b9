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
	f := &fakeGroup{callErr: &APIError{Status: 400, Class: ErrFailedPrecondition}}
	_ = g.Do(ctx, f.mutation(false))
	_ = g.Do(ctx, f.mutation(false))
	if f.reads != 0 || f.calls != 2 {
		t.Fatalf("after refusals: reads %d calls %d, want 0 and 2", f.reads, f.calls)
	}
	f.callErr = &APIError{Status: 503, Class: ErrUnavailable}
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
	f := &fakeGroup{readErr: &APIError{Status: 500, Class: ErrUnavailable}}
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
	f := &fakeGroup{callErr: &APIError{Status: 404, Class: ErrNotFound}}
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
