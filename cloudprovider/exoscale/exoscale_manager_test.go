package exoscale

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
)

func TestRefreshErrorsKeepSnapshot(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"GET /v2/sks-cluster", "GET /v2/instance-pool", "GET /v2/instance"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, defaultEnvOptions())
			e.refresh(t)
			ctx := ctx5s(t)
			g := e.group(t, e.workersPool)
			if err := g.IncreaseSize(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if op == "GET /v2/sks-cluster" {
				// Nothing in the pool list needs the nodepool list: it is
				// read again at the staleness bound.
				e.clock.Advance(refresh.DefaultMaxStaleness)
			}
			e.fake.AddFault(fakecloud.Fault{Status: 403, Operation: op})
			err := e.provider.Refresh(ctx)
			if !errors.Is(err, cloudprovider.ErrPermissionDenied) {
				t.Fatalf("Refresh error %v, want ErrPermissionDenied", err)
			}
			if gs, _ := e.provider.NodeGroups(ctx); len(gs) != 4 {
				t.Fatalf("NodeGroups after failed Refresh: %d groups", len(gs))
			}
			if n, _ := g.TargetSize(ctx); n != 5 {
				t.Fatalf("target after failed Refresh = %d, want 5", n)
			}
			e.refresh(t)
			if n, _ := e.group(t, e.workersPool).TargetSize(ctx); n != 5 {
				t.Fatalf("target after recovery = %d, want 5", n)
			}
		})
	}
}

func TestConfiguredClusterMissing(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.cluster = "staging"
	e := newTestEnv(t, o)
	err := e.provider.Refresh(ctx5s(t))
	if !errors.Is(err, cloudprovider.ErrNotFound) {
		t.Fatalf("Refresh error %v, want ErrNotFound naming the cluster", err)
	}
}

func TestSpecMatching(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.cluster = ""
	e := newTestEnv(t, o)
	// A second cluster with a nodepool also called "workers".
	other := e.fake.AddSKSCluster("other")
	_, otherWorkers := e.fake.AddNodepool(other, fakeapi.PoolSeed{Name: "workers", Size: 1})
	e.provider.m.cfg.NodeGroupSpecs = []groupconfig.NodeGroupSpec{
		{MinSize: 1, MaxSize: 5, Name: "workers"},        // ambiguous without a cluster scope
		{MinSize: 2, MaxSize: 6, Name: e.systemPool},     // by pool id
		{MinSize: 1, MaxSize: 7, Name: otherWorkers},     // by pool id, second cluster
		{MinSize: 1, MaxSize: 8, Name: "does-not-exist"}, // a configuration error at the first listing
	}
	err := e.provider.Refresh(ctx5s(t))
	if !errors.Is(err, cloudprovider.ErrConfig) || !strings.Contains(err.Error(), "1:8:does-not-exist") || !strings.Contains(err.Error(), `"workers" matches several`) {
		t.Fatalf("first Refresh = %v, want ErrConfig naming both specs", err)
	}
	// Later listings log the problem and serve the groups that matched.
	e.refresh(t)
	ctx := ctx5s(t)
	gs, _ := e.provider.NodeGroups(ctx)
	got := map[string][2]int{}
	for _, g := range gs {
		got[g.Id(ctx)] = [2]int{g.MinSize(ctx), g.MaxSize(ctx)}
	}
	want := map[string][2]int{e.systemPool: {2, 6}, otherWorkers: {1, 7}}
	if len(got) != len(want) || got[e.systemPool] != want[e.systemPool] || got[otherWorkers] != want[otherWorkers] {
		t.Fatalf("groups %v, want %v", got, want)
	}
	// With the cluster scope, the name resolves inside it.
	e.provider.m.cfg.SKSCluster = "prod"
	e.refresh(t)
	if g := e.provider.m.group(e.workersPool); g == nil || g.MaxSize(ctx) != 5 {
		t.Fatalf("scoped spec did not select prod's workers: %v", g)
	}
}

