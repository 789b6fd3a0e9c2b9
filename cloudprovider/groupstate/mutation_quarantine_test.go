package groupstate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// countingMutation counts the reads and cloud calls a change makes.
type countingMutation struct {
	reads, calls int
	callErr      error
}

func (c *countingMutation) read(context.Context) error { c.reads++; return nil }

func (c *countingMutation) plan() (groupstate.Plan, error) {
	return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) {
		cloudhttp.MarkSent(ctx)
		c.calls++
		return groupstate.Effect{}, c.callErr
	}}, nil
}

func TestMutationGuardQuarantinesAfterUnknownOutcome(t *testing.T) {
	clock := cloudprovidertest.MutationClock()
	ctx := context.Background()
	g := groupstate.NewGuard("g", cloudprovidertest.GuardOptions(clock))
	m := &countingMutation{callErr: context.DeadlineExceeded}
	_ = g.Do(ctx, m.read, m.plan)
	m.callErr = nil

	clock.Advance(groupstate.DefaultUnknownOutcomeWindow - time.Second)
	err := g.Do(ctx, m.read, m.plan)
	if !errors.Is(err, cloudprovider.ErrUnavailable) || m.calls != 1 || m.reads != 0 {
		t.Fatalf("inside the window: err %v, calls %d, reads %d; want ErrUnavailable and no read or call", err, m.calls, m.reads)
	}
	body := false
	if err := g.Transact(ctx, nil, func(*groupstate.Txn) error { body = true; return nil }); !errors.Is(err, cloudprovider.ErrUnavailable) || body {
		t.Fatalf("Transact inside the window = %v (body ran: %v), want ErrUnavailable and no body", err, body)
	}
	// The lock is free again after a refusal.
	unlock, err := g.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unlock()

	cloudprovidertest.PassUnknownOutcomeWindow(clock)
	if err := g.Do(ctx, m.read, m.plan); err != nil {
		t.Fatal(err)
	}
	if m.reads != 1 || m.calls != 2 {
		t.Fatalf("after the window: reads %d calls %d, want the fresh read first, then the call", m.reads, m.calls)
	}
}

func TestMutationGuardRefusalIsNotQuarantined(t *testing.T) {
	ctx := context.Background()
	g := groupstate.NewGuard("g", cloudprovidertest.GuardOptions(cloudprovidertest.MutationClock()))
	m := &countingMutation{callErr: &cloudhttp.APIError{Status: 400, Class: cloudprovider.ErrInvalidArgument, Outcome: cloudprovider.MutationRefused}}
	_ = g.Do(ctx, m.read, m.plan)
	m.callErr = nil
	if err := g.Do(ctx, m.read, m.plan); err != nil || m.calls != 2 {
		t.Fatalf("after a refusal the cloud answered: err %v, calls %d; want no quarantine", err, m.calls)
	}
}

func TestUnknownOutcomeWindowZeroOnlyReReads(t *testing.T) {
	ctx := context.Background()
	g := groupstate.NewGuard("g", groupstate.GuardOptions{
		Now: cloudprovidertest.MutationClock().Now, UnknownOutcomeWindow: groupstate.NoUnknownOutcomeWindow,
	})
	m := &countingMutation{callErr: context.DeadlineExceeded}
	_ = g.Do(ctx, m.read, m.plan)
	m.callErr = nil
	if err := g.Do(ctx, m.read, m.plan); err != nil || m.reads != 1 {
		t.Fatalf("window 0: err %v, reads %d; want the fresh read and the call", err, m.reads)
	}
}

// TestCallThatSentNothingIsRefused: an error made before any request left
// (a check in the thin client) is refused by construction, even when it
// states no outcome or an unknown one, and quarantines nothing; the same
// error after a request left is unknown and quarantines.
func TestCallThatSentNothingIsRefused(t *testing.T) {
	t.Parallel()
	for _, callErr := range []error{
		cloudprovider.ErrInvalidArgument,
		cloudhttp.NoAnswer("c", "PATCH /pools/{id}", errors.New("token source: file gone")),
	} {
		clock := cloudprovidertest.MutationClock()
		g := groupstate.NewGuard("g", cloudprovidertest.GuardOptions(clock))
		unsent := func() (groupstate.Plan, error) {
			return groupstate.Plan{Send: func(context.Context) (groupstate.Effect, error) { return groupstate.Effect{}, callErr }}, nil
		}
		err := g.Do(context.Background(), func(context.Context) error { return nil }, unsent)
		if got := cloudprovider.OutcomeOf(err); got != cloudprovider.MutationRefused || !g.QuarantinedUntil().IsZero() {
			t.Fatalf("%v without a request: outcome %s, quarantined until %s; want refused and no quarantine", callErr, got, g.QuarantinedUntil())
		}
		sent := &countingMutation{callErr: callErr}
		err = g.Do(context.Background(), sent.read, sent.plan)
		if got := cloudprovider.OutcomeOf(err); got != cloudprovider.MutationUnknown || g.QuarantinedUntil().IsZero() {
			t.Fatalf("%v after a request: outcome %s, quarantined until %s; want unknown and a quarantine", callErr, got, g.QuarantinedUntil())
		}
	}
}

// TestTransactionThatSentNothingIsRefused: an error a transaction's body
// makes before any step sent a request is refused.
func TestTransactionThatSentNothingIsRefused(t *testing.T) {
	t.Parallel()
	g := groupstate.NewGuard("g", groupstate.GuardOptions{})
	err := g.Transact(context.Background(), nil, func(*groupstate.Txn) error { return errors.New("resolve nodes: bad label") })
	if got := cloudprovider.OutcomeOf(err); got != cloudprovider.MutationRefused {
		t.Fatalf("outcome %s, want refused", got)
	}
}
