package groupstate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

func running(ids ...string) []cloudprovider.Instance {
	out := make([]cloudprovider.Instance, 0, len(ids))
	for _, id := range ids {
		out = append(out, cloudprovider.Instance{Id: id, Status: &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}})
	}
	return out
}

func states(g *Group) map[string]string {
	out := map[string]string{}
	for _, in := range g.Instances() {
		st := "nil"
		if in.Status != nil {
			st = fmt.Sprint(in.Status.State)
			if in.Status.ErrorInfo != nil {
				st += "+error"
			}
		}
		out[in.Id] = st
	}
	return out
}

func TestGroupInstallKeepsSizeOfAMutationTheListingMissed(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Min: 1, Max: 5, Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{})
	older := l.Begin()
	err := g.Do(context.Background(), func(context.Context) error { return nil }, func() (Plan, error) {
		return Plan{Send: func(context.Context) (Effect, error) { return Resize(3), nil }}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Install(older, View{Min: 1, Max: 6, Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{}) {
		t.Error("Install of a listing older than the increase did not report the size kept")
	}
	if got := g.Target(); got != 3 {
		t.Errorf("target after an older listing = %d, want 3 (the increase's)", got)
	}
	if got := g.MaxSize(context.Background()); got != 6 {
		t.Errorf("max after the listing = %d, want the listed 6: bounds are not our mutation's", got)
	}
	if g.Install(l.Begin(), View{Min: 1, Max: 6, Target: 3, Instances: running("a", "b", "c"), Unfilled: -1}, Settling{}) {
		t.Error("a listing newer than every mutation kept the old size")
	}
}

func TestGroupNodesOverlayDeletingAndSlots(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	slot := func(n int) string { return fmt.Sprintf("slot-%d", n) }
	g := l.Group("g", slot, false)
	info := &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OutOfResourcesErrorClass, ErrorCode: "STOCK"}
	g.Install(l.Begin(), View{Target: 4, Instances: running("a", "b"), Unfilled: 2, Failure: info}, Settling{})
	g.deleting().add("a")
	got := states(g)
	want := map[string]string{"a": fmt.Sprint(cloudprovider.InstanceDeleting), "b": fmt.Sprint(cloudprovider.InstanceRunning),
		"slot-1": fmt.Sprint(cloudprovider.InstanceCreating) + "+error", "slot-2": fmt.Sprint(cloudprovider.InstanceCreating) + "+error"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Nodes = %v, want %v", got, want)
	}
	if n, ok := g.slot("slot-2"); !ok || n != 2 {
		t.Errorf("Slot(slot-2) = %d %v, want 2 true", n, ok)
	}
	if _, ok := g.slot("b"); ok {
		t.Error("an instance was taken for a failed slot")
	}
	if got := g.Target(); got != 4 {
		t.Errorf("target = %d, want the cloud's 4: its slots are inside its size", got)
	}
	g.Fresh(func(View) View { return View{Target: 3, Instances: running("b"), Unfilled: 1, Failure: info} })
	if got := states(g); len(got) != 2 || got["a"] != "" {
		t.Errorf("Nodes after a fresh read without a and with one slot = %v", got)
	}
}

func TestGroupCountsSlotsOutsideTheCloudsSize(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", func(n int) string { return fmt.Sprint("slot-", n) }, true)
	g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{})
	g.failed().add(2, &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OtherErrorClass})
	if got := g.Target(); got != 4 {
		t.Errorf("target = %d, want 4: two slots a failed operation was to add, outside the cloud's 2", got)
	}
	g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{})
	if got := g.failed().len(); got != 2 {
		t.Errorf("a listing that says nothing of failures left %d slots, want 2", got)
	}
}

func TestGroupRetiredAnswersNotFoundUntilInstalledAgain(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{})
	g.retire()
	if _, err := g.TargetSize(context.Background()); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Errorf("TargetSize of a retired group: err %v, want ErrNodeGroupNotFound", err)
	}
	if _, err := g.Nodes(context.Background()); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Errorf("Nodes of a retired group: err %v, want ErrNodeGroupNotFound", err)
	}
	g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{})
	if n, err := g.TargetSize(context.Background()); err != nil || n != 2 {
		t.Errorf("TargetSize of a group installed again = %d, %v; want 2, nil", n, err)
	}
}

