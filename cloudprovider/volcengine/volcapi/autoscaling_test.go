package volcapi

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

func TestListScalingGroupsPaging(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		groups    int
		skew      int
		ids       []string
		want      int
		wantCalls int
	}{
		{name: "one page", groups: 3, want: 3, wantCalls: 1},
		{name: "exactly one full page stops at TotalCount", groups: PageSize, want: PageSize, wantCalls: 1},
		{name: "three pages", groups: 2*PageSize + 7, want: 2*PageSize + 7, wantCalls: 3},
		{name: "TotalCount too high stops at short page", groups: 7, skew: 1000, want: 7, wantCalls: 1},
		{name: "TotalCount too low still reads full pages", groups: PageSize + 3, skew: -PageSize, want: PageSize, wantCalls: 1},
		{name: "by id", groups: 5, ids: []string{"scg-0002", "scg-0004"}, want: 2, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnvWith(t, fakeapi.Options{Now: fakecloud.NewManualClock(time.Unix(1_800_000_000, 0)).Now, TotalCountSkew: tc.skew})
			for i := 1; i <= tc.groups; i++ {
				env.fake.AddGroup(fakeapi.Group{ID: fmt.Sprintf("scg-%04d", i), Min: 1, Max: 10, Desired: -1, Tags: map[string]string{"k": "v"}})
			}
			got, err := env.client.ListScalingGroups(ctx5s(t), tc.ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Fatalf("got %d groups, want %d", len(got), tc.want)
			}
			if n := env.fake.CountOperation(ActionDescribeScalingGroups); n != tc.wantCalls {
				t.Fatalf("%d DescribeScalingGroups calls, want %d", n, tc.wantCalls)
			}
			if got[0].Tags["k"] != "v" || got[0].Desired != NoDesiredNumber || !got[0].HasMin || got[0].Max != 10 {
				t.Fatalf("group not converted: %+v", got[0])
			}
		})
	}
}

func TestListScalingInstancesPaging(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		instances int
		wantCalls int
	}{
		{name: "empty", instances: 0, wantCalls: 1},
		{name: "two pages", instances: PageSize + 1, wantCalls: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 100, Desired: tc.instances})
			env.fake.Reconcile()
			env.fake.Settle()
			got, err := env.client.ListScalingInstances(ctx5s(t), "scg-a")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.instances {
				t.Fatalf("got %d instances, want %d", len(got), tc.instances)
			}
			for _, inst := range got {
				if inst.Status != fakeapi.StatusInService || inst.GroupID != "scg-a" {
					t.Fatalf("bad instance %+v", inst)
				}
			}
			if n := env.fake.CountOperation(ActionDescribeScalingInstances); n != tc.wantCalls {
				t.Fatalf("%d calls, want %d", n, tc.wantCalls)
			}
		})
	}
}

func TestRemoveInstancesNotRetriedOnServerError(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 2})
	env.fake.Reconcile()
	env.fake.Settle()
	insts := env.fake.Instances("scg-a")
	env.fake.FailNext(1)
	_, err := env.client.RemoveInstances(ctx5s(t), "scg-a", []string{insts[0].ID}, true)
	if !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Fatalf("error = %v, want unavailable", err)
	}
	if n := env.fake.CountOperation(ActionRemoveInstances); n != 1 {
		t.Fatalf("RemoveInstances sent %d times, want 1 (not idempotent)", n)
	}
	if g, _ := env.fake.Group("scg-a"); g.Desired != 2 {
		t.Fatalf("desired = %d after failed remove, want 2", g.Desired)
	}
}

func TestRemoveInstancesParameters(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 1, Max: 5, Desired: 2})
	env.fake.Reconcile()
	env.fake.Settle()
	insts := env.fake.Instances("scg-a")
	if _, err := env.client.RemoveInstances(ctx5s(t), "scg-a", []string{insts[0].ID}, false); err != nil {
		t.Fatal(err)
	}
	reqs := env.fake.Requests()
	q := reqs[len(reqs)-1].Query
	if q.Get("DecreaseDesiredCapacity") != "false" || q.Get("ForceDelete") != "true" || q.Get("InstanceIds.1") != insts[0].ID {
		t.Fatalf("query = %v", q)
	}
	if _, err := env.client.RemoveInstances(ctx5s(t), "scg-a", make([]string, MaxRemoveBatch+1), true); err == nil {
		t.Fatal("21 ids accepted")
	}
}

