package vultr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

func strp(s string) *string { return &s }

func TestIncreaseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		delta      int
		fault      *fakecloud.Fault
		misreport  int // node_quantity the PATCH answer reports, 0 = the real one
		wantErr    error
		wantErrHas string
		wantTarget int
		wantPatch  string // exact body, "" = no PATCH
		wantRead   bool   // one GET of the pool after the PATCH
	}{
		{name: "ok", delta: 2, wantTarget: 5, wantPatch: `{"node_quantity":5}`},
		{name: "up to max", delta: 5, wantTarget: 8, wantPatch: `{"node_quantity":8}`},
		{name: "past max", delta: 6, wantErr: cloudprovider.ErrFailedPrecondition, wantTarget: 3},
		{name: "zero", delta: 0, wantErr: cloudprovider.ErrInvalidArgument, wantTarget: 3},
		{name: "negative", delta: -1, wantErr: cloudprovider.ErrInvalidArgument, wantTarget: 3},
		// A 2xx is an applied change: when its answer does not state the
		// resulting size, one GET establishes it, and the call succeeds.
		{name: "response without node_pool", delta: 1, fault: &fakecloud.Fault{Method: "PATCH", Status: 202, Body: strp(`{}`), AfterApply: true},
			wantTarget: 4, wantPatch: `{"node_quantity":4}`, wantRead: true},
		{name: "empty response", delta: 1, fault: &fakecloud.Fault{Method: "PATCH", Status: 200, Body: strp(``), AfterApply: true},
			wantTarget: 4, wantPatch: `{"node_quantity":4}`, wantRead: true},
		{name: "quantity mismatch", delta: 1, misreport: 9, wantTarget: 4, wantPatch: `{"node_quantity":4}`, wantRead: true},
		{name: "cloud refuses", delta: 1, fault: &fakecloud.Fault{Method: "PATCH", Status: 400},
			wantErr: cloudprovider.ErrFailedPrecondition, wantTarget: 3, wantPatch: `{"node_quantity":4}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			g := e.group("a-main")
			if tc.fault != nil {
				e.fake.AddFault(*tc.fault)
			}
			if tc.misreport != 0 {
				e.fake.MisreportNextQuantity(tc.misreport)
			}
			e.fake.ResetRequests()
			err := g.IncreaseSize(e.ctx(), tc.delta)
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			case tc.wantErrHas != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrHas)):
				t.Fatalf("error %v, want it to say %q", err, tc.wantErrHas)
			case tc.wantErr == nil && tc.wantErrHas == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			}
			if got, _ := g.TargetSize(e.ctx()); got != tc.wantTarget {
				t.Fatalf("target %d, want %d", got, tc.wantTarget)
			}
			reqs := e.fake.Requests()
			if tc.wantPatch == "" {
				if len(reqs) != 0 {
					t.Fatalf("refused call made %d cloud calls", len(reqs))
				}
				return
			}
			want := 1
			if tc.wantRead {
				want = 2
			}
			if len(reqs) != want || reqs[0].Method != http.MethodPatch || string(reqs[0].Body) != tc.wantPatch {
				t.Fatalf("requests %+v, want one PATCH %s (and a GET: %v)", reqs, tc.wantPatch, tc.wantRead)
			}
			if tc.wantRead && reqs[1].Method != http.MethodGet {
				t.Fatalf("second request %s %s, want the GET of the pool", reqs[1].Method, reqs[1].Path)
			}
			// Nothing is quarantined: the next change goes to the cloud.
			if err == nil && g.IncreaseSize(e.ctx(), 1) != nil && tc.wantTarget < 8 {
				t.Fatal("the change after it was refused")
			}
		})
	}
}

func TestConcurrentIncreaseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		specs    []string
		accepted int
	}{
		{name: "room for 5", accepted: 5},
		{name: "room for all 64", specs: []string{"1:100:a-main"}, accepted: 64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, withSpecs(tc.specs...))
			g := e.group("a-main")
			e.fake.ResetRequests()
			var ok atomic.Int32
			var wg sync.WaitGroup
			for i := 0; i < 64; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					if err := g.IncreaseSize(ctx, 1); err == nil {
						ok.Add(1)
					} else if !errors.Is(err, cloudprovider.ErrFailedPrecondition) {
						t.Errorf("IncreaseSize: %v", err)
					}
				}()
			}
			wg.Wait()
			if int(ok.Load()) != tc.accepted {
				t.Fatalf("%d accepted, want %d", ok.Load(), tc.accepted)
			}
			if got, _ := g.TargetSize(e.ctx()); got != 3+tc.accepted {
				t.Fatalf("target %d, want %d", got, 3+tc.accepted)
			}
			if q := e.pool("a-main").Quantity; q != 3+tc.accepted || q > g.MaxSize(e.ctx()) {
				t.Fatalf("cloud quantity %d, want %d", q, 3+tc.accepted)
			}
			if n := countRequests(e.fake.Requests(), http.MethodPatch, "/node-pools/a-main"); n != tc.accepted {
				t.Fatalf("%d PATCHes, want one per accepted call (%d)", n, tc.accepted)
			}
		})
	}
}

// TestDecreaseTargetSize: VKE picks the nodes a smaller node_quantity
// removes, unlisted ones among them, so every decrease is refused without a
// call, and every node listed before the increase stays once VKE lists the
// new ones.
func TestDecreaseTargetSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// grow raises the target first; appear says whether the new nodes
		// already show in Vultr's list when the decrease runs.
		grow, delta int
		appear      bool
		wantErr     error
		wantErrHas  string
		wantTarget  int
	}{
		{name: "cancel unfulfilled", grow: 2, delta: -2, wantErr: cloudprovider.ErrFailedPrecondition,
			wantErrHas: "2 of its 5 instances are not listed yet", wantTarget: 5},
		{name: "cancel part", grow: 2, delta: -1, wantErr: cloudprovider.ErrFailedPrecondition,
			wantErrHas: "2 of its 5 instances are not listed yet", wantTarget: 5},
		{name: "below existing, snapshot says so", delta: -1, wantErr: cloudprovider.ErrFailedPrecondition,
			wantErrHas: "below 3 existing instances", wantTarget: 3},
		{name: "new nodes listed, snapshot not yet", grow: 2, delta: -1, appear: true, wantErr: cloudprovider.ErrFailedPrecondition,
			wantErrHas: "not listed yet", wantTarget: 5},
		{name: "positive delta", delta: 1, wantErr: cloudprovider.ErrInvalidArgument, wantTarget: 3},
		{name: "zero delta", delta: 0, wantErr: cloudprovider.ErrInvalidArgument, wantTarget: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, withFake(func(o *fakeapi.Options) { o.AppearAfter = time.Minute }))
			g := e.group("a-main")
			listed := map[string]bool{}
			for _, n := range e.pool("a-main").Nodes {
				listed[n.ID] = true
			}
			if tc.grow > 0 {
				if err := g.IncreaseSize(e.ctx(), tc.grow); err != nil {
					t.Fatal(err)
				}
			}
			if tc.appear {
				e.clock.Advance(time.Minute)
			}
			e.fake.ResetRequests()
			err := g.DecreaseTargetSize(e.ctx(), tc.delta)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(fmt.Sprint(err), tc.wantErrHas) {
				t.Fatalf("error %v, want %v saying %q", err, tc.wantErr, tc.wantErrHas)
			}
			if cloudprovider.OutcomeOf(err) != cloudprovider.MutationRefused {
				t.Fatalf("outcome %s, want refused: %v", cloudprovider.OutcomeOf(err), err)
			}
			if got, _ := g.TargetSize(e.ctx()); got != tc.wantTarget {
				t.Fatalf("target %d, want %d", got, tc.wantTarget)
			}
			if reqs := e.fake.Requests(); len(reqs) != 0 {
				t.Fatalf("a refused decrease made %d cloud calls: %+v", len(reqs), reqs)
			}
			e.clock.Advance(time.Hour)
			p := e.pool("a-main")
			active := map[string]bool{}
			for _, n := range p.Nodes {
				if n.Status == "active" {
					active[n.ID] = true
				}
			}
			for id := range listed {
				if !active[id] {
					t.Fatalf("node %s, listed before the decrease, is gone or not active: %+v", id, p.Nodes)
				}
			}
			if p.Quantity != 3+tc.grow || len(active) != 3+tc.grow {
				t.Fatalf("node_quantity %d with %d active nodes, want %d of both", p.Quantity, len(active), 3+tc.grow)
			}
		})
	}
}

// TestMutationKeepsSpecBounds: a pool's bounds come from --nodes when it
// names the pool; a resize's answer and a mutation's fresh read install the
// pool as Vultr holds it, which carries Vultr's own min and max, and must
// leave the served bounds as Refresh chose them.
func TestMutationKeepsSpecBounds(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, withSpecs("3:6:main"), withFake(func(o *fakeapi.Options) { o.AppearAfter = time.Minute }))
	g := e.group("a-main")
	bounds := func(after string) {
		t.Helper()
		if lo, hi := g.MinSize(e.ctx()), g.MaxSize(e.ctx()); lo != 3 || hi != 6 {
			t.Fatalf("bounds %d:%d after %s, want 3:6 from --nodes", lo, hi, after)
		}
	}
	bounds("the first Refresh")
	if err := g.IncreaseSize(e.ctx(), 1); err != nil {
		t.Fatal(err)
	}
	bounds("a resize's answer")
	// An answer without the pool: the guard reads the pool at once.
	e.fake.AddFault(fakecloud.Fault{Method: http.MethodPatch, Status: http.StatusAccepted, Body: strp(`{}`), AfterApply: true})
	e.fake.ResetRequests()
	if err := g.IncreaseSize(e.ctx(), 1); err != nil {
		t.Fatal(err)
	}
	if n := countRequests(e.fake.Requests(), http.MethodGet, "/node-pools/a-main"); n != 1 {
		t.Fatalf("IncreaseSize with an answer lacking the pool read the pool %d times, want 1", n)
	}
	bounds("a fresh read")
	if got, _ := g.TargetSize(e.ctx()); got != 5 {
		t.Fatalf("target %d, want 5", got)
	}
}

func TestDeleteNodes(t *testing.T) {
	t.Parallel()
	type nodeFn func(e *testEnv) []*corev1.Node
	main := func(i int) func(e *testEnv) *corev1.Node {
		return func(e *testEnv) *corev1.Node { return realNode(e.main, e.main.Nodes[i]) }
	}
	nodes := func(fs ...func(e *testEnv) *corev1.Node) nodeFn {
		return func(e *testEnv) []*corev1.Node {
			var out []*corev1.Node
			for _, f := range fs {
				out = append(out, f(e))
			}
			return out
		}
	}
	byProviderID := func(e *testEnv) *corev1.Node { return unregisteredNode(e.main.Nodes[2].ID) }
	foreign := func(e *testEnv) *corev1.Node { return realNode(e.second, e.second.Nodes[0]) }
	otherCloud := func(e *testEnv) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: corev1.NodeSpec{ProviderID: "hcloud://123"}}
	}
	disagree := func(e *testEnv) *corev1.Node {
		n := realNode(e.main, e.main.Nodes[0])
		n.Spec.ProviderID = ProviderIDPrefix + e.main.Nodes[1].ID
		return n
	}
	bare := func(e *testEnv) *corev1.Node { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare"}} }

	tests := []struct {
		name        string
		nodes       nodeFn
		fault       func(e *testEnv) *fakecloud.Fault
		wantErr     error
		wantErrHas  string
		wantTarget  int
		wantDeletes int
	}{
		{name: "one by label", nodes: nodes(main(0)), wantTarget: 2, wantDeletes: 1},
		{name: "by providerID (unregistered)", nodes: nodes(byProviderID), wantTarget: 2, wantDeletes: 1},
		{name: "registered below min refused", nodes: nodes(main(0), main(1)), wantErr: cloudprovider.ErrFailedPrecondition, wantTarget: 3},
		{name: "node of another pool", nodes: nodes(main(0), foreign), wantErr: cloudprovider.ErrInvalidArgument, wantTarget: 3},
		{name: "other cloud", nodes: nodes(otherCloud), wantErr: cloudprovider.ErrInvalidArgument, wantTarget: 3},
		{name: "label and providerID disagree", nodes: nodes(disagree), wantErr: cloudprovider.ErrInvalidArgument, wantTarget: 3},
		{name: "no id at all", nodes: nodes(bare), wantErr: cloudprovider.ErrInvalidArgument, wantTarget: 3},
		{name: "same node twice", nodes: nodes(main(0), main(0)), wantErr: cloudprovider.ErrInvalidArgument, wantTarget: 3},
		{name: "cloud says gone", nodes: nodes(main(0)),
			fault: func(e *testEnv) *fakecloud.Fault {
				return &fakecloud.Fault{Method: "DELETE", Status: 404}
			},
			wantErr: cloudprovider.ErrNotFound, wantTarget: 3, wantDeletes: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			g := e.group("a-main")
			if tc.fault != nil {
				e.fake.AddFault(*tc.fault(e))
			}
			before := e.pool("a-main")
			e.fake.ResetRequests()
			err := g.DeleteNodes(e.ctx(), tc.nodes(e))
			if (tc.wantErr == nil) != (err == nil) || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if got, _ := g.TargetSize(e.ctx()); got != tc.wantTarget {
				t.Fatalf("target %d, want %d", got, tc.wantTarget)
			}
			if n := countRequests(e.fake.Requests(), http.MethodDelete, "/nodes/"); n != tc.wantDeletes {
				t.Fatalf("%d DELETE calls, want %d", n, tc.wantDeletes)
			}
			if tc.wantErr != nil {
				if got := e.pool("a-main"); got.Quantity != before.Quantity || len(got.Nodes) != len(before.Nodes) {
					t.Fatalf("a refused delete changed the pool: %+v -> %+v", before, got)
				}
			}
		})
	}
}

func TestDeleteNodesStopsAtFirstFailure(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, withSpecs("1:8:a-main"))
	g := e.group("a-main")
	n := e.main.Nodes
	if err := g.IncreaseSize(e.ctx(), 2); err != nil {
		t.Fatal(err)
	}
	e.fake.AddFault(fakecloud.Fault{Method: "DELETE", PathContains: n[1].ID, Status: 500, Times: 10})
	err := g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, n[0]), realNode(e.main, n[1]), realNode(e.main, n[2])})
	if !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "deleted before the failure: "+n[0].ID) || !strings.Contains(err.Error(), n[1].ID) {
		t.Fatalf("error does not say what was deleted: %v", err)
	}
	if got, _ := g.TargetSize(e.ctx()); got != 4 {
		t.Fatalf("target %d, want 4 (lowered once for the accepted deletion)", got)
	}
	if c := countRequests(e.fake.Requests(), http.MethodDelete, n[2].ID); c != 0 {
		t.Fatal("continued after the failure")
	}
	ins, _ := g.Nodes(e.ctx())
	states := map[string]cloudprovider.InstanceState{}
	for _, in := range ins {
		states[strings.TrimPrefix(in.Id, ProviderIDPrefix)] = in.Status.State
	}
	if states[n[0].ID] != cloudprovider.InstanceDeleting || states[n[1].ID] != cloudprovider.InstanceRunning ||
		states[n[2].ID] != cloudprovider.InstanceRunning {
		t.Fatalf("states after partial delete: %v", states)
	}
}

// TestDeleteNodesAtMin checks the min rule: registered nodes never take the
// group below min, never-registered instances can always be removed, and a
// re-sent deletion is not counted twice.
func TestDeleteNodesAtMin(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	g := e.group("a-main")
	n := e.main.Nodes
	if err := g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, n[0])}); err != nil {
		t.Fatal(err)
	}
	// Target 2 == min now.
	calls := e.fake.RequestCount()
	if err := g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, n[1])}); !errors.Is(err, cloudprovider.ErrFailedPrecondition) {
		t.Fatalf("registered node at min: %v", err)
	}
	if e.fake.RequestCount() != calls {
		t.Fatal("refused delete made a call")
	}
	if err := g.DeleteNodes(e.ctx(), []*corev1.Node{unregisteredNode(n[1].ID)}); err != nil {
		t.Fatalf("unregistered node at min: %v", err)
	}
	if got, _ := g.TargetSize(e.ctx()); got != 1 {
		t.Fatalf("target %d, want 1", got)
	}
	// CA re-sends failed instances each loop: no second DELETE, no second decrement.
	calls = e.fake.RequestCount()
	if err := g.DeleteNodes(e.ctx(), []*corev1.Node{unregisteredNode(n[1].ID)}); err != nil {
		t.Fatalf("re-sent delete: %v", err)
	}
	if got, _ := g.TargetSize(e.ctx()); got != 1 || e.fake.RequestCount() != calls {
		t.Fatalf("re-sent delete: target %d, %d calls", got, e.fake.RequestCount()-calls)
	}
}

// TestDeleteNodesLowersTargetPerStep: each DELETE of one request lowers
// the target from what the previous one left, and every deleted node shows
// Deleting.
func TestDeleteNodesLowersTargetPerStep(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, withSpecs("1:8:a-main"))
	g := e.group("a-main")
	n := e.main.Nodes
	if err := g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, n[0]), realNode(e.main, n[1])}); err != nil {
		t.Fatal(err)
	}
	if got, _ := g.TargetSize(e.ctx()); got != 1 {
		t.Fatalf("target %d, want 1 (3 lowered once per deleted node)", got)
	}
	if got := e.pool("a-main").Quantity; got != 1 {
		t.Fatalf("cloud node_quantity %d, want 1", got)
	}
	ins, _ := g.Nodes(e.ctx())
	deleting := 0
	for _, in := range ins {
		if in.Status.State == cloudprovider.InstanceDeleting {
			deleting++
		}
	}
	if deleting != 2 {
		t.Fatalf("%d nodes Deleting, want 2: %+v", deleting, ins)
	}
}

// TestDeleteNodeAnsweredNotFound: a DELETE answered 404 changed nothing
// this call can vouch for, so the served state stays as it was and the
// next change re-reads the pool first (Vultr may have lowered its target
// for an earlier DELETE of ours whose answer was lost).
func TestDeleteNodeAnsweredNotFound(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, withSpecs("1:8:a-main"))
	g := e.group("a-main")
	n := e.main.Nodes
	e.fake.AddFault(fakecloud.Fault{Method: http.MethodDelete, Status: http.StatusNotFound, Times: 1})
	err := g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, n[0])})
	if !errors.Is(err, cloudprovider.ErrNotFound) || cloudprovider.OutcomeOf(err) != cloudprovider.MutationRefused {
		t.Fatalf("error %v (outcome %s), want a refused NotFound", err, cloudprovider.OutcomeOf(err))
	}
	if got, _ := g.TargetSize(e.ctx()); got != 3 {
		t.Fatalf("target %d, want 3", got)
	}
	ins, _ := g.Nodes(e.ctx())
	for _, in := range ins {
		if in.Status.State == cloudprovider.InstanceDeleting {
			t.Fatalf("node %s shows Deleting after a DELETE answered 404", in.Id)
		}
	}
	e.fake.ResetRequests()
	if err := g.IncreaseSize(e.ctx(), 1); err != nil {
		t.Fatal(err)
	}
	if got := countRequests(e.fake.Requests(), http.MethodGet, "/node-pools/a-main"); got != 1 {
		t.Fatalf("the next change read the pool %d times, want 1 before its PATCH", got)
	}
}

func TestNodesStatus(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, withFake(func(o *fakeapi.Options) { o.AppearAfter = 10 * time.Second; o.ActiveAfter = 60 * time.Second }))
	g := e.group("a-main")
	if err := g.IncreaseSize(e.ctx(), 1); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, e.main.Nodes[0])}); err != nil {
		t.Fatal(err)
	}
	count := func() map[cloudprovider.InstanceState]int {
		ins, err := g.Nodes(e.ctx())
		if err != nil {
			t.Fatal(err)
		}
		m := map[cloudprovider.InstanceState]int{}
		for _, in := range ins {
			if !strings.HasPrefix(in.Id, ProviderIDPrefix) {
				t.Fatalf("instance id %q", in.Id)
			}
			m[in.Status.State]++
		}
		return m
	}
	steps := []struct {
		name    string
		advance time.Duration
		want    map[cloudprovider.InstanceState]int
	}{
		{name: "right after", want: map[cloudprovider.InstanceState]int{cloudprovider.InstanceRunning: 2, cloudprovider.InstanceDeleting: 1}},
		{name: "new node pending, deleted one closed", advance: 10 * time.Second,
			want: map[cloudprovider.InstanceState]int{cloudprovider.InstanceRunning: 2, cloudprovider.InstanceCreating: 1, cloudprovider.InstanceDeleting: 1}},
		{name: "active, closed gone", advance: 60 * time.Second, want: map[cloudprovider.InstanceState]int{cloudprovider.InstanceRunning: 3}},
	}
	for _, s := range steps {
		// Not parallel: the steps share one environment and run in order.
		t.Run(s.name, func(t *testing.T) {
			e.clock.Advance(s.advance)
			if s.advance > 0 {
				e.refresh()
			}
			if got := count(); fmt.Sprint(got) != fmt.Sprint(s.want) {
				t.Fatalf("states %v, want %v", got, s.want)
			}
			if got, _ := g.TargetSize(e.ctx()); got != 3 {
				t.Fatalf("target %d, want 3", got)
			}
		})
	}
}

func TestRemovedGroup(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	g := e.group("a-main")
	// The pool loses its auto_scaler flag: CA may still hold the old object.
	if _, err := e.p.m.client.(*vultrapi.Client).SetNodePoolQuantity(e.ctx(), testClusterID, "a-main", 3); err != nil {
		t.Fatal(err)
	}
	e.p.m.specs = nil
	e.fake.Settle()
	req, _ := http.NewRequest(http.MethodPatch, e.fake.URL()+"/v2/kubernetes/clusters/"+testClusterID+"/node-pools/a-main",
		strings.NewReader(`{"auto_scaler":false}`))
	req.Header.Set("Authorization", "Bearer "+e.fake.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	e.refresh()
	calls := e.fake.RequestCount()
	for name, err := range map[string]error{
		"IncreaseSize": g.IncreaseSize(e.ctx(), 1),
		"DeleteNodes":  g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, e.main.Nodes[0])}),
	} {
		if !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
			t.Fatalf("%s on a removed group: %v", name, err)
		}
	}
	if _, err := g.TargetSize(e.ctx()); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Fatalf("TargetSize on a removed group: %v", err)
	}
	if e.fake.RequestCount() != calls {
		t.Fatal("calls on a removed group reached the cloud")
	}
	if got, _ := e.p.NodeGroupForNode(e.ctx(), realNode(e.main, e.main.Nodes[0])); got != nil {
		t.Fatal("node of an unflagged pool still maps to a group")
	}
}

func TestGetOptionsFromPoolLabels(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	o, err := e.group("a-main").GetOptions(e.ctx(), cloudprovider.NodeGroupAutoscalingOptions{ScaleDownUnneededTime: time.Minute})
	if !errors.Is(err, cloudprovider.ErrNotImplemented) || o != nil {
		t.Fatalf("GetOptions = %+v, %v; want ErrNotImplemented (use CA's defaults)", o, err)
	}
	if d := e.group("a-main").Debug(e.ctx()); !strings.Contains(d, "a-main") || !strings.Contains(d, "min:2 max:8") || strings.Contains(d, "settings") {
		t.Fatalf("Debug %q", d)
	}
	labels := map[string]string{"tier": "web", groupconfig.NodeLabelOptionKey(groupconfig.OptionScaleDownUnneededTime): "3m"}
	if err := e.fake.SetPoolLabels(testClusterID, "a-main", labels, nil); err != nil {
		t.Fatal(err)
	}
	e.refresh()
	o, err = e.group("a-main").GetOptions(e.ctx(), cloudprovider.NodeGroupAutoscalingOptions{ScaleDownUnneededTime: time.Minute, MaxNodeProvisionTime: time.Hour})
	if err != nil || o.ScaleDownUnneededTime != 3*time.Minute || o.MaxNodeProvisionTime != time.Hour {
		t.Fatalf("GetOptions = %+v, %v; want unneeded 3m on the defaults", o, err)
	}
	if d := e.group("a-main").Debug(e.ctx()); !strings.Contains(d, "settings from node pool labels: options scaledownunneededtime=3m0s") {
		t.Fatalf("Debug %q does not show the settings", d)
	}
}

// TestIdentityMismatchIsCounted: a node whose node-id label and providerID
// disagree is refused without a cloud call, and counted per group (the
// refusal is logged at level 0 too); a node that agrees is not counted.
func TestIdentityMismatchIsCounted(t *testing.T) {
	t.Parallel()
	counted := map[string]int{}
	e := newTestEnv(t, withBuildOptions(registry.BuildOptions{NodeIdentityMismatch: func(group string) { counted[group]++ }}))
	g := e.group("a-main")
	n := realNode(e.main, e.main.Nodes[0])
	n.Spec.ProviderID = ProviderIDPrefix + e.main.Nodes[1].ID
	e.fake.ResetRequests()
	err := g.DeleteNodes(e.ctx(), []*corev1.Node{n})
	if !errors.Is(err, cloudprovider.ErrInvalidArgument) || !errors.Is(err, errIdentityMismatch) {
		t.Fatalf("DeleteNodes of a node whose label and providerID disagree: %v, want an invalid-argument mismatch", err)
	}
	if !strings.Contains(err.Error(), e.main.Nodes[0].ID) || !strings.Contains(err.Error(), e.main.Nodes[1].ID) {
		t.Fatalf("error %q names not both ids", err)
	}
	if len(e.fake.Requests()) != 0 {
		t.Fatalf("a refused delete made %d cloud calls", len(e.fake.Requests()))
	}
	if counted["a-main"] != 1 || len(counted) != 1 {
		t.Fatalf("counted %v, want a-main once", counted)
	}
	if err := g.DeleteNodes(e.ctx(), []*corev1.Node{realNode(e.main, e.main.Nodes[0])}); err != nil {
		t.Fatal(err)
	}
	if counted["a-main"] != 1 {
		t.Fatalf("a node whose label agrees was counted: %v", counted)
	}
}
