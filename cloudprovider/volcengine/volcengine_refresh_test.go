package volcengine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

const catalogTag = "asg:tag=ca=on"

func catalogGroupID(i int) string { return fmt.Sprintf("scg-%04d", i) }

// addCatalogGroup adds one group with one instance in service, tagged for
// discovery when tagged.
func addCatalogGroup(f *fakeapi.Server, id string, tagged bool) {
	tags := map[string]string{}
	if tagged {
		tags["ca"] = "on"
	}
	f.AddGroup(fakeapi.Group{ID: id, Name: id, Min: 0, Max: 10, Desired: 1, Tags: tags})
}

// seedCatalog seeds n tagged groups scg-0000... and then untagged more.
func seedCatalog(n, untagged int) func(*fakeapi.Server) {
	return func(f *fakeapi.Server) {
		for i := range n + untagged {
			addCatalogGroup(f, catalogGroupID(i), i < n)
		}
		f.Settle()
	}
}

// served returns the ids of the groups the provider serves.
func served(t *testing.T, e *testEnv) []string {
	t.Helper()
	gs, err := e.p.NodeGroups(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, g := range gs {
		ids = append(ids, g.Id(testCtx(t)))
	}
	return ids
}

// oldestRecord is the age of the oldest group description the snapshot's
// groups were built from.
func oldestRecord(e *testEnv) time.Duration {
	var oldest time.Duration
	now := e.clock.Now()
	for _, id := range e.p.m.managedIDs() {
		oldest = max(oldest, now.Sub(e.p.m.catalog.records[id].at))
	}
	return oldest
}

func groupsCalls(t *testing.T, e *testEnv) int {
	t.Helper()
	e.fake.ResetRequests()
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return e.fake.CountOperation(fakeapi.ActionDescribeScalingGroups)
}

// TestManyGroupsUnchangedRefreshCostsOneCall: 120 groups are three pages of
// the group list; a refresh that finds nothing changed reads one of them
// (in rotation) and nothing else, and no group's description gets older than
// the staleness bound.
func TestManyGroupsUnchangedRefreshCostsOneCall(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(120, 0)))
	if got := len(served(t, e)); got != 120 {
		t.Fatalf("%d groups served, want 120", got)
	}
	for i := range 5 {
		e.clock.Advance(10 * time.Second)
		if n, _ := e.refreshCalls(t); n != 1 {
			t.Fatalf("refresh %d with nothing changed made %d calls, want 1 (one page of the group list)", i, n)
		}
	}
	// Past the bound every listing is read again (groupListing), once,
	// with the whole group list (catalogRead.due); otherwise the group
	// list still costs one page per refresh.
	for i := range 6 {
		e.clock.Advance(10 * time.Second)
		n := groupsCalls(t, e)
		if listings := e.fake.CountOperation(fakeapi.ActionDescribeScalingInstances); listings == 0 && n != 1 || n > 3 {
			t.Fatalf("refresh %d: %d DescribeScalingGroups calls with %d listings, want 1 (3 with listings)", i, n, listings)
		}
		if age := oldestRecord(e) + 10*time.Second; age >= refresh.DefaultMaxStaleness {
			t.Fatalf("refresh %d: a group's description will be %v old at the next refresh, want younger than the bound %v", i, age, refresh.DefaultMaxStaleness)
		}
	}
}

// TestChangeOnAnyPageIsServedWithinTheBound: a change to a group on a page
// the rotation does not read next is served within the bound.
func TestChangeOnAnyPageIsServedWithinTheBound(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(120, 0)))
	last := catalogGroupID(119)
	e.fake.SetGroupBounds(last, 0, 10, 2)
	for elapsed := time.Duration(0); ; {
		e.clock.Advance(10 * time.Second)
		elapsed += 10 * time.Second
		if err := e.p.Refresh(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if target(t, e.group(t, last)) == 2 {
			return
		}
		if elapsed >= refresh.DefaultMaxStaleness {
			t.Fatalf("desired 2 of %s not served after %v", last, elapsed)
		}
	}
}

// TestSlowRefreshesReadMoreThanOnePage: when CA refreshes so rarely that the
// rotation would let a description pass the bound before the next refresh,
// a refresh reads more.
func TestSlowRefreshesReadMoreThanOnePage(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(101, 0)))
	const interval = 25 * time.Second
	total := 0
	for i := range 6 {
		e.clock.Advance(interval)
		total += groupsCalls(t, e)
		if age := oldestRecord(e) + interval; age >= refresh.DefaultMaxStaleness {
			t.Fatalf("refresh %d: a group's description will be %v old at the next refresh, want younger than the bound", i, age)
		}
	}
	if total >= 6*3 {
		t.Fatalf("%d DescribeScalingGroups calls in 6 refreshes, want fewer than reading all 3 pages each time", total)
	}
}

