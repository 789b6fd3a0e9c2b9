package exoscale

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

func memberIDs(t *testing.T, e *testEnv, poolID string) []string {
	t.Helper()
	p, ok := e.fake.Pool(poolID)
	if !ok {
		t.Fatalf("no pool %s", poolID)
	}
	var ids []string
	for _, m := range p.Members {
		if m.State != fakeapi.InstanceDestroying {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

func TestRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		fault     fakecloud.Fault
		operation string
		call      func(ctx context.Context, e *testEnv, g *nodeGroup) error
		wantErr   error
		wantCalls int
	}{
		{"429 with a short Retry-After is retried", fakecloud.Fault{Status: 429, RetryAfter: "1"}, "PUT /v2/sks-cluster/{id}/nodepool/{id}:scale",
			func(ctx context.Context, e *testEnv, g *nodeGroup) error { return g.IncreaseSize(ctx, 1) }, nil, 2},
		{"502 on an absolute scale is retried", fakecloud.Fault{Status: 502}, "PUT /v2/sks-cluster/{id}/nodepool/{id}:scale",
			func(ctx context.Context, e *testEnv, g *nodeGroup) error { return g.IncreaseSize(ctx, 1) }, nil, 2},
		{"500 on evict is not retried", fakecloud.Fault{Status: 500}, "PUT /v2/sks-cluster/{id}/nodepool/{id}:evict",
			func(ctx context.Context, e *testEnv, g *nodeGroup) error {
				return g.DeleteNodes(ctx, []*corev1.Node{node(ProviderIDPrefix + memberIDs(t, e, g.id)[0])})
			}, cloudprovider.ErrUnavailable, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, defaultEnvOptions())
			e.refresh(t)
			g := e.group(t, e.workersPool)
			f := tc.fault
			f.Operation = tc.operation
			e.fake.AddFault(f)
			e.fake.ResetRequests()
			err := tc.call(ctx5s(t), e, g)
			if (tc.wantErr == nil) != (err == nil) || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if n := e.fake.OperationCounts()[tc.operation]; n != tc.wantCalls {
				t.Fatalf("%d requests to %s, want %d", n, tc.operation, tc.wantCalls)
			}
		})
	}
}

func TestRateLimitCarriesRetryAfter(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	e.fake.AddFault(fakecloud.Fault{Status: 429, RetryAfter: "90"})
	err := e.group(t, e.workersPool).IncreaseSize(ctx5s(t), 1)
	if cloudhttp.RetryAfterOf(err) != 90*time.Second || !errors.Is(err, cloudprovider.ErrRateLimited) {
		t.Fatalf("error %v: want ErrRateLimited with RetryAfter 90s", err)
	}
}

