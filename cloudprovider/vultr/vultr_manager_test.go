package vultr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// hookClient runs a function between Vultr's answer to the node-pool list and
// the manager seeing it, to interleave a mutation with a Refresh.
type hookClient struct {
	cloudAPI
	afterList func()
}

func (h *hookClient) ListNodePools(ctx context.Context, clusterID string) ([]vultrapi.NodePool, error) {
	pools, err := h.cloudAPI.ListNodePools(ctx, clusterID)
	if h.afterList != nil {
		f := h.afterList
		h.afterList = nil
		f()
	}
	return pools, err
}

func TestRefreshKeepsMutationsNewerThanTheList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		mutate     func(e *testEnv, g *nodeGroup) error
		wantTarget int
	}{
		{name: "increase during refresh", mutate: func(e *testEnv, g *nodeGroup) error { return g.IncreaseSize(e.ctx(), 2) }, wantTarget: 5},
		{name: "delete during refresh", mutate: func(e *testEnv, g *nodeGroup) error {
			return g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, e.main.Nodes[0])})
		}, wantTarget: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			g := e.group("a-main")
			hc := &hookClient{cloudAPI: e.p.m.client}
			e.p.m.client = hc
			hc.afterList = func() {
				if err := tc.mutate(e, g); err != nil {
					t.Error(err)
				}
			}
			e.refresh() // applies a list taken before the mutation
			if got, _ := g.TargetSize(e.ctx()); got != tc.wantTarget {
				t.Fatalf("target %d after a stale list, want %d", got, tc.wantTarget)
			}
			e.refresh() // a fresh list agrees
			if got, _ := g.TargetSize(e.ctx()); got != tc.wantTarget {
				t.Fatalf("target %d after a fresh list, want %d", got, tc.wantTarget)
			}
		})
	}
}

// TestRefreshDoesNotWaitForRunningResize holds a resize inside the fake
// cloud and refreshes meanwhile: the refresh answers at once with what the
// listing says (a node launched behind our back), keeps the size it served
// (the listing may predate the resize), and the resize's effect shows once
// it ends.
func TestRefreshDoesNotWaitForRunningResize(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	g := e.group("a-main")
	release, arrived := make(chan struct{}), make(chan struct{})
	e.fake.AddFault(fakecloud.Fault{Method: http.MethodPatch, Release: release, Arrived: arrived, PassThrough: true})
	resized := make(chan error, 1)
	go func() { resized <- g.IncreaseSize(e.ctx(), 2) }()
	<-arrived
	launched, err := e.fake.LaunchInstance(testClusterID, "a-main")
	if err != nil {
		t.Fatal(err)
	}

	ctx := e.ctx()
	if err := e.p.Refresh(ctx); err != nil {
		t.Fatalf("Refresh during a held resize: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Refresh returned only when its deadline ended: it waited for the running resize")
	}
	select {
	case err := <-resized:
		t.Fatalf("the resize ended (%v) before its release: the test did not hold it", err)
	default:
	}
	ins, _ := g.Nodes(e.ctx())
	if !hasInstance(ins, launched.ID) {
		t.Fatalf("instances %v after a Refresh during a held resize lack %s, launched before the listing", ins, launched.ID)
	}
	if got, _ := g.TargetSize(e.ctx()); got != 3 {
		t.Fatalf("target %d while the resize is held, want 3: a listing taken while a resize runs may predate it", got)
	}

	close(release)
	if err := <-resized; err != nil {
		t.Fatalf("the released resize: %v", err)
	}
	if got, _ := g.TargetSize(e.ctx()); got != 5 {
		t.Fatalf("target %d after the resize ended, want 5", got)
	}
	e.refresh()
	if got, _ := g.TargetSize(e.ctx()); got != 5 {
		t.Fatalf("target %d after a later listing, want 5", got)
	}
}

// hasInstance reports whether ins holds the Vultr instance id.
func hasInstance(ins []cloudprovider.Instance, id string) bool {
	for _, in := range ins {
		if in.Id == ProviderIDPrefix+id {
			return true
		}
	}
	return false
}

func TestFailedRefreshKeepsSnapshotAndBookkeeping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault fakecloud.Fault
		want  error
	}{
		{name: "5xx", fault: fakecloud.Fault{Status: 500, Times: 10}, want: cloudprovider.ErrUnavailable},
		{name: "rate limited", fault: fakecloud.Fault{Status: 429, RetryAfter: "60"}, want: cloudprovider.ErrRateLimited},
		{name: "unauthorized", fault: fakecloud.Fault{Status: 401}, want: cloudprovider.ErrUnauthenticated},
		{name: "malformed", fault: fakecloud.Fault{Status: 200, Body: strp("{")}, want: cloudprovider.ErrMalformedResponse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			g := e.group("a-main")
			victim := e.main.Nodes[0]
			if err := g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, victim)}); err != nil {
				t.Fatal(err)
			}
			if err := g.IncreaseSize(e.ctx(), 1); err != nil {
				t.Fatal(err)
			}
			e.fake.AddFault(tc.fault)
			err := e.p.Refresh(e.ctx())
			if !errors.Is(err, tc.want) {
				t.Fatalf("Refresh error %v, want %v", err, tc.want)
			}
			gs, _ := e.p.NodeGroups(e.ctx())
			if len(gs) != 3 {
				t.Fatalf("%d groups after a failed Refresh", len(gs))
			}
			if got, _ := g.TargetSize(e.ctx()); got != 3 {
				t.Fatalf("target %d, want 3", got)
			}
			ins, _ := g.Nodes(e.ctx())
			found := false
			for _, in := range ins {
				if in.Id == ProviderIDPrefix+victim.ID {
					found = in.Status.State == cloudprovider.InstanceDeleting
				}
			}
			if !found {
				t.Fatal("deleted node lost its deleting state after a failed Refresh")
			}
			if ng, _ := e.p.NodeGroupForNode(e.ctx(), realNode(e.main, e.main.Nodes[1])); ng == nil {
				t.Fatal("index lost after a failed Refresh")
			}
		})
	}
}

