package groupstate

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
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
	g.Install(l.Begin(), View{Min: 1, Max: 5, Target: 2, Instances: running("a", "b"), Unfilled: -1})
	older := l.Begin()
	err := g.Guard().Do(context.Background(), Mutation{Read: func(context.Context) error { return nil }, Plan: func() (Plan, error) {
		return Plan{Call: func(context.Context) error {
			g.Update(func(v *View) { v.Target = 3 })
			return nil
		}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Install(older, View{Min: 1, Max: 6, Target: 2, Instances: running("a", "b"), Unfilled: -1}) {
		t.Error("Install of a listing older than the increase did not report the size kept")
	}
	if got := g.Target(); got != 3 {
		t.Errorf("target after an older listing = %d, want 3 (the increase's)", got)
	}
	if got := g.MaxSize(context.Background()); got != 6 {
		t.Errorf("max after the listing = %d, want the listed 6: bounds are not our mutation's", got)
	}
	if g.Install(l.Begin(), View{Min: 1, Max: 6, Target: 3, Instances: running("a", "b", "c"), Unfilled: -1}) {
		t.Error("a listing newer than every mutation kept the old size")
	}
}

func TestGroupNodesOverlayDeletingAndSlots(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	slot := func(n int) string { return fmt.Sprintf("slot-%d", n) }
	g := l.Group("g", slot, false)
	info := &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OutOfResourcesErrorClass, ErrorCode: "STOCK"}
	g.Install(l.Begin(), View{Target: 4, Instances: running("a", "b"), Unfilled: 2, Failure: info})
	g.Deleting().Add("a")
	got := states(g)
	want := map[string]string{"a": fmt.Sprint(cloudprovider.InstanceDeleting), "b": fmt.Sprint(cloudprovider.InstanceRunning),
		"slot-1": fmt.Sprint(cloudprovider.InstanceCreating) + "+error", "slot-2": fmt.Sprint(cloudprovider.InstanceCreating) + "+error"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Nodes = %v, want %v", got, want)
	}
	if n, ok := g.Slot("slot-2"); !ok || n != 2 {
		t.Errorf("Slot(slot-2) = %d %v, want 2 true", n, ok)
	}
	if _, ok := g.Slot("b"); ok {
		t.Error("an instance was taken for a failed slot")
	}
	if got := g.Target(); got != 4 {
		t.Errorf("target = %d, want the cloud's 4: its slots are inside its size", got)
	}
	g.Fresh(View{Target: 3, Instances: running("b"), Unfilled: 1, Failure: info})
	if got := states(g); len(got) != 2 || got["a"] != "" {
		t.Errorf("Nodes after a fresh read without a and with one slot = %v", got)
	}
}

func TestGroupCountsSlotsOutsideTheCloudsSize(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", func(n int) string { return fmt.Sprint("slot-", n) }, SlotsOutsideSize)
	g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1})
	g.Failed().Add(2, &cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OtherErrorClass})
	if got := g.Target(); got != 4 {
		t.Errorf("target = %d, want 4: two slots a failed operation was to add, outside the cloud's 2", got)
	}
	g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1})
	if got := g.Failed().Len(); got != 2 {
		t.Errorf("a listing that says nothing of failures left %d slots, want 2", got)
	}
}

func TestGroupRetiredAnswersNotFoundUntilInstalledAgain(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1})
	g.Retire()
	if _, err := g.TargetSize(context.Background()); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Errorf("TargetSize of a retired group: err %v, want ErrNodeGroupNotFound", err)
	}
	if _, err := g.Nodes(context.Background()); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Errorf("Nodes of a retired group: err %v, want ErrNodeGroupNotFound", err)
	}
	g.Install(l.Begin(), View{Target: 2, Instances: running("a", "b"), Unfilled: -1})
	if n, err := g.TargetSize(context.Background()); err != nil || n != 2 {
		t.Errorf("TargetSize of a group installed again = %d, %v; want 2, nil", n, err)
	}
}