func TestGroupFreshBuildsOnTheServedView(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Min: 1, Max: 5, Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{})
	g.Fresh(func(served View) View {
		if served.Min != 1 || served.Max != 5 || served.Target != 2 || len(served.Instances) != 2 {
			t.Errorf("build got %+v, want the served bounds 1..5, target 2 and two instances", served)
		}
		served.Instances = append(served.Instances, running("c")...)
		served.Target = 3
		return served
	})
	v := g.Read()
	if v.Min != 1 || v.Max != 5 || v.Target != 3 || len(v.Instances) != 3 {
		t.Errorf("served after Fresh = %+v, want bounds 1..5, target 3, three instances", v)
	}
}

func TestGroupTargetFromInstancesCountsThoseThatStayWhenRead(t *testing.T) {
	t.Parallel()
	l, clock := newTestLedger()
	g := l.Group("g", nil, false)
	ins := running("a", "b", "c")
	ins[2].Status = &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
	g.Install(l.Begin(), View{Min: 0, Max: 5, Target: 99, TargetFromInstances: true, Instances: ins, Unfilled: -1}, Settling{})
	if got := g.Target(); got != 2 {
		t.Fatalf("target = %d, want 2: a and b stay, c is listed Deleting", got)
	}
	g.deleting().add("a")
	if got, read := g.Target(), g.Read().Target; got != 1 || read != 1 {
		t.Fatalf("target = %d, Read().Target = %d after our deletion of a, want 1 and 1", got, read)
	}
	clock.Advance(DeletingGrace)
	g.Install(l.Begin(), View{Min: 0, Max: 5, TargetFromInstances: true, Instances: ins, Unfilled: -1}, Settling{})
	if got := g.Target(); got != 2 {
		t.Fatalf("target = %d in the install that ends a's grace, want 2: a is listed live and no longer Deleting", got)
	}
}

func TestGroupInstallSettlesWithTheView(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", func(n int) string { return fmt.Sprint("slot-", n) }, true)
	g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{})
	if err := send(g, Effect{Target: 4, SetTarget: true, Pending: &Operation{ID: "up"}}, nil); err != nil {
		t.Fatal(err)
	}
	read := make(chan int)
	kept := g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{MaxAge: time.Hour, Result: func(Operation) OperationResult {
		started := make(chan struct{})
		go func() {
			close(started)
			read <- g.Target()
		}()
		<-started
		// Let the reader run as far as it can before the slots land.
		for range 10 {
			runtime.Gosched()
		}
		return OperationResult{Done: true, Failed: true, Info: &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OtherErrorClass}}
	}})
	if kept {
		t.Fatal("Install kept the size of a listing newer than every change")
	}
	if got := <-read; got != 4 {
		t.Fatalf("a read during the install saw target %d, want 4: the cloud's 2 and the 2 failed slots land together", got)
	}
	if got := g.Target(); got != 4 {
		t.Fatalf("target after the install = %d, want 2 listed + 2 failed slots", got)
	}
}

// TestGroupManagedIsTheRefreshsChoice: why a group is managed comes with a
// refresh's install and is reported by its status; a mutation's fresh read,
// which cannot know it, keeps the served one, and the next install replaces
// it.
func TestGroupManagedIsTheRefreshsChoice(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, false)
	byNodes := cloudprovider.Management{By: cloudprovider.ManagedByNodes, Detail: "1:5:g"}
	g.Install(l.Begin(), View{Min: 1, Max: 5, Target: 2, Instances: running("a", "b"), Unfilled: -1, Managed: byNodes}, Settling{})
	if got := g.StatusWith(groupconfig.GroupSettings{}).Managed; got != byNodes {
		t.Fatalf("status after install says managed %v, want %v", got, byNodes)
	}
	g.Fresh(func(View) View {
		return View{Min: 1, Max: 5, Target: 3, Instances: running("a", "b", "c"), Unfilled: -1}
	})
	if got := g.Read().Managed; got != byNodes {
		t.Fatalf("a fresh read changed why the group is managed to %v, want %v kept", got, byNodes)
	}
	learnt := cloudprovider.Management{By: cloudprovider.ManagedByLearnt}
	g.Install(l.Begin(), View{Min: 1, Max: 9, Target: 3, Instances: running("a", "b", "c"), Unfilled: -1, Managed: learnt}, Settling{})
	if got := g.StatusWith(groupconfig.GroupSettings{}).Managed; got != learnt {
		t.Fatalf("status after the next install says managed %v, want %v", got, learnt)
	}
}