func TestPlanCache(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	countPlanCalls := func() int {
		return countRequests(e.fake.Requests(), http.MethodGet, "/v2/plans")
	}
	if n := countPlanCalls(); n != 2 {
		t.Fatalf("first Refresh made %d plan calls, want 2 (plans and plans-metal)", n)
	}
	if n := countRequests(e.fake.Requests(), http.MethodGet, "/v2/kubernetes/clusters/"+testClusterID); n != 2 {
		t.Fatalf("first Refresh made %d cluster calls, want 2 (cluster and node-pools)", n)
	}
	steps := []struct {
		name      string
		advance   time.Duration
		addPool   string // plan of a pool added before the refresh
		wantCalls int    // plan calls made by this step's Refresh
	}{
		{name: "fresh cache", advance: time.Minute, wantCalls: 0},
		{name: "unknown plan, retried", advance: 5 * time.Minute, addPool: "vc2-9c-99gb", wantCalls: 2},
		{name: "unknown plan, not again so soon", advance: time.Minute, wantCalls: 0},
		{name: "unknown plan, retry interval passed", advance: 5 * time.Minute, wantCalls: 2},
		{name: "expired after an hour", advance: time.Hour, wantCalls: 2},
	}
	for i, s := range steps {
		// Not parallel: the steps share one environment and run in order.
		t.Run(s.name, func(t *testing.T) {
			e.clock.Advance(s.advance)
			if s.addPool != "" {
				if _, err := e.fake.AddPool(testClusterID, fakeapi.PoolSpec{ID: "x" + s.addPool, Label: "x", Plan: s.addPool,
					Quantity: 1, Min: 1, Max: 2, AutoScaler: true}); err != nil {
					t.Fatal(err)
				}
			}
			before := countPlanCalls()
			e.refresh()
			if got := countPlanCalls() - before; got != s.wantCalls {
				t.Fatalf("step %d: %d plan calls, want %d", i, got, s.wantCalls)
			}
		})
	}
	// A pool with an unknown plan has no template; CA then treats the group as
	// "not implemented" rather than crashing on an empty template.
	if _, err := e.group("xvc2-9c-99gb").TemplateNodeInfo(e.ctx()); !errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Fatalf("template with unknown plan: %v", err)
	}
}

// TestReadsDoNotWaitForThePlanList holds the hourly re-read of the plans
// inside the fake cloud: templates, prices and GPU types answer meanwhile
// from the previous list, and the refresh ends once the list is released.
func TestReadsDoNotWaitForThePlanList(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	g := e.group("a-main")
	e.clock.Advance(planCacheTTL)
	release, arrived := make(chan struct{}), make(chan struct{})
	e.fake.AddFault(fakecloud.Fault{Method: http.MethodGet, PathContains: "/v2/plans", Release: release, Arrived: arrived, PassThrough: true})
	refreshed := make(chan error, 1)
	go func() { refreshed <- e.p.Refresh(e.ctx()) }()
	<-arrived

	ctx := e.ctx()
	read := make(chan error, 1)
	go func() {
		if _, err := g.TemplateNodeInfo(ctx); err != nil {
			read <- fmt.Errorf("TemplateNodeInfo: %w", err)
			return
		}
		if _, err := e.p.GetAvailableGPUTypes(ctx); err != nil {
			read <- fmt.Errorf("GetAvailableGPUTypes: %w", err)
			return
		}
		pricing, _ := e.p.Pricing(ctx)
		now := e.clock.Now()
		_, err := pricing.NodePrice(ctx, realNode(e.main, e.main.Nodes[0]), now, now.Add(time.Hour))
		read <- err
	}()
	select {
	case err := <-read:
		if err != nil {
			t.Fatalf("a read while the plan list is held: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("reads waited for the held plan list")
	}
	close(release)
	if err := <-refreshed; err != nil {
		t.Fatalf("the refresh whose plan list was held: %v", err)
	}
	if n := countRequests(e.fake.Requests(), http.MethodGet, "/v2/plans"); n != 4 {
		t.Fatalf("%d plan calls, want 4 (both lists at the first refresh and again an hour later)", n)
	}
}

func TestRegionRetriedAfterFailure(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	m := newManager(e.p.m.client, testClusterID, nil, groupstate.GuardOptions{}, e.clock.Now)
	// Fail the call right after the node-pool list: the cluster (region) read.
	hc := &hookClient{cloudAPI: m.client}
	m.client = hc
	hc.afterList = func() { e.fake.AddFault(fakecloud.Fault{Method: "GET", Status: 403}) }
	if err := m.Refresh(e.ctx()); err != nil {
		t.Fatal(err)
	}
	if m.clusterRegion() != "" {
		t.Fatal("region set although the cluster call failed")
	}
	e.clock.Advance(infoRetryInterval)
	if err := m.Refresh(e.ctx()); err != nil {
		t.Fatal(err)
	}
	if got := m.clusterRegion(); got != "ams" {
		t.Fatalf("region %q after retry, want ams", got)
	}
}
