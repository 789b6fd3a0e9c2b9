package main

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

func instance(id string, state protos.InstanceStatus_InstanceState) *protos.Instance {
	return &protos.Instance{Id: id, Status: &protos.InstanceStatus{InstanceState: state}}
}

// wantViolations fails unless got has exactly the violations that contain
// each of want, in order.
func wantViolations(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("violations %q, want %d containing %q", got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Fatalf("violation %q, want it to contain %q", got[i], want[i])
		}
	}
}

func TestTargetViolations(t *testing.T) {
	views := []groupView{
		{id: "in", minSize: 1, maxSize: 5, target: 5},
		{id: "low", minSize: 2, maxSize: 5, target: 1},
		{id: "high", minSize: 1, maxSize: 5, target: 6},
	}
	wantViolations(t, targetViolations(views), "group low: target 1 outside [2, 5]", "group high: target 6 outside [1, 5]")
	wantViolations(t, targetViolations(views[:1]))
}

func TestCloudDesiredViolations(t *testing.T) {
	bounds := map[string]groupBounds{"pool-a": {1, 4}, "pool-b": {1, 4}}
	cloud := []simcloud.Group{
		{IDs: []string{"id-a", "pool-a"}, Desired: 4},
		{IDs: []string{"id-b", "pool-b"}, Desired: 5},
		{IDs: []string{"unserved"}, Desired: 99}, // not ours: no bounds to hold
	}
	wantViolations(t, cloudDesiredViolations(cloud, bounds), "group pool-b: cloud's desired size 5 outside [1, 4]")
	wantViolations(t, cloudDesiredViolations(cloud[:1], map[string]groupBounds{"pool-a": {1, 4}}))
	// A served group the cloud's state lacks: the check must not pass by
	// matching nothing.
	wantViolations(t, cloudDesiredViolations(cloud[:1], bounds), "group pool-b: served, but not in the cloud's state")
}

func TestUnrequestedLosses(t *testing.T) {
	set := func(ids ...string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	before := set("kept", "deleted", "cancelled", "lost-b", "lost-a")
	now := set("kept", "new")
	got := unrequestedLosses(before, now, set("deleted"), set("cancelled"))
	if strings.Join(got, ",") != "lost-a,lost-b" {
		t.Fatalf("lost %v, want [lost-a lost-b]", got)
	}
	if got := unrequestedLosses(before, before, nil, nil); len(got) != 0 {
		t.Fatalf("nothing vanished, lost %v", got)
	}
}

func TestLiveInstancesSkipsGone(t *testing.T) {
	alive := liveInstances([]simcloud.Group{{Instances: []simcloud.Instance{{ProviderID: "a"}, {ProviderID: "b", Gone: true}}}})
	if !alive["a"] || alive["b"] || len(alive) != 1 {
		t.Fatalf("alive %v, want only a", alive)
	}
}

func TestSnapshotMismatches(t *testing.T) {
	running, deleting := protos.InstanceStatus_instanceRunning, protos.InstanceStatus_instanceDeleting
	cloud := []simcloud.Group{{IDs: []string{"g1", "name"}, Desired: 2, Instances: []simcloud.Instance{
		{ProviderID: "i1"}, {ProviderID: "i2"}, {ProviderID: "i3", Gone: true},
	}}}
	tests := []struct {
		name string
		ours map[string]groupView
		want []string
	}{
		{name: "equal (deleting instances do not count)", ours: map[string]groupView{"g1": {id: "g1", target: 2,
			instances: []*protos.Instance{instance("i1", running), instance("i2", running), instance("i3", deleting)}}}},
		{name: "target differs", ours: map[string]groupView{"g1": {id: "g1", target: 3,
			instances: []*protos.Instance{instance("i1", running), instance("i2", running)}}},
			want: []string{"our target 3, cloud's desired 2"}},
		{name: "instances differ", ours: map[string]groupView{"g1": {id: "g1", target: 2,
			instances: []*protos.Instance{instance("i1", running), instance("i9", running)}}},
			want: []string{"only ours [i9], only the cloud's [i2]"}},
		{name: "cloud group missing", ours: map[string]groupView{}, want: []string{"cloud group [g1 name] missing"}},
		{name: "extra group", ours: map[string]groupView{
			"g1": {id: "g1", target: 2, instances: []*protos.Instance{instance("i1", running), instance("i2", running)}},
			"g9": {id: "g9"},
		}, want: []string{"our snapshot has 2 groups, the cloud 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantViolations(t, snapshotMismatches(tc.ours, cloud), tc.want...)
		})
	}
}

func TestAnswerViolation(t *testing.T) {
	deadline := 2 * time.Second
	expired := status.Error(codes.DeadlineExceeded, "context deadline exceeded")
	tests := []struct {
		name       string
		method     string
		took       time.Duration
		err        error
		want       string
		wantCutOff bool
	}{
		{name: "in time", method: "NodeGroups", took: time.Second},
		{name: "answered late", method: "NodeGroups", took: deadline + time.Second, want: "not answered within its 2s deadline"},
		{name: "mutation cut by the deadline", method: "NodeGroupIncreaseSize", took: deadline, err: expired, wantCutOff: true},
		{name: "read ran into the deadline", method: "NodeGroupNodes", took: deadline, err: expired, want: "ran into its 2s deadline"},
		{name: "server gave up early", method: "Refresh", took: time.Second, err: expired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, cutOff := answerViolation(tc.method, tc.took, deadline, tc.err)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || cutOff != tc.wantCutOff {
				t.Fatalf("violation %q cut off %v, want %q %v", got, cutOff, tc.want, tc.wantCutOff)
			}
		})
	}
}

