package groupstate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

func newTestLedger() (*Ledger, *fakecloud.ManualClock) {
	clock := fakecloud.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return NewLedger(GuardOptions{Now: clock.Now}, clock.Now), clock
}

func mutate(t *testing.T, l *Ledger, group string, during func(), result error) error {
	t.Helper()
	return l.guard(group).Do(context.Background(), func(context.Context) error { return nil }, func() (Plan, error) {
		return Plan{Send: func(ctx context.Context) (Effect, error) {
			cloudhttp.MarkSent(ctx)
			if during != nil {
				during()
			}
			return Effect{}, result
		}}, nil
	})
}

func TestLedgerListingOlderThanMutationIsOvertaken(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	before := l.Begin()
	if l.reconcile(before, "g", groupListing{holds: func(string) bool { return false }, unfilled: -1}) {
		t.Fatal("a listing with no mutation since must be served")
	}
	if err := mutate(t, l, "g", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !l.overtaken(before, "g") {
		t.Error("a listing that began before an accepted mutation must not overwrite it")
	}
	if l.overtaken(before, "other") {
		t.Error("a mutation of one group overtook another group's listing")
	}
	if l.overtaken(l.Begin(), "g") {
		t.Error("a listing that began after the mutation ended must be served")
	}
}

func TestLedgerListingDuringMutationIsOvertaken(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	var during Listing
	var inflight bool
	if err := mutate(t, l, "g", func() {
		during = l.Begin()
		inflight = l.overtaken(during, "g")
	}, nil); err != nil {
		t.Fatal(err)
	}
	if !inflight {
		t.Error("a listing installed while a mutation is in flight must keep the size served")
	}
	if !l.overtaken(during, "g") {
		t.Error("a listing that began while the mutation was in flight must not overwrite it once it ended")
	}
}

func TestLedgerRefusedMutationDoesNotOvertake(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	before := l.Begin()
	refused := cloudprovider.Refusal(errors.New("no"))
	if err := mutate(t, l, "g", nil, refused); err == nil {
		t.Fatal("the refusal was lost")
	}
	if l.overtaken(before, "g") {
		t.Error("a refused mutation changed nothing, so the listing must be served")
	}
	unknown := errors.New("connection reset")
	before = l.Begin()
	_ = mutate(t, l, "g", nil, unknown)
	if !l.overtaken(before, "g") {
		t.Error("a mutation the cloud may have applied must overtake an older listing")
	}
}

func TestLedgerSeqOrdersOwnCalls(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	first := l.seqNow()
	_ = mutate(t, l, "g", nil, nil)
	listing := l.Begin()
	if !listing.after(first) {
		t.Error("a call whose sequence was taken before an earlier mutation ended precedes the listing")
	}
	if listing.after(l.seqNow()) {
		t.Error("a call sent after the listing began cannot precede it")
	}
}

func TestLedgerReconcileEndsDeletingAndSetsSlots(t *testing.T) {
	t.Parallel()
	l, clock := newTestLedger()
	l.group("g").deleting.add("a", "b")
	listing := l.Begin()
	l.reconcile(listing, "g", groupListing{holds: func(id string) bool { return id == "a" }, unfilled: 2,
		failure: &cloudprovider.InstanceErrorInfo{ErrorCode: "QUOTA"}})
	if !l.group("g").deleting.holds("a") || l.group("g").deleting.holds("b") {
		t.Errorf("deleting after a listing holding only a: a=%v b=%v, want true false", l.group("g").deleting.holds("a"), l.group("g").deleting.holds("b"))
	}
	if got := l.group("g").failed.len(); got != 2 {
		t.Errorf("failed slots = %d, want 2", got)
	}
	clock.Advance(DeletingGrace)
	l.reconcile(l.Begin(), "g", groupListing{holds: func(string) bool { return true }, unfilled: -1})
	if l.group("g").deleting.holds("a") {
		t.Error("a removal still listed live after the grace must end")
	}
	if got := l.group("g").failed.len(); got != 2 {
		t.Errorf("a listing that says nothing of failures changed the slots to %d", got)
	}
	older := l.Begin()
	if err := mutate(t, l, "g", nil, nil); err != nil {
		t.Fatal(err)
	}
	l.reconcile(older, "g", groupListing{holds: func(string) bool { return true }, unfilled: 5})
	if got := l.group("g").failed.len(); got != 2 {
		t.Errorf("a listing older than a mutation set the failed slots to %d, want them kept at 2", got)
	}
}

func TestLedgerForgetKeepsBusyGroups(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.guard("gone")
	l.group("gone").deleting.add("x")
	unlock, err := g.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.forget(func(string) bool { return false })
	if l.guard("gone") != g {
		t.Error("a group mid-change lost its guard")
	}
	unlock()
	l.forget(func(string) bool { return false })
	if l.guard("gone") == g || l.group("gone").deleting.holds("x") {
		t.Error("an unmanaged group's state stayed")
	}
}

func TestFailedSlots(t *testing.T) {
	t.Parallel()
	clock := fakecloud.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := newFailedSlots(clock.Now)
	f.set(3, nil)
	first := f.list()
	f.set(2, nil)
	got := f.list()
	if len(got) != 2 || got[0].N != first[0].N || got[1].N != first[1].N {
		t.Fatalf("after the cloud filled one of three slots: %+v, want the two oldest of %+v", got, first)
	}
	f.drop(got[0].N)
	if f.holds(got[0].N) || !f.holds(got[1].N) {
		t.Error("Drop ended the wrong slot")
	}
	f.add(1, nil)
	if f.len() != 2 {
		t.Fatalf("len = %d, want 2", f.len())
	}
	f.set(0, nil)
	if f.len() != 1 {
		t.Errorf("a listing with no unfilled slots must leave an operation's slots: len %d, want 1", f.len())
	}
	clock.Advance(2 * time.Hour)
	f.prune(time.Hour)
	if f.len() != 0 {
		t.Errorf("an operation's slot older than the bound stayed")
	}
	f.set(1, nil)
	if n := f.list()[0].N; n <= got[1].N+1 {
		t.Errorf("slot number %d repeats an earlier one", n)
	}
}

func TestLedgerFreshReadOvertakesOlderListing(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	before := l.Begin()
	// A shrink re-reads first; its plan refuses after the read, so no call
	// is sent, but the read installed newer state than the listing's.
	err := l.guard("g").Do(context.Background(), func(context.Context) error { return errors.New("cloud down") }, func() (Plan, error) {
		return Plan{Shrinks: true, Send: func(context.Context) (Effect, error) { return Effect{}, nil }}, nil
	})
	if err == nil {
		t.Fatal("a failed re-read must refuse the shrink")
	}
	if l.overtaken(before, "g") {
		t.Error("a failed read installed nothing, yet overtook the listing")
	}
	reads := 0
	err = l.guard("g").Transact(context.Background(), func(context.Context) error { reads++; return nil }, func(tx *Txn) error {
		return tx.Shrink(func() (Plan, error) { return Plan{}, nil })
	})
	if err != nil || reads != 1 {
		t.Fatalf("Shrink: err %v, reads %d, want nil and 1", err, reads)
	}
	if !l.overtaken(before, "g") {
		t.Error("a listing that began before a mutation's fresh read must not overwrite what the read installed")
	}
	if l.overtaken(l.Begin(), "g") {
		t.Error("a listing that began after the read must be served")
	}
	var during Listing
	var racing bool
	err = l.guard("g").Transact(context.Background(), func(context.Context) error {
		during = l.Begin()
		racing = l.overtaken(during, "g")
		return nil
	}, func(tx *Txn) error {
		return tx.Shrink(func() (Plan, error) { return Plan{}, nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	if !racing {
		t.Error("a listing racing with a fresh read was served while the read installed its state")
	}
	if !l.overtaken(during, "g") {
		t.Error("a listing that began during a fresh read must not overwrite what the read installed")
	}
}

func TestLedgerFreshInstallsWhatAMutationReads(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	l.group("g").deleting.add("a", "b")
	err := l.guard("g").Transact(context.Background(), func(context.Context) error {
		// The provider's read: in flight for the ledger, yet installed.
		l.fresh("g", groupListing{holds: func(id string) bool { return id == "a" }, unfilled: 1})
		return nil
	}, func(tx *Txn) error { return tx.Shrink(func() (Plan, error) { return Plan{}, nil }) })
	if err != nil {
		t.Fatal(err)
	}
	if !l.group("g").deleting.holds("a") || l.group("g").deleting.holds("b") {
		t.Error("a fresh read must end the Deleting state of what it no longer holds, and only that")
	}
	if got := l.group("g").failed.len(); got != 1 {
		t.Errorf("failed slots after a fresh read reporting 1 = %d", got)
	}
}