// TestFailedOperation: a scale the cloud accepts but fails later becomes
// failed slots (Creating + error info) that CA removes without a cloud call.
func TestFailedOperation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reason string
		quota        int64
		wantClass    cloudprovider.InstanceErrorClass
		wantCode     string
	}{
		{"capacity", "unavailable", 2000, cloudprovider.OutOfResourcesErrorClass, "exoscale-operation-unavailable"},
		{"quota", "forbidden", 9, cloudprovider.OutOfResourcesErrorClass, errorCodeQuota},
		{"other", "fault", 2000, cloudprovider.OtherErrorClass, "exoscale-operation-fault"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := defaultEnvOptions()
			o.fake.OperationDelay = 10 * time.Second
			o.fake.QuotaLimit = 2000
			e := newTestEnv(t, o)
			e.refresh(t)
			e.fake.SetQuotaLimit(tc.quota)
			e.clock.Advance(quotaTTL)
			e.refresh(t)
			e.fake.SetQuotaLimit(2000)
			g := e.group(t, e.workersPool)
			ctx := ctx5s(t)
			e.fake.FailNextOperation(exoapi.OperationFailure, tc.reason, "could not create")
			if err := g.IncreaseSize(ctx, 2); err != nil {
				t.Fatalf("IncreaseSize: %v", err)
			}
			e.refresh(t) // operation still pending: target holds
			if n, _ := g.TargetSize(ctx); n != 5 {
				t.Fatalf("target while pending = %d, want 5", n)
			}
			e.clock.Advance(11 * time.Second)
			e.refresh(t)
			nodes, _ := g.Nodes(ctx)
			var failed []*corev1.Node
			for _, in := range nodes {
				if in.Status.ErrorInfo != nil {
					if in.Status.State != cloudprovider.InstanceCreating || in.Status.ErrorInfo.ErrorClass != tc.wantClass || in.Status.ErrorInfo.ErrorCode != tc.wantCode {
						t.Fatalf("failed slot status %+v / %+v", in.Status, in.Status.ErrorInfo)
					}
					n := node(in.Id)
					n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "create-error"}
					failed = append(failed, n)
					if got, _ := e.provider.NodeGroupForNode(ctx, n); got == nil || got.Id(ctx) != g.id {
						t.Fatalf("NodeGroupForNode(%s) = %v", in.Id, got)
					}
				}
			}
			if len(failed) != 2 {
				t.Fatalf("%d failed slots, want 2: %+v", len(failed), nodes)
			}
			if n, _ := g.TargetSize(ctx); n != 5 {
				t.Fatalf("target with failed slots = %d, want 5 (3 + 2 failed)", n)
			}
			e.fake.ResetRequests()
			if err := g.DeleteNodes(ctx, failed); err != nil {
				t.Fatalf("DeleteNodes(failed slots): %v", err)
			}
			if n := e.fake.RequestCount(); n != 0 {
				t.Fatalf("removing failed slots made %d cloud calls", n)
			}
			if n, _ := g.TargetSize(ctx); n != 3 {
				t.Fatalf("target after cleanup = %d, want 3", n)
			}
			// CA repeats deletions of create-error nodes until they vanish.
			if err := g.DeleteNodes(ctx, failed); err != nil {
				t.Fatalf("repeated DeleteNodes: %v", err)
			}
			// A deleted slot stays gone: no listing reports it again.
			e.refresh(t)
			if n, _ := g.TargetSize(ctx); n != 3 {
				t.Fatalf("target after cleanup and a Refresh = %d, want 3", n)
			}
			if slots := failedSlotIDs(t, g); len(slots) != 0 {
				t.Fatalf("failed slots %v after CA deleted them and a Refresh, want none", slots)
			}
		})
	}
}

// failedSlotIDs returns the providerIDs of g's failed creations, as Nodes
// lists them.
func failedSlotIDs(t *testing.T, g *nodeGroup) []string {
	t.Helper()
	nodes, err := g.Nodes(ctx5s(t))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range nodes {
		if in.Status != nil && in.Status.ErrorInfo != nil {
			ids = append(ids, in.Id)
		}
	}
	return ids
}

// failedScaleUp makes a scale-up of workers by 2 whose operation fails once
// it has been pending a while, and returns the group after the Refresh that
// reports the two slots.
func failedScaleUp(t *testing.T) (*testEnv, *nodeGroup) {
	t.Helper()
	o := defaultEnvOptions()
	o.fake.OperationDelay = 10 * time.Second
	e := newTestEnv(t, o)
	e.refresh(t)
	g := e.group(t, e.workersPool)
	e.fake.FailNextOperation(exoapi.OperationFailure, "unavailable", "no capacity")
	if err := g.IncreaseSize(ctx5s(t), 2); err != nil {
		t.Fatalf("IncreaseSize: %v", err)
	}
	e.clock.Advance(11 * time.Second)
	e.refresh(t)
	if slots := failedSlotIDs(t, g); len(slots) != 2 {
		t.Fatalf("failed slots %v after the scale-up's operation failed, want 2", slots)
	}
	return e, g
}