// TestGroupShiftedToAnUnreadPageIsKept: a group deleted and another created
// between two refreshes keep the list's length, so the pages shift without a
// sign in TotalCount. No group may leave the snapshot because it moved to a
// page not read this time; the deleted one leaves, and the new one comes,
// within the bound.
func TestGroupShiftedToAnUnreadPageIsKept(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(100, 0)))
	gone, added := catalogGroupID(0), "scg-9999"
	e.fake.DeleteGroup(gone)
	addCatalogGroup(e.fake, added, true)
	e.fake.Settle()
	for elapsed := time.Duration(0); elapsed < refresh.DefaultMaxStaleness; {
		e.clock.Advance(10 * time.Second)
		elapsed += 10 * time.Second
		if err := e.p.Refresh(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		ids := served(t, e)
		for i := 1; i < 100; i++ {
			if !slices.Contains(ids, catalogGroupID(i)) {
				t.Fatalf("after %v: %s left the snapshot, but it still exists", elapsed, catalogGroupID(i))
			}
		}
	}
	ids := served(t, e)
	if slices.Contains(ids, gone) || !slices.Contains(ids, added) {
		t.Fatalf("after the bound: deleted %s served %v, new %s served %v; want gone and served",
			gone, slices.Contains(ids, gone), added, slices.Contains(ids, added))
	}
}

// TestDeletedGroupLeavesWhenTheCountDrops: a deletion that shortens the
// list shows in TotalCount on any page, and the list is then read whole.
func TestDeletedGroupLeavesWhenTheCountDrops(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(100, 0)))
	gone := catalogGroupID(99)
	e.fake.DeleteGroup(gone)
	e.clock.Advance(10 * time.Second)
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if ids := served(t, e); slices.Contains(ids, gone) || len(ids) != 99 {
		t.Fatalf("after one refresh: %d groups served, %s among them: %v; want 99 without it", len(ids), gone, slices.Contains(ids, gone))
	}
}

// TestScaleUpCostsItsGroupAndItsPages: right after IncreaseSize of a group
// on a page the rotation does not read next, a refresh costs one page of
// the list, the group read by id and one page of its instances.
func TestScaleUpCostsItsGroupAndItsPages(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(100, 0)))
	e.clock.Advance(10 * time.Second)
	e.refreshCalls(t) // page 1; page 2 is next
	id := catalogGroupID(0)
	if err := e.group(t, id).IncreaseSize(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	e.fake.Settle()
	e.clock.Advance(10 * time.Second)
	n, listings := e.refreshCalls(t)
	if groups := e.fake.CountOperation(fakeapi.ActionDescribeScalingGroups); n != 3 || groups != 2 || listings != 1 {
		t.Fatalf("refresh after a scale-up: %d calls (%d DescribeScalingGroups, %d listings), want 3 (2 and 1)", n, groups, listings)
	}
	if got := len(mustGroup(t, e.p.m, id).Read().Instances); got != 2 {
		t.Fatalf("%s serves %d instances after the scale-up, want 2", id, got)
	}
}

// TestManyStaticIDsShareTheBudget: --nodes with 100 ids would take 10 reads
// by id; when they make up the account's group list, a refresh reads one
// page of it in rotation instead.
func TestManyStaticIDsShareTheBudget(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	var specs []string
	for i := range 100 {
		specs = append(specs, "0:10:"+catalogGroupID(i))
	}
	e := newEnv(t, withStatic(specs...), withSeed(seedCatalog(100, 0)))
	if got := len(served(t, e)); got != 100 {
		t.Fatalf("%d groups served, want 100", got)
	}
	for i := range 5 {
		e.clock.Advance(10 * time.Second)
		if n, _ := e.refreshCalls(t); n != 1 {
			t.Fatalf("refresh %d with nothing changed made %d calls, want 1", i, n)
		}
		if age := oldestRecord(e); age >= refresh.DefaultMaxStaleness {
			t.Fatalf("refresh %d: a group's description is %v old, want younger than the bound", i, age)
		}
	}
}