func TestActivitiesSince(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0})
	if err := env.client.SetDesiredInstances(ctx5s(t), "scg-a", 1); err != nil {
		t.Fatal(err)
	}
	env.fake.Settle()
	env.fake.SetCreateFailure("scg-a", &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "no stock in zone"})
	if err := env.client.SetDesiredInstances(ctx5s(t), "scg-a", 3); err != nil {
		t.Fatal(err)
	}
	env.fake.Settle()
	got, err := env.client.ActivitiesSince(ctx5s(t), "scg-a", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Failed || got[1].Failed {
		t.Fatalf("activities = %+v, want the failed one first", got)
	}
	if len(got[0].Related) != 2 || !got[0].Related[0].InstanceFailed() || !strings.Contains(got[0].Related[0].Message, "InsufficientInstanceStock") {
		t.Fatalf("related = %+v", got[0].Related)
	}
}

// TestActivitiesSinceAllPagesEitherOrder: with more activities than a page,
// in either list order, only those at or after since come back, newest first.
func TestActivitiesSinceAllPagesEitherOrder(t *testing.T) {
	t.Parallel()
	for _, oldestFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("oldestFirst=%v", oldestFirst), func(t *testing.T) {
			t.Parallel()
			clock := fakecloud.NewManualClock(time.Unix(1_800_000_000, 0))
			env := newTestEnvWith(t, fakeapi.Options{Now: clock.Now, ActivitiesOldestFirst: oldestFirst})
			env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 100, Desired: 0})
			for i := 1; i <= PageSize+5; i++ {
				clock.Advance(time.Minute)
				env.fake.SetGroupBounds("scg-a", 0, 100, i)
				env.fake.Reconcile()
			}
			since := clock.Now().Add(-2*time.Minute + time.Second)
			got, err := env.client.ActivitiesSince(ctx5s(t), "scg-a", since)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || !got[0].CreatedAt.After(got[1].CreatedAt) {
				t.Fatalf("activities = %+v, want the 2 newest, newest first", got)
			}
		})
	}
}

// TestScalingGroupsPage: one page of the unfiltered list, with the list's
// TotalCount and whether it is the last; a page out of range is refused
// without a call.
func TestScalingGroupsPage(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for i := 1; i <= PageSize+7; i++ {
		env.fake.AddGroup(fakeapi.Group{ID: fmt.Sprintf("scg-%04d", i), Min: 0, Max: 10, Desired: 0})
	}
	tests := []struct {
		page     int
		want     int
		wantLast bool
		first    string
	}{
		{page: 1, want: PageSize, first: "scg-0001"},
		{page: 2, want: 7, wantLast: true, first: fmt.Sprintf("scg-%04d", PageSize+1)},
	}
	for _, tc := range tests {
		got, err := env.client.ScalingGroupsPage(ctx5s(t), tc.page)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Groups) != tc.want || got.Last != tc.wantLast || got.TotalCount != PageSize+7 || got.Groups[0].ID != tc.first {
			t.Fatalf("page %d: %d groups from %s, last %v, TotalCount %d; want %d from %s, last %v, TotalCount %d",
				tc.page, len(got.Groups), got.Groups[0].ID, got.Last, got.TotalCount, tc.want, tc.first, tc.wantLast, PageSize+7)
		}
	}
	env.fake.ResetRequests()
	for _, bad := range []int{0, MaxPages + 1} {
		if _, err := env.client.ScalingGroupsPage(ctx5s(t), bad); err == nil {
			t.Fatalf("page %d accepted", bad)
		}
	}
	if n := env.fake.RequestCount(); n != 0 {
		t.Fatalf("%d calls for pages out of range, want 0", n)
	}
}