// TestFailedSlotsExpire: a failed slot CA never deletes ends with the
// operations it came from (staleOperation), and the target with it.
func TestFailedSlotsExpire(t *testing.T) {
	t.Parallel()
	e, g := failedScaleUp(t)
	ctx := ctx5s(t)
	e.clock.Advance(staleOperation - time.Second)
	e.refresh(t)
	if n, _ := g.TargetSize(ctx); n != 5 {
		t.Fatalf("target a moment before the slots expire = %d, want 5 (3 + 2 failed)", n)
	}
	e.clock.Advance(2 * time.Second)
	e.refresh(t)
	if slots := failedSlotIDs(t, g); len(slots) != 0 {
		t.Fatalf("failed slots %v older than %v, want none", slots, staleOperation)
	}
	if n, _ := g.TargetSize(ctx); n != 3 {
		t.Fatalf("target once the slots expired = %d, want 3", n)
	}
}

// TestDecreaseDropsFailedSlots: DecreaseTargetSize gives up failed slots
// first, the oldest first, without a cloud call (the pool's size never
// counted them), and a Refresh does not bring them back.
func TestDecreaseDropsFailedSlots(t *testing.T) {
	t.Parallel()
	e, g := failedScaleUp(t)
	ctx := ctx5s(t)
	slots := failedSlotIDs(t, g)
	e.fake.ResetRequests()
	if err := g.DecreaseTargetSize(ctx, -1); err != nil {
		t.Fatalf("DecreaseTargetSize(-1) with 2 failed slots: %v", err)
	}
	if n := e.fake.RequestCount(); n != 0 {
		t.Fatalf("dropping a failed slot made %d cloud calls", n)
	}
	if n, _ := g.TargetSize(ctx); n != 4 {
		t.Fatalf("target after dropping a failed slot = %d, want 4", n)
	}
	e.refresh(t)
	if left := failedSlotIDs(t, g); len(left) != 1 || left[0] != slots[1] {
		t.Fatalf("failed slots after DecreaseTargetSize(-1) and a Refresh = %v, want only the newer %s", left, slots[1])
	}
	if n, _ := g.TargetSize(ctx); n != 4 {
		t.Fatalf("target after a Refresh = %d, want 4", n)
	}
}

func TestInstanceInErrorState(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	bad := memberIDs(t, e, e.workersPool)[1]
	e.fake.SetInstanceState(bad, fakeapi.InstanceError)
	e.refresh(t)
	g := e.group(t, e.workersPool)
	ctx := ctx5s(t)
	nodes, _ := g.Nodes(ctx)
	for _, in := range nodes {
		if in.Id == ProviderIDPrefix+bad {
			if in.Status.State != cloudprovider.InstanceCreating || in.Status.ErrorInfo == nil {
				t.Fatalf("errored instance status %+v", in.Status)
			}
			n := node(in.Id)
			n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "create-error"}
			if err := g.DeleteNodes(ctx, []*corev1.Node{n}); err != nil {
				t.Fatalf("DeleteNodes(errored): %v", err)
			}
			if v, _ := e.fake.Instance(bad); v.State != fakeapi.InstanceDestroying {
				t.Fatalf("errored instance state in the cloud = %s, want destroying", v.State)
			}
			return
		}
	}
	t.Fatal("errored instance not listed")
}