func TestMinZeroNeedsTemplate(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.specs = []string{"0:4:system"}
	e := newTestEnv(t, o)
	// Both instance type lookups fail (each type is tried once per refresh):
	// no template, so min is raised to 1.
	for i := 0; i < 2; i++ {
		e.fake.AddFault(fakecloud.Fault{Status: 404, Operation: "GET /v2/instance-type/{id}"})
	}
	e.refresh(t)
	if n := e.fake.OperationCounts()["GET /v2/instance-type/{id}"]; n != 2 {
		t.Fatalf("%d instance-type lookups for 2 distinct types, want 2", n)
	}
	ctx := ctx5s(t)
	if m := e.group(t, e.systemPool).MinSize(ctx); m != 1 {
		t.Fatalf("min without template = %d, want 1", m)
	}
	if _, err := e.group(t, e.systemPool).TemplateNodeInfo(ctx); !errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Fatalf("TemplateNodeInfo without a type: %v, want ErrNotImplemented", err)
	}
	e.refresh(t)
	if m := e.group(t, e.systemPool).MinSize(ctx); m != 0 {
		t.Fatalf("min with template = %d, want 0", m)
	}
}

func TestRefreshInterval(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.provider.m.cfg.RefreshInterval = 10 * time.Second
	e.refresh(t)
	e.fake.ResetRequests()
	e.refresh(t)
	if n := e.fake.RequestCount(); n != 0 {
		t.Fatalf("Refresh within the interval made %d calls", n)
	}
	e.clock.Advance(10 * time.Second)
	e.refresh(t)
	if n := e.fake.RequestCount(); n != 1 {
		t.Fatalf("Refresh after the interval made %d calls, want 1 (nothing changed: the pool list)", n)
	}
}

