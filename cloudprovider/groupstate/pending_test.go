package groupstate

import (
	"context"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// accept runs one change of g that the cloud accepts with effect.
func accept(t *testing.T, g *Group, effect Effect) {
	t.Helper()
	if err := send(g, effect, nil); err != nil {
		t.Fatal(err)
	}
}

// pending returns an effect that resizes to n and leaves operation id pending.
func pending(id string, n int, deleting ...string) Effect {
	e := Resize(n)
	e.Deleting = deleting
	e.Pending = &Operation{ID: id, Data: "record of " + id}
	return e
}

// results answers settling from a table; an operation it lacks stays
// pending. asked records which operations were asked about.
func results(table map[string]OperationResult, asked *[]string) Settling {
	return Settling{MaxAge: time.Hour, Result: func(op Operation) OperationResult {
		*asked = append(*asked, op.ID)
		return table[op.ID]
	}}
}

func pendingIDs(g *Group) []string {
	var ids []string
	for _, op := range g.Pending() {
		ids = append(ids, op.ID)
	}
	return ids
}

func slotID(n int) string { return "slot-" + string(rune('0'+n)) }

// TestInstallSettlingUndoesAFailedOperation: an operation keeps what it
// changed; a listing that shows it failed moves the target back by that
// change, gives up its Deleting, and adds a failed increase's slots, while
// the operations still pending keep the target asked for.
func TestInstallSettlingUndoesAFailedOperation(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", slotID, true)
	g.Install(l.Begin(), View{Min: 1, Max: 9, Target: 3, Instances: running("a", "b", "c"), Unfilled: -1}, Settling{})
	accept(t, g, pending("up", 5))
	accept(t, g, pending("evict", 4, "c"))
	ops := g.Pending()
	if len(ops) != 2 || ops[0].Change != 2 || ops[1].Change != -1 || len(ops[1].Deleting) != 1 || ops[1].Data != "record of evict" {
		t.Fatalf("pending after a scale 3->5 and an eviction of c = %+v, want changes +2 and -1, c deleting, the provider's data", ops)
	}
	if !ops[0].Submitted.Equal(l.now()) || ops[0].Seq >= ops[1].Seq {
		t.Fatalf("operations not stamped by the ledger in order: %+v", ops)
	}

	info := &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OutOfResourcesErrorClass, ErrorCode: "no-capacity"}
	var asked []string
	listed := View{Min: 1, Max: 9, Target: 3, Instances: running("a", "b", "c"), Unfilled: -1}
	if g.Install(l.Begin(), listed, results(map[string]OperationResult{"up": {Done: true, Failed: true, Info: info}}, &asked)) {
		t.Fatal("a listing newer than every change kept the size")
	}
	if got := pendingIDs(g); len(got) != 1 || got[0] != "evict" || len(asked) != 2 {
		t.Fatalf("pending %v after asking %v, want the eviction left after asking both", got, asked)
	}
	// 4 asked, less the failed +2, plus the 2 failed slots outside the size.
	if got, slots := g.Target(), g.failed().len(); got != 4 || slots != 2 {
		t.Fatalf("target %d with %d failed slots, want 4 and 2", got, slots)
	}
	if st := states(g); st["c"] != "deleting" || st[slotID(1)] != "creating+error" {
		t.Fatalf("nodes %v, want c Deleting and the failed slots shown as failed creations", st)
	}

	asked = nil
	listed.Target = 3
	g.Install(l.Begin(), listed, results(map[string]OperationResult{"evict": {Done: true, Failed: true}}, &asked))
	if got := g.Pending(); len(got) != 0 {
		t.Fatalf("pending %v after the eviction failed", got)
	}
	// None pending: the listed size is served, plus the failed slots.
	if got := g.Target(); got != 5 {
		t.Fatalf("target %d once settled, want the listed 3 plus 2 failed slots", got)
	}
	if st := states(g); st["c"] == "deleting" {
		t.Fatalf("c still Deleting after its eviction failed: %v", st)
	}
}