func TestDeleteNodes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	g := e.group(t, e.workersPool)
	ctx := ctx5s(t)
	ids := memberIDs(t, e, e.workersPool)
	batch := memberIDs(t, e, e.batchPool)
	for _, tc := range []struct {
		name  string
		nodes []*corev1.Node
	}{
		{"empty", nil},
		{"nil node", []*corev1.Node{nil}},
		{"duplicate", []*corev1.Node{node(ProviderIDPrefix + ids[0]), node(ProviderIDPrefix + ids[0])}},
		{"member of another pool", []*corev1.Node{node(ProviderIDPrefix + batch[0])}},
		{"unknown instance", []*corev1.Node{node(ProviderIDPrefix + "00000000-0000-4000-8000-00000000beef")}},
		{"malformed placeholder", []*corev1.Node{node(placeholderPrefix + g.id + "/7")}},
		{"placeholder of another group", []*corev1.Node{node(placeholderPrefix + e.batchPool + "/failed-1")}},
	} {
		// Not parallel: the steps share one environment and run in order.
		t.Run(tc.name, func(t *testing.T) {
			e.fake.ResetRequests()
			if err := g.DeleteNodes(ctx, tc.nodes); !errors.Is(err, cloudprovider.ErrInvalidArgument) {
				t.Fatalf("error %v, want ErrInvalidArgument", err)
			}
			if n := e.fake.RequestCount(); n != 0 {
				t.Fatalf("%d cloud calls for a rejected request", n)
			}
		})
	}
	// Not parallel: the steps share one environment and run in order.
	t.Run("evicts exactly the listed members, idempotently", func(t *testing.T) {
		if err := g.DeleteNodes(ctx, []*corev1.Node{node(ProviderIDPrefix + ids[0])}); err != nil {
			t.Fatal(err)
		}
		nodes, _ := g.Nodes(ctx)
		for _, in := range nodes {
			deleting := in.Status.State == cloudprovider.InstanceDeleting
			if deleting != (in.Id == ProviderIDPrefix+ids[0]) {
				t.Fatalf("instance %s deleting=%v", in.Id, deleting)
			}
		}
		e.fake.ResetRequests()
		if err := g.DeleteNodes(ctx, []*corev1.Node{node(ProviderIDPrefix + ids[0])}); err != nil {
			t.Fatalf("repeated delete: %v", err)
		}
		if n := e.fake.RequestCount(); n != 0 {
			t.Fatalf("repeated delete made %d calls", n)
		}
		if n, _ := g.TargetSize(ctx); n != 2 {
			t.Fatalf("target %d, want 2", n)
		}
		for _, id := range ids[1:] {
			if v, _ := e.fake.Instance(id); v.State != fakeapi.InstanceRunning {
				t.Fatalf("member %s not asked for is %s", id, v.State)
			}
		}
	})
}

func TestDecreaseTargetSize(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	g := e.group(t, e.workersPool)
	ctx := ctx5s(t)
	e.fake.ResetRequests()
	if err := g.DecreaseTargetSize(ctx, -1); !errors.Is(err, cloudprovider.ErrFailedPrecondition) {
		t.Fatalf("decrease with every member created: %v, want ErrFailedPrecondition", err)
	}
	if n := e.fake.RequestCount(); n != 0 {
		t.Fatalf("refused decrease made %d calls", n)
	}
	if err := g.IncreaseSize(ctx, 3); err != nil {
		t.Fatal(err)
	}
	// The snapshot does not list the new members yet, and a smaller :scale
	// may remove any member: nothing is sent.
	e.fake.ResetRequests()
	if err := g.DecreaseTargetSize(ctx, -2); !errors.Is(err, cloudprovider.ErrFailedPrecondition) {
		t.Fatalf("cancelling 2 members the cloud already created: %v, want ErrFailedPrecondition", err)
	}
	if n := e.fake.CountOperation("PUT /v2/sks-cluster/{id}/nodepool/{id}:scale"); n != 0 {
		t.Fatalf("refused decrease sent %d scale calls", n)
	}
	if n, _ := g.TargetSize(ctx); n != 6 {
		t.Fatalf("target %d, want 6", n)
	}
	e.refresh(t)
	if p, _ := e.fake.Pool(e.workersPool); p.Size != 6 || len(p.Members) != 6 {
		t.Fatalf("cloud size %d with %d members, want 6", p.Size, len(p.Members))
	}
}