// TestPendingOperations: the pool list settles a group's only pending
// operation when the pool shows the size it asked for; only what the pool
// cannot tell costs a GET /operation (TestFailedOperation and
// TestQuotaAsFailedOperation cover failures found that way).
func TestPendingOperations(t *testing.T) {
	t.Parallel()
	// queued returns an env whose workers pool is busy, so that a scale is
	// accepted and queued: the pool keeps its size until it runs again.
	queued := func(t *testing.T) (*testEnv, *nodeGroup) {
		t.Helper()
		o := defaultEnvOptions()
		o.fake.Busy = fakeapi.BusyQueue
		e := newTestEnv(t, o)
		e.refresh(t)
		e.fake.SetPoolState(e.workersPool, fakeapi.PoolScalingUp)
		g := e.group(t, e.workersPool)
		if err := g.IncreaseSize(ctx5s(t), 1); err != nil {
			t.Fatal(err)
		}
		return e, g
	}
	polls := func(e *testEnv) int { return e.fake.OperationCounts()["GET /v2/operation/{id}"] }

	t.Run("the pool shows the new size: settled without a poll", func(t *testing.T) {
		t.Parallel()
		o := defaultEnvOptions()
		o.fake.OperationDelay = 30 * time.Second // the operation itself is still pending
		e := newTestEnv(t, o)
		e.refresh(t)
		ctx := ctx5s(t)
		g := e.group(t, e.workersPool)
		if err := g.IncreaseSize(ctx, 2); err != nil {
			t.Fatal(err)
		}
		e.fake.ResetRequests()
		e.refresh(t)
		// The loop right after a scale-up: the pool list, and the instance
		// list for the new members (1 + changed groups).
		want := map[string]int{"GET /v2/instance-pool": 1, "GET /v2/instance": 1}
		if calls := e.fake.OperationCounts(); fmt.Sprint(calls) != fmt.Sprint(want) {
			t.Fatalf("Refresh after a scale-up made %v, want %v", calls, want)
		}
		if n, _ := g.TargetSize(ctx); n != 5 || len(g.Pending()) != 0 {
			t.Fatalf("target %d with %d pending, want 5 and 0", n, len(g.Pending()))
		}
	})

	// pendingEnv's operations stay pending for 30 s; the fake applies the
	// change itself at once.
	pendingEnv := func(t *testing.T) (*testEnv, *nodeGroup, []string) {
		t.Helper()
		o := defaultEnvOptions()
		o.fake.OperationDelay = 30 * time.Second
		e := newTestEnv(t, o)
		e.refresh(t)
		return e, e.group(t, e.workersPool), memberIDs(t, e, e.workersPool)
	}
	deleteOne := func(t *testing.T, g *nodeGroup, id string) {
		t.Helper()
		if err := g.DeleteNodes(ctx5s(t), []*corev1.Node{node(ProviderIDPrefix + id)}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("two evictions: the pool shows both", func(t *testing.T) {
		t.Parallel()
		e, g, members := pendingEnv(t)
		deleteOne(t, g, members[0])
		deleteOne(t, g, members[1])
		e.fake.ResetRequests()
		e.refresh(t)
		if n := polls(e); n != 0 || len(g.Pending()) != 0 {
			t.Fatalf("%d polls, %d pending; want 0 and 0", n, len(g.Pending()))
		}
		if n, _ := g.TargetSize(ctx5s(t)); n != 1 {
			t.Fatalf("target %d, want 1", n)
		}
	})

	t.Run("a scale-up then an eviction: polled", func(t *testing.T) {
		t.Parallel()
		// 3 -> 4 -> 3: a failed scale-up and a pending eviction would show
		// the same size.
		e, g, members := pendingEnv(t)
		if err := g.IncreaseSize(ctx5s(t), 1); err != nil {
			t.Fatal(err)
		}
		deleteOne(t, g, members[0])
		e.fake.ResetRequests()
		e.refresh(t)
		if n := polls(e); n != 2 || len(g.Pending()) != 2 {
			t.Fatalf("%d polls, %d pending; want 2 and 2", n, len(g.Pending()))
		}
	})

	t.Run("queued: polled until the pool shows it", func(t *testing.T) {
		t.Parallel()
		e, g := queued(t)
		ctx := ctx5s(t)
		for range 2 {
			e.fake.ResetRequests()
			e.refresh(t)
			if n := polls(e); n != 1 {
				t.Fatalf("queued operation polled %d times in a Refresh, want 1", n)
			}
			if n, _ := g.TargetSize(ctx); n != 4 || len(g.Pending()) != 1 {
				t.Fatalf("target %d with %d pending while queued, want 4 and 1", n, len(g.Pending()))
			}
		}
		e.fake.SetPoolState(e.workersPool, "") // runs again: the queued scale applies
		e.fake.ResetRequests()
		e.refresh(t)
		if n := polls(e); n != 0 || len(g.Pending()) != 0 {
			t.Fatalf("once the pool showed the size: %d polls, %d pending; want 0 and 0", n, len(g.Pending()))
		}
		if n, _ := g.TargetSize(ctx); n != 4 {
			t.Fatalf("target %d, want 4", n)
		}
	})

	t.Run("a success seen after the pool list settles with a second list", func(t *testing.T) {
		t.Parallel()
		e, g := queued(t)
		ctx := ctx5s(t)
		// The queued scale applies between the pool list and the poll.
		e.provider.m.client = &hookAPI{cloudAPI: e.provider.m.client, hook: func() { e.fake.SetPoolState(e.workersPool, "") }}
		e.fake.ResetRequests()
		e.refresh(t)
		// Settling it from the first list would serve its old size (3);
		// the second, taken after the poll, shows 4.
		if n, lists := polls(e), e.fake.OperationCounts()["GET /v2/instance-pool"]; n != 1 || lists != 2 {
			t.Fatalf("%d polls and %d pool lists, want 1 and 2", n, lists)
		}
		if n, _ := g.TargetSize(ctx); n != 4 || len(g.Pending()) != 0 {
			t.Fatalf("target %d with %d pending after a success newer than the first pool list, want 4 and 0", n, len(g.Pending()))
		}
	})

	t.Run("without the second list the success waits for the next refresh", func(t *testing.T) {
		t.Parallel()
		e, g := queued(t)
		ctx := ctx5s(t)
		e.provider.m.client = &hookAPI{cloudAPI: e.provider.m.client, hook: func() { e.fake.SetPoolState(e.workersPool, "") }}
		e.fake.AddFault(fakecloud.Fault{Status: 400, Operation: "GET /v2/instance-pool", Skip: 1})
		e.fake.ResetRequests()
		e.refresh(t)
		if n := polls(e); n != 1 {
			t.Fatalf("%d polls, want 1", n)
		}
		// The first list's old size (3) must not be served as settled.
		if n, _ := g.TargetSize(ctx); n != 4 || len(g.Pending()) != 1 {
			t.Fatalf("target %d with %d pending after the second list failed, want 4 and 1", n, len(g.Pending()))
		}
		e.fake.ResetRequests()
		e.refresh(t)
		if n := polls(e); n != 0 || len(g.Pending()) != 0 {
			t.Fatalf("next Refresh: %d polls, %d pending; want 0 and 0", n, len(g.Pending()))
		}
		if n, _ := g.TargetSize(ctx); n != 4 {
			t.Fatalf("target %d, want 4", n)
		}
	})

	t.Run("a listing a mutation overtook settles and polls nothing", func(t *testing.T) {
		t.Parallel()
		e, g := queued(t)
		ctx := ctx5s(t)
		// A second scale, queued too, accepted while the pool list is taken.
		e.provider.m.client = &hookAPI{cloudAPI: e.provider.m.client, hook: func() {
			if err := g.IncreaseSize(ctx, 1); err != nil {
				t.Errorf("IncreaseSize during the refresh: %v", err)
			}
		}}
		e.fake.ResetRequests()
		e.refresh(t)
		if n := polls(e); n != 0 || len(g.Pending()) != 2 {
			t.Fatalf("overtaken refresh: %d polls, %d pending; want 0 and 2", n, len(g.Pending()))
		}
		if n, _ := g.TargetSize(ctx); n != 5 {
			t.Fatalf("target %d after the overtaken refresh, want 5", n)
		}
		e.fake.ResetRequests()
		e.refresh(t)
		if n := polls(e); n != 2 || len(g.Pending()) != 2 {
			t.Fatalf("next refresh: %d polls, %d pending; want 2 and 2", n, len(g.Pending()))
		}
		if n, _ := g.TargetSize(ctx); n != 5 {
			t.Fatalf("target %d while both scales are queued, want 5", n)
		}
	})

	t.Run("an operation the API has forgotten counts as done", func(t *testing.T) {
		t.Parallel()
		e, g := queued(t)
		e.fake.AddFault(fakecloud.Fault{Status: 404, Operation: "GET /v2/operation/{id}"})
		e.refresh(t)
		e.fake.ResetRequests()
		e.refresh(t)
		if n := polls(e); n != 0 || len(g.Pending()) != 0 {
			t.Fatalf("after a 404: %d polls, %d pending; want 0 and 0", n, len(g.Pending()))
		}
	})
}

// TestConcurrentUse runs reads, lookups, mutations and refreshes together;
// run with -race.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	g := e.group(t, e.workersPool)
	nodes, _ := g.Nodes(ctx5s(t))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(4)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = e.provider.Refresh(ctx)
		}()
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = g.IncreaseSize(ctx, 1)
		}()
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for _, n := range nodes {
				if got, err := e.provider.NodeGroupForNode(ctx, node(n.Id)); err != nil || got == nil {
					t.Errorf("NodeGroupForNode(%s) = %v, %v", n.Id, got, err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for _, gr := range e.provider.m.nodeGroups() {
				_, _ = gr.Nodes(ctx)
				_, _ = gr.TargetSize(ctx)
				_ = gr.Debug(ctx)
				_, _ = gr.TemplateNodeInfo(ctx)
			}
		}()
	}
	wg.Wait()
	ctx := ctx5s(t)
	if n, _ := g.TargetSize(ctx); n != 11 {
		t.Fatalf("target after 8 concurrent increases = %d, want 11", n)
	}
	e.refresh(t)
	if p, _ := e.fake.Pool(e.workersPool); p.Size != 11 {
		t.Fatalf("cloud size %d, want 11", p.Size)
	}
	_ = exoapi.OperationSuccess
}