// TestStaticIDsInALargeAccountAreReadByID: when the account's list is longer
// than the ids' batches, the ids are read by id, the least recently read
// batch per refresh, each within the bound; a deleted group leaves within
// the bound.
func TestStaticIDsInALargeAccountAreReadByID(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	var specs []string
	for i := range 12 {
		specs = append(specs, "0:10:"+catalogGroupID(i))
	}
	e := newEnv(t, withStatic(specs...), withSeed(seedCatalog(12, 300)))
	if got := len(served(t, e)); got != 12 {
		t.Fatalf("%d groups served, want 12", got)
	}
	if !e.p.m.catalog.byID {
		t.Fatal("12 ids in an account of 312 groups (7 pages) are read by id (2 batches)")
	}
	for i := range 8 {
		e.clock.Advance(10 * time.Second)
		n := groupsCalls(t, e)
		if listings := e.fake.CountOperation(fakeapi.ActionDescribeScalingInstances); listings == 0 && n != 1 {
			t.Fatalf("refresh %d with nothing changed made %d DescribeScalingGroups calls, want 1 (one batch of ids)", i, n)
		}
		if age := oldestRecord(e); age >= refresh.DefaultMaxStaleness {
			t.Fatalf("refresh %d: a group's description is %v old, want younger than the bound", i, age)
		}
	}
	e.fake.DeleteGroup(catalogGroupID(3))
	for elapsed := time.Duration(0); slices.Contains(served(t, e), catalogGroupID(3)); {
		if elapsed >= refresh.DefaultMaxStaleness {
			t.Fatalf("deleted %s still served after %v", catalogGroupID(3), elapsed)
		}
		e.clock.Advance(10 * time.Second)
		elapsed += 10 * time.Second
		e.refreshCalls(t)
	}
}

// TestNodeInNoGroupCostsNoLookupAfterAFreshListing: a node in no group
// costs one lookup; a later refresh that lists a group afresh (here after
// our own scale-up) does not make the node cost another, since that refresh
// already answered for it. Once the bound has passed since the lookup, one
// lookup asks again. Found by the bench: the loop after a scale-up cost 2
// more calls, a lookup refresh for the unmanaged nodes.
func TestNodeInNoGroupCostsNoLookupAfterAFreshListing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.Settle()
	e.refreshCalls(t)
	nowhere := nodeFor(ProviderIDPrefix + "i-in-no-group")
	ask := func() int {
		t.Helper()
		e.fake.ResetRequests()
		if g, err := e.p.NodeGroupForNode(testCtx(t), nowhere); err != nil || g != nil {
			t.Fatalf("NodeGroupForNode(in no group) = %v, %v; want nil, nil", g, err)
		}
		return e.fake.RequestCount()
	}
	if n := ask(); n != 1 {
		t.Fatalf("first ask: %d calls, want 1 (a lookup refresh)", n)
	}
	if err := e.group(t, mainGroupID).IncreaseSize(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if _, listings := e.refreshCalls(t); listings != 1 {
		t.Fatalf("%d listings after our scale-up, want 1", listings)
	}
	if n := ask(); n != 0 {
		t.Fatalf("ask after a refresh that listed a group: %d calls, want 0", n)
	}
	e.clock.Advance(50 * time.Second)
	e.refreshCalls(t)
	if n := ask(); n != 0 {
		t.Fatalf("ask within the bound: %d calls, want 0", n)
	}
	e.clock.Advance(refresh.DefaultMaxStaleness - 50*time.Second)
	e.refreshCalls(t)
	if n := ask(); n != 1 {
		t.Fatalf("ask once the bound has passed: %d calls, want 1 (a lookup refresh)", n)
	}
	if n := ask(); n != 0 {
		t.Fatalf("ask again: %d calls, want 0", n)
	}
}

// TestUnknownNodeOnAnotherPageIsFoundAtOnce: the lookup for an instance the
// snapshot does not know reads the whole group list, since the rotation
// might not read the page of the group that holds it.
func TestUnknownNodeOnAnotherPageIsFoundAtOnce(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(101, 0)))
	e.clock.Advance(10 * time.Second)
	e.refreshCalls(t) // page 1; page 2 is next
	last := catalogGroupID(100)
	id, err := e.fake.LaunchInstance(last)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.p.NodeGroupForNode(testCtx(t), nodeFor(ProviderIDPrefix+id))
	if err != nil || g == nil || g.Id(testCtx(t)) != last {
		t.Fatalf("NodeGroupForNode(instance launched in %s on page 3) = %v, %v; want %s", last, g, err, last)
	}
}