// TestDecreaseWhileMembersUnlisted: while the pool's size counts members
// no list shows yet, and a smaller :scale removes the oldest members, a
// decrease is refused without a call and every running member stays.
func TestDecreaseWhileMembersUnlisted(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.fake.ScaleDownOldestFirst = true
	e := newTestEnv(t, o)
	e.refresh(t)
	g := e.group(t, e.workersPool)
	ctx := ctx5s(t)
	before, _ := e.fake.Pool(e.workersPool)
	if err := e.fake.ListScaleUpLate(e.workersPool); err != nil {
		t.Fatal(err)
	}
	if err := g.IncreaseSize(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.refresh(t)
	e.fake.ResetRequests()
	err := g.DecreaseTargetSize(ctx, -1)
	if !errors.Is(err, cloudprovider.ErrFailedPrecondition) || !strings.Contains(err.Error(), "1 of its 4 instances are not listed yet") {
		t.Fatalf("decrease with a member not listed yet: %v, want ErrFailedPrecondition naming the unlisted member", err)
	}
	if n := e.fake.RequestCount(); n != 0 {
		t.Fatalf("refused decrease made %d calls", n)
	}
	e.fake.Settle()
	after, _ := e.fake.Pool(e.workersPool)
	running := map[string]bool{}
	for _, m := range after.Members {
		running[m.ID] = m.State == fakeapi.InstanceRunning
	}
	for _, m := range before.Members {
		if !running[m.ID] {
			t.Fatalf("member %s, running before, is not running now: %+v", m.ID, after.Members)
		}
	}
	if after.Size != 4 || len(running) != 4 {
		t.Fatalf("pool size %d with %d members, want 4 of both", after.Size, len(running))
	}
}

// TestConcurrentIncreaseBusyPool: with a cloud that refuses changes while a
// pool scales, 64 concurrent IncreaseSize(1) end with exactly the accepted one.
func TestConcurrentIncreaseBusyPool(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.fake.Busy = fakeapi.BusyRefuse
	e := newTestEnv(t, o)
	e.refresh(t)
	g := e.group(t, e.workersPool)
	var ok atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := g.IncreaseSize(ctx, 1)
			switch {
			case err == nil:
				ok.Add(1)
			case !errors.Is(err, cloudprovider.ErrFailedPrecondition):
				t.Errorf("unexpected error class: %v", err)
			}
		}()
	}
	wg.Wait()
	ctx := ctx5s(t)
	if ok.Load() != 1 {
		t.Fatalf("%d increases accepted by a pool that refuses while busy, want 1", ok.Load())
	}
	if n, _ := g.TargetSize(ctx); n != 4 {
		t.Fatalf("target %d, want 4", n)
	}
	e.refresh(t)
	if p, _ := e.fake.Pool(e.workersPool); p.Size != 4 {
		t.Fatalf("cloud size %d, want 4", p.Size)
	}
}