// TestQuotaForbidden: a key without get-quota still works; the quota is
// retried only after its TTL and groups fall back to the documented cap.
func TestQuotaForbidden(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.fake.AddFault(fakecloud.Fault{Status: 403, Operation: "GET /v2/quota/instance"})
	e.refresh(t)
	if m := e.group(t, e.systemPool).MaxSize(ctx5s(t)); m != defaultUnlimitedMaxSize {
		t.Fatalf("max without quota = %d, want %d", m, defaultUnlimitedMaxSize)
	}
	e.fake.ResetRequests()
	e.refresh(t)
	if n := e.fake.RequestCount(); n != 1 {
		t.Fatalf("Refresh after a failed quota read made %d calls, want 1 (no quota retry, nothing changed)", n)
	}
	e.clock.Advance(quotaTTL)
	e.refresh(t)
	if m := e.group(t, e.systemPool).MaxSize(ctx5s(t)); m != 2000 {
		t.Fatalf("max after the quota was read = %d, want 2000", m)
	}
}

// hookAPI runs hook once, right after the pool list was taken.
type hookAPI struct {
	cloudAPI
	once sync.Once
	hook func()
}

func (h *hookAPI) ListInstancePools(ctx context.Context) ([]exoapi.InstancePool, error) {
	pools, err := h.cloudAPI.ListInstancePools(ctx)
	h.once.Do(h.hook)
	return pools, err
}

