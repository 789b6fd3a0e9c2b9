package volcengine

import (
	"errors"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// refreshCalls refreshes once and returns the cloud calls it made.
func (e *testEnv) refreshCalls(t *testing.T) (total, listings int) {
	t.Helper()
	e.fake.ResetRequests()
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return e.fake.RequestCount(), e.fake.CountOperation(fakeapi.ActionDescribeScalingInstances)
}

func TestUnchangedRefreshCostsOneCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.Settle()
	e.refreshCalls(t) // lists what settled
	for i := range 3 {
		if n, _ := e.refreshCalls(t); n != 1 {
			t.Fatalf("refresh %d with nothing changed made %d calls, want 1 (DescribeScalingGroups)", i, n)
		}
	}
}

func TestChangeInTheCloudListsOnlyThatGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.Settle()
	e.refreshCalls(t)
	id, err := e.fake.LaunchInstance(mainGroupID)
	if err != nil {
		t.Fatal(err)
	}
	// The new node heals before the next refresh: one lookup finds it.
	g, err := e.p.NodeGroupForNode(testCtx(t), nodeFor(ProviderIDPrefix+id))
	if err != nil || g == nil || g.Id(testCtx(t)) != mainGroupID {
		t.Fatalf("NodeGroupForNode(new instance) = %v, %v; want %s", g, err, mainGroupID)
	}
	e.fake.ResetRequests()
	if g, _ := e.p.NodeGroupForNode(testCtx(t), nodeFor(ProviderIDPrefix+"i-other-new")); g != nil || e.fake.RequestCount() != 0 {
		t.Fatalf("a second unknown node in the same refresh made %d calls, want 0", e.fake.RequestCount())
	}
	if n, listings := e.refreshCalls(t); n != 1 || listings != 0 {
		t.Fatalf("refresh after the lookup made %d calls (%d listings), want 1 and 0", n, listings)
	}
}

func TestGroupsAreListedAgainWithinTheBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.Settle()
	e.refreshCalls(t)
	e.clock.Advance(refresh.DefaultMaxStaleness - 1)
	if _, listings := e.refreshCalls(t); listings != 0 {
		t.Fatalf("%d listings before the bound, want 0", listings)
	}
	e.clock.Advance(1)
	if _, listings := e.refreshCalls(t); listings != 2 {
		t.Fatalf("%d listings once the listings reached the bound, want 2 (every group)", listings)
	}
}

func TestGroupWithInstancesNotInServiceIsListedEveryRefresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.Settle()
	e.refreshCalls(t)
	e.fake.AddInstance(otherGroupID, fakeapi.StatusPending)
	for i := range 2 {
		if _, listings := e.refreshCalls(t); listings != 1 {
			t.Fatalf("refresh %d: %d listings while an instance is pending, want 1 (its group)", i, listings)
		}
	}
}

func TestOwnMutationListsTheGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.Settle()
	e.refreshCalls(t)
	if err := e.group(t, mainGroupID).IncreaseSize(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if _, listings := e.refreshCalls(t); listings != 1 {
		t.Fatalf("%d listings after our own IncreaseSize, want 1", listings)
	}
}

// TestMutationWithLostAnswerListsTheGroup: a mutation the provider cannot
// confirm (its answer was lost, so the snapshot did not change) may still
// have changed the group's members at an unchanged total; the next refresh
// lists the group. Found by hack/soak.
func TestMutationWithLostAnswerListsTheGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.Settle()
	e.refreshCalls(t)
	// The attempt takes the group's lock; its plan refuses, so no answer
	// confirms what changed.
	if err := mustGroup(t, e.p.m, mainGroupID).Do(testCtx(t), nil, func() (groupstate.Plan, error) { return groupstate.Plan{}, errors.New("answer lost") }); err == nil {
		t.Fatal("the refused attempt succeeded")
	}
	if _, listings := e.refreshCalls(t); listings != 1 {
		t.Fatalf("%d listings after a mutation attempt, want 1", listings)
	}
	if _, listings := e.refreshCalls(t); listings != 0 {
		t.Fatalf("%d listings once listed again, want 0", listings)
	}
}
