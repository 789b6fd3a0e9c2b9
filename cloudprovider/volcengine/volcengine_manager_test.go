package volcengine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// hookAPI wraps the real client to run a hook inside ListScalingInstances,
// so a test can land a mutation while a Refresh is between its two calls.
type hookAPI struct {
	cloudAPI
	onList func()
}

func (h *hookAPI) ListScalingInstances(ctx context.Context, groupID string) ([]volcapi.ScalingInstance, error) {
	if h.onList != nil {
		h.onList()
	}
	return h.cloudAPI.ListScalingInstances(ctx, groupID)
}

func TestRefreshRacingMutationKeepsMutation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withStatic("1:10:"+mainGroupID))
	g := e.group(t, mainGroupID)
	before := target(t, g)
	hook := &hookAPI{cloudAPI: e.p.m.api}
	e.p.m.api = hook
	// An old listing, so the Refresh lists the group's instances again.
	e.clock.Advance(refresh.DefaultMaxStaleness)
	hook.onList = func() {
		hook.onList = nil
		// The group listing already happened with the old desired number.
		if err := g.IncreaseSize(testCtx(t), 2); err != nil {
			t.Error(err)
		}
	}
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := target(t, g); got != before+2 {
		t.Fatalf("target %d after a Refresh that raced with IncreaseSize(2), want %d", got, before+2)
	}
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := target(t, g); got != before+2 {
		t.Fatalf("target %d after the next Refresh, want %d", got, before+2)
	}
}

func TestFailedRefreshKeepsSnapshot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault fakecloud.Fault
	}{
		{name: "group listing fails", fault: fakecloud.Fault{Operation: fakeapi.ActionDescribeScalingGroups, Status: 500, Code: "InternalError", Times: 10}},
		{name: "one instance listing fails", fault: fakecloud.Fault{Operation: fakeapi.ActionDescribeScalingInstances, Status: 403, Code: "AccessDenied", Times: 1}},
		{name: "throttled", fault: fakecloud.Fault{Status: 429, Code: "AccountFlowLimitExceeded", Times: 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			g := e.group(t, mainGroupID)
			before := target(t, g)
			nodesBefore, _ := g.Nodes(testCtx(t))
			// The cloud changes, but we cannot see it.
			e.fake.SetGroupBounds(mainGroupID, 1, 10, before+3)
			e.fake.AddFault(tc.fault)
			err := e.p.Refresh(testCtx(t))
			if err == nil {
				t.Fatal("Refresh succeeded")
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Refresh ran into the deadline: %v", err)
			}
			if got := target(t, g); got != before {
				t.Fatalf("target %d after failed Refresh, want %d", got, before)
			}
			if nodes, _ := g.Nodes(testCtx(t)); len(nodes) != len(nodesBefore) {
				t.Fatalf("%d nodes after failed Refresh, want %d", len(nodes), len(nodesBefore))
			}
			if gs, _ := e.p.NodeGroups(testCtx(t)); len(gs) != 2 {
				t.Fatalf("%d groups after failed Refresh", len(gs))
			}
			e.fake.ClearFaults()
			if err := e.p.Refresh(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if got := target(t, g); got != before+3 {
				t.Fatalf("target %d after recovery, want %d", got, before+3)
			}
		})
	}
}

func TestBoundsFollowTheCloud(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	e.fake.SetGroupBounds(mainGroupID, 2, 20, 3)
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if g.MinSize(testCtx(t)) != 2 || g.MaxSize(testCtx(t)) != 20 {
		t.Fatalf("min/max %d/%d, want 2/20 (re-read at every Refresh)", g.MinSize(testCtx(t)), g.MaxSize(testCtx(t)))
	}
	ng, err := e.p.NodeGroupForNode(testCtx(t), nodeFor(ProviderIDPrefix+e.fake.Instances(mainGroupID)[0].ID))
	if err != nil || ng.MaxSize(testCtx(t)) != 20 {
		t.Fatalf("NodeGroupForNode disagrees with NodeGroups: %v %v", ng, err)
	}
}

// newTestGroup returns a node group of a manager that serves no snapshot,
// with the view v installed as a fresh read would.
func newTestGroup(v groupstate.View) *nodeGroup {
	m := newManager(nil, "cn-beijing", nil, nil, groupstate.GuardOptions{}, 0, nil)
	g := newNodeGroup(m, mainGroupID)
	g.Fresh(func(groupstate.View) groupstate.View { return v })
	return g
}

func TestInstancesViewSorted(t *testing.T) {
	t.Parallel()
	r := groupRead{cloud: volcapi.ScalingGroup{ID: mainGroupID, Desired: 2}, unfilled: -1,
		instances: []volcapi.ScalingInstance{{ID: "i-b", Status: asStatusInService}, {ID: "i-a", Status: asStatusInService}}}
	g := newTestGroup(groupstate.View{})
	// The cloud accepted i-a's deletion.
	err := g.Do(testCtx(t), nil, func() (groupstate.Plan, error) {
		return groupstate.Plan{Apply: groupstate.Effect{Deleting: []string{ProviderIDPrefix + "i-a"}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Fresh(func(groupstate.View) groupstate.View { return view(r) })
	got := g.Instances()
	if got[0].Id != ProviderIDPrefix+"i-a" || got[0].Status.State != cloudprovider.InstanceDeleting || got[1].Status.State != cloudprovider.InstanceRunning {
		t.Fatalf("view = %+v", got)
	}
	if live := g.Live(); live != 1 {
		t.Fatalf("live = %d", live)
	}
}

func TestGroupDebugCountsInstancesInEnglish(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0 instances", 1: "1 instance", 2: "2 instances"} {
		g := newTestGroup(groupstate.View{Instances: make([]cloudprovider.Instance, n)})
		if got := g.debug(); !slices.Contains(strings.Split(got, ", "), want) {
			t.Errorf("debug() with %d instances = %q, want %q as one of its parts", n, got, want)
		}
	}
}