// TestMutationDuringRefresh: an increase accepted while a refresh is listing
// must survive that refresh, whose lists predate it.
func TestMutationDuringRefresh(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	ctx := ctx5s(t)
	g := e.group(t, e.workersPool)
	h := &hookAPI{cloudAPI: e.provider.m.client}
	h.hook = func() {
		if err := g.IncreaseSize(ctx, 2); err != nil {
			t.Errorf("IncreaseSize during refresh: %v", err)
		}
	}
	e.provider.m.client = h
	e.refresh(t)
	if n, _ := g.TargetSize(ctx); n != 5 {
		t.Fatalf("target after a refresh that listed before the increase = %d, want 5", n)
	}
	e.refresh(t)
	if n, _ := g.TargetSize(ctx); n != 5 || len(g.Pending()) != 0 {
		t.Fatalf("next refresh: target %d, %d pending; want 5 and 0", n, len(g.Pending()))
	}
}

// TestOlderListingKeepsReadSize: an increase the cloud applied with an
// unusable answer leaves no operation to track; the guard's fresh read
// right after it is the only record of the new size. A Refresh whose pool
// list began before the increase must not serve the list's older size
// (the ledger's overtaken rule); the next one serves the cloud's.
func TestOlderListingKeepsReadSize(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	ctx := ctx5s(t)
	g := e.group(t, e.workersPool)
	release, arrived := make(chan struct{}), make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	e.fake.AddFault(fakecloud.Fault{Method: http.MethodGet, Operation: "GET /v2/instance-pool", Release: release, Arrived: arrived, AnswerOnArrival: true})
	done := make(chan error, 1)
	go func() { done <- e.provider.Refresh(ctx) }()
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("Refresh ended (err %v) without sending the held pool list", err)
	}
	e.fake.AddFault(fakecloud.Fault{Method: http.MethodPut, PathContains: ":scale", AfterApply: true, Malformed: true})
	reads := e.fake.CountOperation("GET /v2/instance-pool/{id}")
	if err := g.IncreaseSize(ctx, 1); err != nil {
		t.Fatalf("IncreaseSize(1) answered with a malformed body: %v", err)
	}
	if n := e.fake.CountOperation("GET /v2/instance-pool/{id}") - reads; n != 1 {
		t.Fatalf("%d pool reads after an increase with an unusable answer, want 1", n)
	}
	if n, _ := g.TargetSize(ctx); n != 4 || len(g.Pending()) != 0 {
		t.Fatalf("target %d with %d pending after the read, want 4 and 0", n, len(g.Pending()))
	}
	close(release)
	released = true
	if err := <-done; err != nil {
		t.Fatalf("Refresh with the held pool list: %v", err)
	}
	if n, _ := g.TargetSize(ctx); n != 4 {
		t.Fatalf("target after a Refresh whose pool list began before the increase = %d, want 4: the older list overwrote the read", n)
	}
	e.refresh(t)
	if p, _ := e.fake.Pool(e.workersPool); p.Size != 4 {
		t.Fatalf("cloud size %d, want 4", p.Size)
	}
	if n, _ := g.TargetSize(ctx); n != 4 {
		t.Fatalf("target after the next Refresh = %d, want the cloud's 4", n)
	}
}