// TestInstallSettlingAsksOnlyOfOperationsAnsweredBeforeTheListing: a
// listing that began before the cloud answered an operation may not show
// it, so it does not settle it.
func TestInstallSettlingAsksOnlyOfOperationsAnsweredBeforeTheListing(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, true)
	g.Install(l.Begin(), View{Min: 1, Max: 9, Target: 3, Instances: running("a", "b", "c"), Unfilled: -1}, Settling{})
	older := l.Begin()
	accept(t, g, pending("up", 5))
	if got, newer := g.Settleable(older), g.Settleable(l.Begin()); len(got) != 0 || len(newer) != 1 || newer[0].ID != "up" {
		t.Fatalf("Settleable: older listing %v, newer %v; want none and up", got, newer)
	}
	var asked []string
	g.Install(older, View{Min: 1, Max: 9, Target: 3, Unfilled: -1}, results(map[string]OperationResult{"up": {Done: true}}, &asked))
	if len(asked) != 0 || len(g.Pending()) != 1 || g.Target() != 5 {
		t.Fatalf("older listing asked %v, left %v pending, target %d; want nothing asked, the operation pending, target 5", asked, pendingIDs(g), g.Target())
	}
	g.Install(l.Begin(), View{Min: 1, Max: 9, Target: 5, Unfilled: -1}, results(map[string]OperationResult{"up": {Done: true}}, &asked))
	if len(asked) != 1 || len(g.Pending()) != 0 || g.Target() != 5 {
		t.Fatalf("newer listing asked %v, left %v pending, target %d; want it asked and settled at 5", asked, pendingIDs(g), g.Target())
	}
}

// TestInstallSettlingOvertakenDropsOnlyStale: a listing a change overtook
// keeps the size served and settles no operation, except one pending past
// MaxAge, which is dropped; failed slots past MaxAge end too.
func TestInstallSettlingOvertakenDropsOnlyStale(t *testing.T) {
	t.Parallel()
	l, clock := newTestLedger()
	g := l.Group("g", slotID, true)
	g.Install(l.Begin(), View{Min: 1, Max: 9, Target: 3, Instances: running("a", "b", "c"), Unfilled: -1}, Settling{})
	g.failed().add(1, &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OtherErrorClass})
	accept(t, g, pending("old", 4))
	clock.Advance(2 * time.Hour)
	listing := l.Begin()
	accept(t, g, pending("new", 6))
	if got := g.Settleable(listing); len(got) != 0 {
		t.Fatalf("an overtaken listing may settle %v, want none", got)
	}
	var asked []string
	kept := g.Install(listing, View{Min: 1, Max: 9, Target: 4, Unfilled: -1}, results(map[string]OperationResult{"old": {Done: true}, "new": {Done: true}}, &asked))
	if !kept || len(asked) != 0 {
		t.Fatalf("overtaken listing: kept %v, asked %v; want kept and nothing asked", kept, asked)
	}
	if got := pendingIDs(g); len(got) != 1 || got[0] != "new" {
		t.Fatalf("pending %v, want only the new operation (the old one is stale)", got)
	}
	if got, slots := g.Target(), g.failed().len(); got != 6 || slots != 0 {
		t.Fatalf("target %d with %d failed slots, want the served 6 and the stale slot gone", got, slots)
	}
}

// TestPlanApplyChangesWithoutACall: a plan whose change needs no cloud call
// applies its Effect under the lock; the ledger records no call, so no
// listing is overtaken.
func TestPlanApplyChangesWithoutACall(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", slotID, true)
	g.Install(l.Begin(), View{Min: 0, Max: 9, Target: 1, Instances: running("a"), Unfilled: -1}, Settling{})
	g.failed().add(2, &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OtherErrorClass})
	listing := l.Begin()
	err := g.Do(context.Background(), func(context.Context) error { return nil }, func() (Plan, error) {
		return Plan{Apply: Effect{DropSlots: []int{1}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g.failed().holds(1) || !g.failed().holds(2) || g.Target() != 2 {
		t.Fatalf("after dropping slot 1: slots %+v, target %d; want slot 2 left and target 2", g.failed().list(), g.Target())
	}
	if l.overtaken(listing, "g") || !g.ChangedAt().IsZero() {
		t.Fatal("a change with no cloud call was recorded as one")
	}
}