// TestGroupListedOffPageIsReadByID: a group whose instances are listed this
// refresh anyway (here one is pending) is also described afresh, by id when
// its page is not read, so the listing is stored with the description it
// matches.
func TestGroupListedOffPageIsReadByID(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(101, 0)))
	last := catalogGroupID(100)
	e.fake.AddInstance(last, fakeapi.StatusPending)
	for page := 1; page <= 3; page++ {
		e.clock.Advance(10 * time.Second)
		e.refreshCalls(t) // page 3 shows the change and the group is listed
	}
	e.clock.Advance(10 * time.Second)
	n, listings := e.refreshCalls(t)
	if groups := e.fake.CountOperation(fakeapi.ActionDescribeScalingGroups); groups != 2 || listings != 1 || n != 3 {
		t.Fatalf("refresh while %s (page 3) has a pending instance: %d calls (%d DescribeScalingGroups, %d listings), want 3 (2: page 1 and the group by id; 1)", last, n, groups, listings)
	}
}

// TestFailedRefreshReadsTheSamePageAgain: a refresh that fails reading its
// page does not move the rotation on, so failures cannot keep skipping a
// page.
func TestFailedRefreshReadsTheSamePageAgain(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(101, 0)))
	e.clock.Advance(10 * time.Second)
	e.refreshCalls(t) // page 1; page 2 is next
	e.fake.FailNext(10)
	e.clock.Advance(time.Second)
	if err := e.p.Refresh(testCtx(t)); err == nil {
		t.Fatal("refresh with a failing page read succeeded")
	}
	if next := e.p.m.catalog.next; next != 2 {
		t.Fatalf("after a failed read of page 2 the next page is %d, want 2 again", next)
	}
	e.fake.ClearFaults()
	e.fake.ResetRequests()
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if e.p.m.catalog.next != 3 {
		t.Fatalf("after reading page 2 the next page is %d, want 3", e.p.m.catalog.next)
	}
}

// slowPages makes every read of a page of the group list take took on the
// manual clock, as a slow API or the rate limit would.
type slowPages struct {
	cloudAPI
	clock *fakecloud.ManualClock
	took  time.Duration
}

func (s slowPages) ScalingGroupsPage(ctx context.Context, page int) (volcapi.GroupPage, error) {
	s.clock.Advance(s.took)
	return s.cloudAPI.ScalingGroupsPage(ctx, page)
}

// TestSlowRefreshReadsAhead: what a refresh reads is served until the next
// refresh has finished, so a refresh that takes long (a slow API, the rate
// limit) counts towards the horizon too.
func TestSlowRefreshReadsAhead(t *testing.T) {
	// Not parallel: the first refresh of 100 or more groups under -race
	// takes seconds of CPU; beside other tests on a busy machine it can pass
	// the 5 s deadline testCtx gives, as CA does.
	e := newEnv(t, withDiscovery(catalogTag), withSeed(seedCatalog(101, 0)))
	e.clock.Advance(10 * time.Second)
	api := e.p.m.api
	e.p.m.api = slowPages{cloudAPI: api, clock: e.clock, took: 16 * time.Second}
	if n, _ := e.refreshCalls(t); n != 1 {
		t.Fatalf("the slow refresh made %d calls, want 1 (page 1; page 2 is next)", n)
	}
	e.p.m.api = api
	// The next refresh begins 18 s after the slow one began, which took
	// 16 s: what it reads is served for 34 s, so pages 2 and 3, read 28 s
	// ago at the first refresh, are due, page 1 (18 s old) is not. Had the
	// slow refresh's time not counted, page 3 would be due in 18 s more
	// and only page 2 read.
	e.clock.Advance(2 * time.Second)
	if n := groupsCalls(t, e); n != 2 {
		t.Fatalf("%d DescribeScalingGroups calls, want 2 (pages 2 and 3, which would pass the bound before the next refresh ends)", n)
	}
	if age := oldestRecord(e) + 34*time.Second; age >= refresh.DefaultMaxStaleness {
		t.Fatalf("a description will be %v old when the next refresh ends, want younger than the bound", age)
	}
}

func mustGroup(t *testing.T, m *manager, id string) *nodeGroup {
	t.Helper()
	g, ok := m.group(id)
	if !ok {
		t.Fatalf("group %s is not in the snapshot", id)
	}
	return g
}