func TestHandlerOverrun(t *testing.T) {
	deadline := time.Unix(1000, 0)
	if got := handlerOverrun("/m", deadline.Add(answerSlack), deadline, time.Second); got != "" {
		t.Fatalf("within the slack: %q", got)
	}
	if got := handlerOverrun("/m", deadline.Add(time.Second), deadline, 3*time.Second); !strings.Contains(got, "/m handler returned 1s after its deadline (ran 3s)") {
		t.Fatalf("late handler: %q", got)
	}
}

func TestSlowAppliedLandsInsideTheUnknownOutcomeWindow(t *testing.T) {
	for _, rpcTimeout := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second} {
		slow, window := slowTimings(rpcTimeout)
		if slow <= rpcTimeout {
			t.Fatalf("rpc timeout %s: slow fault %s answers before the caller gives up; nothing lands late", rpcTimeout, slow)
		}
		if window < slow {
			t.Fatalf("rpc timeout %s: window %s shorter than the slow fault's %s: a late resize can land after a newer one", rpcTimeout, window, slow)
		}
	}
}

func TestUnservedChanges(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	launched := map[string]time.Time{"served": t0, "late": t0, "young": t0.Add(50 * time.Second), "gone": t0}
	served := map[string]bool{"served": true}
	alive := map[string]bool{"served": true, "late": true, "young": true}
	got, pending := unservedChanges(launched, served, alive, t0.Add(61*time.Second), time.Minute)
	wantViolations(t, got, "instance late launched in the cloud 1m1s ago is still not served (bound 1m0s)")
	if len(pending) != 1 || pending["young"] != t0.Add(50*time.Second) {
		t.Fatalf("pending %v, want only young", pending)
	}
}

// A state that stays broken is reported once with its count and the
// mutations before it, not once per check.
func TestViolationsListedOnceWithHistory(t *testing.T) {
	s := &soaker{}
	s.note("delete g1 target 2 nodes [a]: lost answer")
	s.violate("group %s: target %d outside [1, 16]", "g1", 0)
	s.r.steps = 7
	s.violate("group %s: target %d outside [1, 16]", "g1", 0)
	s.violate("goroutine leak")
	if got := s.r.violationCount(); got != 3 {
		t.Fatalf("violation count %d, want 3", got)
	}
	if len(s.r.violations) != 2 || s.r.occurrences[s.r.violations[0]] != 2 {
		t.Fatalf("distinct violations %q, occurrences %v; want 2 distinct, the first seen twice", s.r.violations, s.r.occurrences)
	}
	if !strings.Contains(s.r.contexts[0], "first at step 0") || !strings.Contains(s.r.contexts[0], "lost answer") {
		t.Fatalf("context %q lacks the first step or the mutation before it", s.r.contexts[0])
	}
}