// TestPolledSuccessSettlesInOneRefresh: an eviction the pool list cannot
// confirm (an instance launched by someone else since put the size back) is
// polled; once the cloud is idle, the first Refresh that sees the operation
// succeed serves the cloud's size, not the eviction's expectation.
func TestPolledSuccessSettlesInOneRefresh(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.fake.OperationDelay = 30 * time.Second
	e := newTestEnv(t, o)
	e.refresh(t)
	ctx := ctx5s(t)
	g := e.group(t, e.workersPool)
	members := memberIDs(t, e, e.workersPool)
	if err := g.DeleteNodes(ctx, []*corev1.Node{node(ProviderIDPrefix + members[0])}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.LaunchInstance(e.workersPool); err != nil {
		t.Fatal(err)
	}
	// The pool is back at 3, so the list cannot tell the eviction (3 -> 2)
	// was applied: it is polled, and still pending.
	e.refresh(t)
	if n, _ := g.TargetSize(ctx); n != 2 || len(g.Pending()) != 1 {
		t.Fatalf("while the eviction is pending: target %d with %d pending, want 2 and 1", n, len(g.Pending()))
	}
	e.fake.Settle()
	e.refresh(t)
	p, _ := e.fake.Pool(e.workersPool)
	if n, _ := g.TargetSize(ctx); n != p.Size || len(g.Pending()) != 0 {
		t.Fatalf("after the cloud finished: target %d with %d pending, want the cloud's %d and 0", n, len(g.Pending()), p.Size)
	}
}

func TestGroupThatLeavesAnswersNotFound(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	if err := e.provider.Refresh(ctx5s(t)); err != nil {
		t.Fatal(err)
	}
	var batch cloudprovider.NodeGroup
	groups, _ := e.provider.NodeGroups(ctx5s(t))
	for _, g := range groups {
		if g.Id(ctx5s(t)) == e.batchPool {
			batch = g
		}
	}
	if batch == nil {
		t.Fatal("pool batch is not a node group")
	}
	e.fake.RemoveInstancePool(e.batchPool)
	if err := e.provider.Refresh(ctx5s(t)); err != nil {
		t.Fatal(err)
	}
	// CA holds the group until its next Refresh.
	if _, err := batch.TargetSize(ctx5s(t)); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Errorf("TargetSize of a pool that left: err %v, want ErrNodeGroupNotFound", err)
	}
	if _, err := batch.Nodes(ctx5s(t)); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Errorf("Nodes of a pool that left: err %v, want ErrNodeGroupNotFound", err)
	}
	before := e.fake.RequestCount()
	if err := batch.IncreaseSize(ctx5s(t), 1); err == nil {
		t.Error("IncreaseSize of a pool that left succeeded")
	}
	if got := e.fake.RequestCount() - before; got != 0 {
		t.Errorf("IncreaseSize of a pool that left made %d cloud calls, want 0", got)
	}
}