func TestNodesStatesAndPlaceholderLookup(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	g := e.group(t, e.workersPool)
	ctx := ctx5s(t)
	if err := g.IncreaseSize(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.refresh(t)
	nodes, _ := g.Nodes(ctx)
	creating := 0
	for _, in := range nodes {
		if !strings.HasPrefix(in.Id, ProviderIDPrefix) {
			t.Fatalf("instance id %q lacks the providerID prefix", in.Id)
		}
		if in.Status.State == cloudprovider.InstanceCreating {
			creating++
		}
	}
	if creating != 1 || len(nodes) != 4 {
		t.Fatalf("%d instances, %d creating; want 4 and 1", len(nodes), creating)
	}
	e.clock.Advance(2 * time.Minute)
	e.refresh(t)
	nodes, _ = g.Nodes(ctx)
	for _, in := range nodes {
		if in.Status.State != cloudprovider.InstanceRunning {
			t.Fatalf("after provisioning %s is %v", in.Id, in.Status.State)
		}
	}
}

// TestOperationFinalOnSubmission: an operation the cloud answers as already
// over. A failure is a refusal: the call fails, nothing is re-read or
// quarantined. A timeout, or a failure the cloud reports as partial, may
// have changed the pool: the call fails, the pool is read at once, and the
// next change is not quarantined either.
func TestOperationFinalOnSubmission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, state, reason string
		wantRead            bool
		wantClass           error
	}{
		{"failure", exoapi.OperationFailure, "busy", false, cloudprovider.ErrFailedPrecondition},
		{"failure forbidden", exoapi.OperationFailure, "forbidden", false, cloudprovider.ErrPermissionDenied},
		{"failure partial", exoapi.OperationFailure, exoapi.OperationReasonPartial, true, cloudprovider.ErrUnavailable},
		{"timeout", exoapi.OperationTimeout, "", true, cloudprovider.ErrUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := defaultEnvOptions()
			o.build.Guard = cloudprovidertest.GuardOptions(cloudprovidertest.MutationClock())
			e := newTestEnv(t, o)
			e.refresh(t)
			g := e.group(t, e.workersPool)
			ctx := ctx5s(t)
			e.fake.FailNextOperation(tc.state, tc.reason, "did not finish")
			e.fake.ResetRequests()
			err := g.IncreaseSize(ctx, 1)
			if err == nil || !errors.Is(err, tc.wantClass) {
				t.Fatalf("IncreaseSize with an operation that ended in %s/%s: %v, want %v", tc.state, tc.reason, err, tc.wantClass)
			}
			want := cloudprovider.MutationRefused
			if tc.wantRead {
				want = cloudprovider.MutationApplied
			}
			if got := cloudprovider.OutcomeOf(err); got != want {
				t.Fatalf("outcome %s, want %s", got, want)
			}
			reads := 0
			for _, r := range e.fake.Requests() {
				if r.Method == http.MethodGet {
					reads++
				}
			}
			if (reads == 1) != tc.wantRead || reads > 1 {
				t.Fatalf("%d reads after the call, want a read: %v", reads, tc.wantRead)
			}
			if n, _ := g.TargetSize(ctx); n != 3 {
				t.Fatalf("target %d, want 3 (the fake leaves the pool unchanged)", n)
			}
			if err := g.IncreaseSize(ctx, 1); err != nil {
				t.Fatalf("the next IncreaseSize: %v, want it sent (no quarantine)", err)
			}
		})
	}
}

// TestEvictWithUnusableAnswerKeepsTarget: an eviction the cloud carried out
// but answered with a body we cannot read (no operation id, no state) is
// applied; settling it later must not read the empty operation as a failure
// and give the evicted members back to the target, which would let CA scale
// the group past its max.
func TestEvictWithUnusableAnswerKeepsTarget(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.fake.OperationDelay = 5 * time.Second
	e := newTestEnv(t, o)
	e.refresh(t)
	g := e.group(t, e.workersPool)
	ctx := ctx5s(t)
	before, _ := g.TargetSize(ctx)
	ids := memberIDs(t, e, e.workersPool)
	e.fake.AddFault(fakecloud.Fault{Method: http.MethodPut, PathContains: ":evict", Malformed: true, AfterApply: true})
	if err := g.DeleteNodes(ctx, []*corev1.Node{node(ProviderIDPrefix + ids[0])}); err != nil {
		t.Fatalf("DeleteNodes with an applied, unreadable answer: %v", err)
	}
	if e.fake.PendingFaults() != 0 {
		t.Fatal("the eviction never met the fault")
	}
	// A scale-up still pending keeps the group on its expected size: the
	// settled eviction must leave that at before - 1 + 1.
	if err := g.IncreaseSize(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.refresh(t)
	if got, _ := g.TargetSize(ctx); got != before {
		t.Fatalf("target %d with the scale-up pending, want %d", got, before)
	}
	e.fake.Settle()
	for i := 0; i < 2; i++ {
		e.refresh(t)
		p, _ := e.fake.Pool(e.workersPool)
		if got, _ := g.TargetSize(ctx); got != before || got != p.Size {
			t.Fatalf("refresh %d: target %d, cloud size %d, want both %d", i+1, got, p.Size, before)
		}
	}
}
