package fakeapi

import (
	"net/url"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

func TestLifecycleFollowsClock(t *testing.T) {
	t.Parallel()
	clock := fakecloud.NewManualClock(time.Unix(0, 0))
	s := New(Options{Now: clock.Now, ProvisionDelay: 10 * time.Second, RemoveDelay: 5 * time.Second})
	s.AddGroup(Group{ID: "scg-a", Min: 0, Max: 5, Desired: 2})
	s.Reconcile()
	statuses := func() map[string]int {
		out := map[string]int{}
		for _, in := range s.Instances("scg-a") {
			out[in.Status]++
		}
		return out
	}
	if got := statuses(); got[StatusPending] != 2 {
		t.Fatalf("after reconcile: %v, want 2 pending", got)
	}
	clock.Advance(9 * time.Second)
	if got := statuses(); got[StatusPending] != 2 {
		t.Fatalf("before the delay: %v", got)
	}
	clock.Advance(time.Second)
	if got := statuses(); got[StatusInService] != 2 {
		t.Fatalf("after the delay: %v", got)
	}
	s.SetGroupBounds("scg-a", 0, 5, 1)
	s.Reconcile()
	if got := statuses(); got[StatusRemoving] != 1 || got[StatusInService] != 1 {
		t.Fatalf("after scale-in: %v", got)
	}
	clock.Advance(5 * time.Second)
	if got := statuses(); len(s.Instances("scg-a")) != 1 || got[StatusInService] != 1 {
		t.Fatalf("after removal delay: %v", got)
	}
}

func TestCreateFailureAndSettle(t *testing.T) {
	t.Parallel()
	s := New(Options{Now: fakecloud.NewManualClock(time.Unix(0, 0)).Now, ProvisionDelay: time.Hour})
	s.AddGroup(Group{ID: "scg-a", Min: 0, Max: 5, Desired: 1})
	s.SetCreateFailure("scg-a", &CreateFailure{Code: "NoStock", Message: "none"})
	s.Reconcile()
	s.Settle()
	insts := s.Instances("scg-a")
	if len(insts) != 1 || insts[0].Status != StatusError {
		t.Fatalf("instances = %+v, want one in Error", insts)
	}
	if len(s.activities) != 1 || s.activities[0].StatusCode != "Error" || s.activities[0].Related[0].InstanceID != insts[0].ID {
		t.Fatalf("activities = %+v", s.activities)
	}
}

func TestNoDesiredGroupNotReconciled(t *testing.T) {
	t.Parallel()
	s := New(Options{Now: fakecloud.NewManualClock(time.Unix(0, 0)).Now})
	s.AddGroup(Group{ID: "scg-a", Min: 1, Max: 5, Desired: -1})
	s.Reconcile()
	if n := len(s.Instances("scg-a")); n != 0 {
		t.Fatalf("%d instances created for a group without desired number", n)
	}
}

func TestHoldRemovalKeepsListingUntilSettle(t *testing.T) {
	t.Parallel()
	clock := fakecloud.NewManualClock(time.Unix(0, 0))
	s := New(Options{Now: clock.Now, RemoveDelay: time.Second})
	s.AddGroup(Group{ID: "scg-a", Min: 0, Max: 5, Desired: 2, LifecycleState: "Active"})
	s.Settle()
	victim := s.Instances("scg-a")[0].ID
	s.HoldRemoval(victim)
	s.mu.Lock()
	_, aerr := s.removeInstances(&params{q: url.Values{"ScalingGroupId": {"scg-a"}, "InstanceIds.1": {victim}}})
	s.mu.Unlock()
	if aerr != nil {
		t.Fatal(aerr)
	}
	clock.Advance(time.Hour)
	listed := map[string]string{}
	for _, in := range s.Instances("scg-a") {
		listed[in.ID] = listedStatus(in)
	}
	if g, _ := s.Group("scg-a"); g.Desired != 1 || listed[victim] != StatusInService || len(listed) != 2 {
		t.Fatalf("held removal: desired %d, listed %v, want 1 and the victim still InService", g.Desired, listed)
	}
	s.Settle()
	if got := s.Instances("scg-a"); len(got) != 1 || got[0].ID == victim {
		t.Fatalf("after Settle: %+v, want the victim gone", got)
	}
}
