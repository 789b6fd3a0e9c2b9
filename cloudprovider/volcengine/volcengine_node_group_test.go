package volcengine

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

func target(t *testing.T, g cloudprovider.NodeGroup) int {
	t.Helper()
	n, err := g.TargetSize(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func providerIDs(insts []fakeapi.Instance) []string {
	var out []string
	for _, in := range insts {
		out = append(out, ProviderIDPrefix+in.ID)
	}
	return out
}

func TestConcurrentIncreaseSize(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	before, max := target(t, g), g.MaxSize(testCtx(t))
	const callers = 64
	var accepted atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := g.IncreaseSize(testCtx(t), 1)
			switch {
			case err == nil:
				accepted.Add(1)
			case !errors.Is(err, cloudprovider.ErrFailedPrecondition):
				t.Errorf("unexpected error class: %v", err)
			}
		}()
	}
	wg.Wait()
	if int(accepted.Load()) != max-before {
		t.Fatalf("%d accepted, want %d", accepted.Load(), max-before)
	}
	if n := e.fake.CountOperation(fakeapi.ActionModifyScalingGroup); n != max-before {
		t.Fatalf("%d ModifyScalingGroup calls, want %d (refused calls must not reach the cloud)", n, max-before)
	}
	cg, _ := e.fake.Group(mainGroupID)
	if cg.Desired != max || target(t, g) != max {
		t.Fatalf("cloud desired %d, target %d, want %d", cg.Desired, target(t, g), max)
	}
}

func TestBadArgumentsMakeNoCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	other := e.fake.Instances(otherGroupID)
	mine := e.fake.Instances(mainGroupID)
	tests := []struct {
		name string
		run  func() error
		kind error
	}{
		{name: "increase zero", run: func() error { return g.IncreaseSize(testCtx(t), 0) }, kind: cloudprovider.ErrInvalidArgument},
		{name: "increase past max", run: func() error { return g.IncreaseSize(testCtx(t), 8) }, kind: cloudprovider.ErrFailedPrecondition},
		{name: "decrease positive", run: func() error { return g.DecreaseTargetSize(testCtx(t), 1) }, kind: cloudprovider.ErrInvalidArgument},
		{name: "decrease below existing", run: func() error { return g.DecreaseTargetSize(testCtx(t), -1) }, kind: cloudprovider.ErrFailedPrecondition},
		{name: "delete foreign group's node", run: func() error {
			return g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor(ProviderIDPrefix + other[0].ID)})
		}, kind: cloudprovider.ErrInvalidArgument},
		{name: "delete mixed batch", run: func() error {
			return g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor(ProviderIDPrefix + mine[0].ID), nodeFor(ProviderIDPrefix + other[0].ID)})
		}, kind: cloudprovider.ErrInvalidArgument},
		{name: "delete other cloud's node", run: func() error {
			return g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor("aws:///i-1")})
		}, kind: cloudprovider.ErrInvalidArgument},
		{name: "delete duplicate", run: func() error {
			n := nodeFor(ProviderIDPrefix + mine[0].ID)
			return g.DeleteNodes(testCtx(t), []*corev1.Node{n, n})
		}, kind: cloudprovider.ErrInvalidArgument},
		{name: "delete nil", run: func() error { return g.DeleteNodes(testCtx(t), []*corev1.Node{nil}) }, kind: cloudprovider.ErrInvalidArgument},
		{name: "delete registered below min", run: func() error {
			return g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor(providerIDs(mine)[0]), nodeFor(providerIDs(mine)[1]), nodeFor(providerIDs(mine)[2])})
		}, kind: cloudprovider.ErrFailedPrecondition},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := e.fake.RequestCount()
			before := target(t, g)
			if err := tc.run(); !errors.Is(err, tc.kind) {
				t.Fatalf("error = %v, want %v", err, tc.kind)
			}
			if e.fake.RequestCount() != calls {
				t.Fatal("a refused call reached the cloud")
			}
			if target(t, g) != before {
				t.Fatal("target changed")
			}
		})
	}
}

func TestDeleteNodesBatchesOf20(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withSeed(func(f *fakeapi.Server) {
		seedStandard(f)
		f.SetGroupBounds(mainGroupID, 1, 100, 46)
		f.Reconcile()
		f.Settle()
	}))
	g := e.group(t, mainGroupID)
	insts := e.fake.Instances(mainGroupID)
	var nodes []*corev1.Node
	for _, pid := range providerIDs(insts[:45]) {
		nodes = append(nodes, nodeFor(pid))
	}
	if err := g.DeleteNodes(testCtx(t), nodes); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range e.fake.Requests() {
		if r.Operation == fakeapi.ActionRemoveInstances {
			n := 0
			for i := 1; r.Query.Get(fmt.Sprintf("InstanceIds.%d", i)) != ""; i++ {
				n++
			}
			sizes = append(sizes, n)
		}
	}
	if fmt.Sprint(sizes) != "[20 20 5]" {
		t.Fatalf("batches = %v, want [20 20 5]", sizes)
	}
	if got := target(t, g); got != 1 {
		t.Fatalf("target %d, want 1", got)
	}
	deleting := 0
	nodesNow, _ := g.Nodes(testCtx(t))
	for _, in := range nodesNow {
		if in.Status != nil && in.Status.State == cloudprovider.InstanceDeleting {
			deleting++
		}
	}
	if deleting != 45 {
		t.Fatalf("%d instances reported deleting, want 45", deleting)
	}
	for _, in := range e.fake.Instances(mainGroupID) {
		if (in.ID == insts[45].ID) != (in.Status == fakeapi.StatusInService) {
			t.Fatalf("cloud instance %s is %s; only the 45 asked for may go", in.ID, in.Status)
		}
	}
	if cg, _ := e.fake.Group(mainGroupID); cg.Desired != 1 {
		t.Fatalf("cloud desired %d, want 1", cg.Desired)
	}
}

func TestDeleteNodesPartialFailure(t *testing.T) {
	t.Parallel()
	mutationClock := cloudprovidertest.MutationClock()
	e := newEnv(t, withSeed(func(f *fakeapi.Server) {
		seedStandard(f)
		f.SetGroupBounds(mainGroupID, 0, 100, 30)
		f.Reconcile()
		f.Settle()
	}), func(c *envConfig) { c.build.Guard = cloudprovidertest.GuardOptions(mutationClock) })
	g := e.group(t, mainGroupID)
	var nodes []*corev1.Node
	for _, pid := range providerIDs(e.fake.Instances(mainGroupID)) {
		nodes = append(nodes, nodeFor(pid))
	}
	// The first batch goes through, the second fails.
	e.fake.AddFault(fakecloud.Fault{Operation: fakeapi.ActionRemoveInstances, Status: 500, Code: "InternalError", Skip: 1})
	err := g.DeleteNodes(testCtx(t), nodes)
	if !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Fatalf("error = %v", err)
	}
	if got := target(t, g); got != 10 {
		t.Fatalf("target %d, want 10 (first 20 removed, rest refused)", got)
	}
	if cg, _ := e.fake.Group(mainGroupID); cg.Desired != 10 {
		t.Fatalf("cloud desired %d, want 10", cg.Desired)
	}
	first := nodes[:20]
	// The failed batch's outcome is unknown: the group takes no change
	// until it can no longer land.
	if err := g.DeleteNodes(testCtx(t), first); !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Fatalf("DeleteNodes inside the unknown-outcome window = %v, want ErrUnavailable", err)
	}
	cloudprovidertest.PassUnknownOutcomeWindow(mutationClock)
	// Resending the already removed nodes (as CA does) is a no-op.
	before := e.fake.CountOperation(fakeapi.ActionRemoveInstances)
	if err := g.DeleteNodes(testCtx(t), first); err != nil {
		t.Fatal(err)
	}
	if e.fake.CountOperation(fakeapi.ActionRemoveInstances) != before {
		t.Fatal("re-deleting removing instances called the cloud")
	}
	if got := target(t, g); got != 10 {
		t.Fatalf("target %d after resend, want 10", got)
	}
}

// withNoDesiredOther seeds the standard groups, the second one without a
// desired number and with one more instance of each status given.
func withNoDesiredOther(statuses ...string) envOption {
	return withSeed(func(f *fakeapi.Server) {
		seedStandard(f)
		f.SetGroupBounds(otherGroupID, 0, 5, -1)
		for _, st := range statuses {
			f.AddInstance(otherGroupID, st)
		}
	})
}

func TestNoDesiredNumberGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withNoDesiredOther(fakeapi.StatusInService, fakeapi.StatusRemoving))
	g := e.group(t, otherGroupID)
	if got := target(t, g); got != 2 {
		t.Fatalf("target %d, want 2 live instances", got)
	}
	calls := e.fake.RequestCount()
	for name, err := range map[string]error{
		"increase": g.IncreaseSize(testCtx(t), 1),
		"decrease": g.DecreaseTargetSize(testCtx(t), -1),
	} {
		if !errors.Is(err, cloudprovider.ErrFailedPrecondition) {
			t.Fatalf("%s: error = %v, want failed precondition", name, err)
		}
	}
	if e.fake.RequestCount() != calls {
		t.Fatal("refused calls reached the cloud")
	}
	insts := e.fake.Instances(otherGroupID)
	var live string
	for _, in := range insts {
		if in.Status == fakeapi.StatusInService {
			live = in.ID
		}
	}
	if err := g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor(ProviderIDPrefix + live)}); err != nil {
		t.Fatal(err)
	}
	if got := target(t, g); got != 1 {
		t.Fatalf("target %d after delete, want 1", got)
	}
}

func TestUnregisteredBelowMinFallsBackWhenAPIRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withStrictMin(), withSeed(func(f *fakeapi.Server) {
		seedStandard(f)
		f.SetGroupBounds(mainGroupID, 2, 10, 2)
		f.Reconcile()
		f.Settle()
	}))
	g := e.group(t, mainGroupID)
	insts := e.fake.Instances(mainGroupID)
	fake := nodeFor(ProviderIDPrefix + insts[0].ID)
	fake.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "unregistered"}
	if err := g.DeleteNodes(testCtx(t), []*corev1.Node{fake}); err != nil {
		t.Fatal(err)
	}
	var decreases []string
	for _, r := range e.fake.Requests() {
		if r.Operation == fakeapi.ActionRemoveInstances {
			decreases = append(decreases, r.Query.Get("DecreaseDesiredCapacity")+"/"+r.Query.Get("ForceDelete"))
		}
	}
	if fmt.Sprint(decreases) != "[true/ false/true]" {
		t.Fatalf("RemoveInstances attempts (DecreaseDesiredCapacity/ForceDelete) = %v", decreases)
	}
	if got := target(t, g); got != 2 {
		t.Fatalf("target %d, want 2 (the group keeps min and replaces the instance)", got)
	}
	nodes, _ := g.Nodes(testCtx(t))
	for _, in := range nodes {
		if in.Id == fake.Spec.ProviderID && in.Status.State != cloudprovider.InstanceDeleting {
			t.Fatalf("removed instance reported %v", in.Status.State)
		}
	}
}

func TestFailedCreationReported(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		failure   fakeapi.CreateFailure
		wantClass cloudprovider.InstanceErrorClass
		wantCode  string
	}{
		{name: "stock-out", failure: fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "no stock in cn-beijing-a"}, wantClass: cloudprovider.OutOfResourcesErrorClass, wantCode: "InsufficientInstanceStock"},
		{name: "quota", failure: fakeapi.CreateFailure{Code: "QuotaExceeded.Vcpu", Message: "vCPU quota"}, wantClass: cloudprovider.OutOfResourcesErrorClass, wantCode: "QuotaExceeded.Vcpu"},
		{name: "other", failure: fakeapi.CreateFailure{Code: "InvalidImage", Message: "image gone"}, wantClass: cloudprovider.OtherErrorClass, wantCode: "InvalidImage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			f := tc.failure
			e.fake.SetCreateFailure(mainGroupID, &f)
			g := e.group(t, mainGroupID)
			if err := g.IncreaseSize(testCtx(t), 1); err != nil {
				t.Fatal(err)
			}
			e.fake.Settle()
			if err := e.p.Refresh(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			nodes, _ := g.Nodes(testCtx(t))
			var failed []cloudprovider.Instance
			for _, in := range nodes {
				if in.Status != nil && in.Status.ErrorInfo != nil {
					failed = append(failed, in)
				}
			}
			if len(failed) != 1 {
				t.Fatalf("%d failed instances, want 1: %+v", len(failed), nodes)
			}
			st := failed[0].Status
			if st.State != cloudprovider.InstanceCreating || st.ErrorInfo.ErrorClass != tc.wantClass || st.ErrorInfo.ErrorCode != tc.wantCode {
				t.Fatalf("status = %+v / %+v", st, st.ErrorInfo)
			}
			// CA then deletes the failed instance as a fake node.
			n := nodeFor(failed[0].Id)
			n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "create-error"}
			before := target(t, g)
			if err := g.DeleteNodes(testCtx(t), []*corev1.Node{n}); err != nil {
				t.Fatal(err)
			}
			if target(t, g) != before-1 {
				t.Fatalf("target %d, want %d", target(t, g), before-1)
			}
		})
	}
}

func TestRemovedInstanceStaysDeletingWhileCloudLags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	victim := ProviderIDPrefix + e.fake.Instances(mainGroupID)[0].ID
	if err := g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor(victim)}); err != nil {
		t.Fatal(err)
	}
	// A failed Refresh keeps the bookkeeping.
	e.fake.FailNext(100)
	if err := e.p.Refresh(testCtx(t)); err == nil {
		t.Fatal("Refresh succeeded against a failing cloud")
	}
	e.fake.ClearFaults()
	state := func() cloudprovider.InstanceState {
		nodes, _ := g.Nodes(testCtx(t))
		for _, in := range nodes {
			if in.Id == victim {
				return in.Status.State
			}
		}
		return 0
	}
	if st := state(); st != cloudprovider.InstanceDeleting {
		t.Fatalf("victim state %v after failed refresh, want deleting", st)
	}
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if st := state(); st != cloudprovider.InstanceDeleting {
		t.Fatalf("victim state %v while the API lists it as removing, want deleting", st)
	}
	e.fake.Settle()
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if st := state(); st != 0 {
		t.Fatalf("victim still listed (%v) after the API dropped it", st)
	}
}

func TestGetOptionsAndTemplate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	if _, err := g.GetOptions(testCtx(t), cloudprovider.NodeGroupAutoscalingOptions{}); !errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Fatalf("GetOptions error = %v", err)
	}
	node, err := g.TemplateNodeInfo(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if node.Labels[corev1.LabelInstanceTypeStable] != "ecs.g3i.xlarge" || node.Labels[corev1.LabelTopologyZone] != "cn-beijing-a" {
		t.Fatalf("labels = %v", node.Labels)
	}
}

// TestStockOutWithoutInstances covers a launch failure that creates no
// instance: the unfilled slots show up as failed placeholders, which CA then
// deletes; deleting them lowers the desired number (never below min).
func TestStockOutWithoutInstances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	before := target(t, g)
	e.fake.SetCreateFailure(mainGroupID, &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "ecs.g3i.xlarge sold out in cn-beijing-a", NoInstances: true})
	if err := g.IncreaseSize(testCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	e.fake.ResetRequests()
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.CountOperation(fakeapi.ActionDescribeScalingActivities); n != 1 {
		t.Fatalf("%d DescribeScalingActivities, want 1 (only the short group)", n)
	}
	nodes, _ := g.Nodes(testCtx(t))
	var failed []*corev1.Node
	for _, in := range nodes {
		if in.Status != nil && in.Status.ErrorInfo != nil {
			if in.Status.State != cloudprovider.InstanceCreating || in.Status.ErrorInfo.ErrorClass != cloudprovider.OutOfResourcesErrorClass || in.Status.ErrorInfo.ErrorCode != "InsufficientInstanceStock" {
				t.Fatalf("placeholder status %+v / %+v", in.Status, in.Status.ErrorInfo)
			}
			n := nodeFor(in.Id)
			n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "create-error"}
			failed = append(failed, n)
		}
	}
	if len(failed) != 2 || target(t, g) != before+2 {
		t.Fatalf("%d placeholders, target %d; want 2 and %d", len(failed), target(t, g), before+2)
	}
	if ng, err := e.p.NodeGroupForNode(testCtx(t), failed[0]); err != nil || ng == nil || ng.Id(testCtx(t)) != mainGroupID {
		t.Fatalf("NodeGroupForNode(placeholder) = %v, %v", ng, err)
	}
	if err := g.DeleteNodes(testCtx(t), failed); err != nil {
		t.Fatal(err)
	}
	if got := target(t, g); got != before {
		t.Fatalf("target %d after deleting the placeholders, want %d", got, before)
	}
	if n := e.fake.CountOperation(fakeapi.ActionRemoveInstances); n != 0 {
		t.Fatalf("%d RemoveInstances for placeholders, want 0", n)
	}
	if cg, _ := e.fake.Group(mainGroupID); cg.Desired != before {
		t.Fatalf("cloud desired %d, want %d", cg.Desired, before)
	}
	e.fake.ResetRequests()
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.RequestCount(); n != 2 {
		t.Fatalf("%d calls in the Refresh after recovery, want 2 (1 + the group we changed)", n)
	}
	if nodes, _ := g.Nodes(testCtx(t)); len(nodes) != before {
		t.Fatalf("%d instances listed, want %d", len(nodes), before)
	}
}

// TestDeletionTakenWithAnUnusableAnswerIsServed: the service takes a
// deletion but its answer is an empty 2xx, and the read that should tell
// the new desired number fails. What the deletion did is served anyway:
// the node leaves Nodes or shows Deleting, and the target drops.
func TestDeletionTakenWithAnUnusableAnswerIsServed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, action string
		placeholder  bool
		// readsBefore is how many group reads the deletion makes before
		// its call: lowering the desired number re-reads first.
		readsBefore int
	}{
		{name: "failed slot", action: fakeapi.ActionModifyScalingGroup, placeholder: true, readsBefore: 1},
		{name: "InService instance", action: fakeapi.ActionRemoveInstances},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, func(c *envConfig) { c.fakeOpts.CheckInterval = 10 * time.Minute })
			g := e.group(t, mainGroupID)
			e.fake.SetCreateFailure(mainGroupID, &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "sold out", NoInstances: true})
			if err := g.IncreaseSize(testCtx(t), 1); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(10 * time.Minute)
			if err := e.p.Refresh(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			nodes, _ := g.Nodes(testCtx(t))
			var victim cloudprovider.Instance
			for _, in := range nodes {
				if failed := in.Status != nil && in.Status.ErrorInfo != nil; failed == tc.placeholder {
					victim = in
				}
			}
			node := nodeFor(victim.Id)
			if tc.placeholder {
				node.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "create-error"}
			}
			before := target(t, g)
			empty := cloudprovidertest.FaultAppliedEmptyBody
			empty.Operation = tc.action
			e.fake.AddFault(empty)
			// The guard's read after the change fails.
			e.fake.AddFault(fakecloud.Fault{Operation: fakeapi.ActionDescribeScalingGroups, Skip: tc.readsBefore, Times: math.MaxInt32, Status: http.StatusInternalServerError, Code: "InternalError"})
			err := g.DeleteNodes(testCtx(t), []*corev1.Node{node})
			e.fake.ClearFaults()
			if err == nil || cloudprovider.OutcomeOf(err) != cloudprovider.MutationApplied {
				t.Fatalf("DeleteNodes = %v (outcome %v), want an error stating the change applied", err, cloudprovider.OutcomeOf(err))
			}
			if got := target(t, g); got != before-1 {
				t.Errorf("target %d after a deletion the service took, want %d", got, before-1)
			}
			nodes, _ = g.Nodes(testCtx(t))
			for _, in := range nodes {
				if in.Id != victim.Id {
					continue
				}
				if tc.placeholder || in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting {
					t.Errorf("%s still served as %+v after a deletion the service took", in.Id, in.Status)
				}
			}
		})
	}
}

func TestPlaceholdersNeverBelowMin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *envConfig) { c.fakeOpts.CheckInterval = 10 * time.Minute }, withSeed(func(f *fakeapi.Server) {
		seedStandard(f)
		f.SetCreateFailure(otherGroupID, &fakeapi.CreateFailure{Code: "NoStock", Message: "sold out", NoInstances: true})
		f.SetGroupBounds(otherGroupID, 2, 5, 2)
		f.Reconcile()
	}))
	g := e.group(t, otherGroupID)
	nodes, _ := g.Nodes(testCtx(t))
	var ph []*corev1.Node
	for _, in := range nodes {
		if in.Status != nil && in.Status.ErrorInfo != nil {
			n := nodeFor(in.Id)
			n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "create-error"}
			ph = append(ph, n)
		}
	}
	if len(ph) != 1 {
		t.Fatalf("%d placeholders, want 1 (1 live instance, desired 2)", len(ph))
	}
	calls := e.fake.CountOperation(fakeapi.ActionModifyScalingGroup)
	e.clock.Advance(time.Second)
	if err := g.DeleteNodes(testCtx(t), ph); err != nil {
		t.Fatal(err)
	}
	if e.fake.CountOperation(fakeapi.ActionModifyScalingGroup) != calls {
		t.Fatal("lowering desired below min was attempted")
	}
	if got := target(t, g); got != 2 {
		t.Fatalf("target %d, want 2 (min)", got)
	}
	// Nothing was sent, so the failed activity still explains the slot.
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	nodes, _ = g.Nodes(testCtx(t))
	if got := failedOf(nodes); got != 1 {
		t.Fatalf("%d failed slots after a deletion that sent nothing, want 1 still failed: %+v", got, nodes)
	}
}

// failedOf counts the instances reported failed.
func failedOf(nodes []cloudprovider.Instance) int {
	n := 0
	for _, in := range nodes {
		if in.Status != nil && in.Status.ErrorInfo != nil {
			n++
		}
	}
	return n
}

// TestLostAnswerOfAbsoluteResizeIsRetried: ModifyScalingGroup sets an absolute
// number, so repeating it after a lost answer is safe and the call succeeds.
func TestLostAnswerOfAbsoluteResizeIsRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	before := target(t, g)
	e.fake.AddFault(fakecloud.Fault{Operation: fakeapi.ActionModifyScalingGroup, Status: 502, Code: "BadGateway", AfterApply: true})
	if err := g.IncreaseSize(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.CountOperation(fakeapi.ActionModifyScalingGroup); n != 2 {
		t.Fatalf("%d ModifyScalingGroup calls, want 2", n)
	}
	if cg, _ := e.fake.Group(mainGroupID); cg.Desired != before+1 || target(t, g) != before+1 {
		t.Fatalf("cloud desired %d, target %d, want %d", cg.Desired, target(t, g), before+1)
	}
}

// TestDroppingPlaceholdersKeepsAFilledSlot: the service fills one of two
// stocked-out slots after the snapshot; deleting both placeholders must
// give up only the one still empty, or the lower desired number would make
// the service remove an instance of its own choosing.
func TestDroppingPlaceholdersKeepsAFilledSlot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	before := target(t, g)
	e.fake.SetCreateFailure(mainGroupID, &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "sold out", NoInstances: true})
	if err := g.IncreaseSize(testCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var placeholders []*corev1.Node
	nodes, _ := g.Nodes(testCtx(t))
	for _, in := range nodes {
		if in.Status != nil && in.Status.ErrorInfo != nil {
			placeholders = append(placeholders, nodeFor(in.Id))
		}
	}
	if len(placeholders) != 2 {
		t.Fatalf("%d placeholders, want 2", len(placeholders))
	}
	filled, err := e.fake.LaunchInstance(mainGroupID)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteNodes(testCtx(t), placeholders); err != nil {
		t.Fatal(err)
	}
	if cg, _ := e.fake.Group(mainGroupID); cg.Desired != before+1 {
		t.Fatalf("cloud desired %d, want %d (the filled slot kept)", cg.Desired, before+1)
	}
	e.fake.Settle()
	alive := false
	for _, in := range e.fake.Instances(mainGroupID) {
		alive = alive || in.ID == filled
	}
	if !alive || len(e.fake.Instances(mainGroupID)) != before+1 {
		t.Fatalf("instance %s filled since the snapshot is gone or the group has %d instances, want %d", filled, len(e.fake.Instances(mainGroupID)), before+1)
	}
}

// failedSlotIDs returns the providerIDs of g's failed creations that are
// slots the service failed to fill (no ECS instance), in order.
func failedSlotIDs(t *testing.T, g cloudprovider.NodeGroup) []string {
	t.Helper()
	nodes, err := g.Nodes(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range nodes {
		if strings.HasPrefix(in.Id, ProviderIDPrefix+slotIDPrefix) {
			if in.Status == nil || in.Status.State != cloudprovider.InstanceCreating || in.Status.ErrorInfo == nil {
				t.Fatalf("failed slot %s reported as %+v, want a failed creation", in.Id, in.Status)
			}
			out = append(out, in.Id)
		}
	}
	return out
}

// stockOut makes the service fail to fill every new slot of the main group.
func stockOut(e *testEnv) {
	e.fake.SetCreateFailure(mainGroupID, &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "sold out", NoInstances: true})
}

// TestFailedSlotIDsStayAndNeverRepeat: a slot the service failed to fill
// is reported as volcengine://placeholder-<group>-<n>, the form a running
// CA has seen from earlier versions; it keeps its id across refreshes, a
// slot CA deleted is no longer any group's, and a later slot never takes
// its id.
func TestFailedSlotIDsStayAndNeverRepeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	before := target(t, g)
	stockOut(e)
	if err := g.IncreaseSize(testCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	e.refresh(t)
	first := failedSlotIDs(t, g)
	want := []string{ProviderIDPrefix + "placeholder-" + mainGroupID + "-1", ProviderIDPrefix + "placeholder-" + mainGroupID + "-2"}
	if !slices.Equal(first, want) {
		t.Fatalf("failed slots %v, want %v", first, want)
	}
	e.refresh(t)
	if again := failedSlotIDs(t, g); !slices.Equal(again, first) {
		t.Fatalf("failed slots %v after another Refresh, want the same %v", again, first)
	}

	if err := g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor(first[0])}); err != nil {
		t.Fatal(err)
	}
	if got := target(t, g); got != before+1 {
		t.Fatalf("target %d after deleting one slot, want %d", got, before+1)
	}
	if ng, err := e.p.NodeGroupForNode(testCtx(t), nodeFor(first[0])); err != nil || ng != nil {
		t.Fatalf("NodeGroupForNode(deleted slot) = %v, %v; want no group", ng, err)
	}
	e.refresh(t)
	if left := failedSlotIDs(t, g); !slices.Equal(left, first[1:]) {
		t.Fatalf("failed slots %v after deleting %s, want %v", left, first[0], first[1:])
	}

	e.clock.Advance(time.Second)
	if err := g.IncreaseSize(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	e.refresh(t)
	want = []string{first[1], ProviderIDPrefix + "placeholder-" + mainGroupID + "-3"}
	if got := failedSlotIDs(t, g); !slices.Equal(got, want) {
		t.Fatalf("failed slots %v after another failed scale-up, want %v (a new number, never the deleted slot's)", got, want)
	}
}

// TestFailedSlotsSurviveAFailedActivityLookup: when the scaling activities
// cannot be read, the failed slots stay as they were, under the same ids,
// rather than vanishing and coming back under new ones.
func TestFailedSlotsSurviveAFailedActivityLookup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	stockOut(e)
	if err := g.IncreaseSize(testCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	e.refresh(t)
	first := failedSlotIDs(t, g)
	if len(first) != 2 {
		t.Fatalf("failed slots %v, want 2", first)
	}
	e.fake.AddFault(fakecloud.Fault{Operation: fakeapi.ActionDescribeScalingActivities, Status: http.StatusInternalServerError, Code: "InternalError", Times: math.MaxInt32})
	e.refresh(t)
	if got := failedSlotIDs(t, g); !slices.Equal(got, first) {
		t.Fatalf("failed slots %v after a Refresh that could not read the activities, want %v", got, first)
	}
	// The service fills one slot meanwhile: the shortfall bounds the slots.
	if _, err := e.fake.LaunchInstance(mainGroupID); err != nil {
		t.Fatal(err)
	}
	e.refresh(t)
	if got := failedSlotIDs(t, g); !slices.Equal(got, first[:1]) {
		t.Fatalf("failed slots %v once the service filled one, want %v", got, first[:1])
	}
}

// TestOlderListingKeepsDroppedSlots: a Refresh whose listing began before
// CA deleted the failed slots must not bring them back (under new ids)
// from what it listed: the deletion overtook the listing.
func TestOlderListingKeepsDroppedSlots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.group(t, mainGroupID)
	before := target(t, g)
	stockOut(e)
	if err := g.IncreaseSize(testCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	e.refresh(t)
	var slots []*corev1.Node
	for _, id := range failedSlotIDs(t, g) {
		slots = append(slots, nodeFor(id))
	}
	if len(slots) != 2 {
		t.Fatalf("%d failed slots, want 2", len(slots))
	}

	release, arrived := make(chan struct{}), make(chan struct{})
	e.fake.AddFault(fakecloud.Fault{Operation: fakeapi.ActionDescribeScalingGroups, Release: release, Arrived: arrived, AnswerOnArrival: true})
	done := make(chan error, 1)
	go func() { done <- e.p.Refresh(testCtx(t)) }()
	<-arrived
	if err := g.DeleteNodes(testCtx(t), slots); err != nil {
		close(release)
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := failedSlotIDs(t, g); len(got) != 0 {
		t.Fatalf("failed slots %v after a Refresh whose listing began before they were deleted, want none", got)
	}
	if got := target(t, g); got != before {
		t.Fatalf("target %d after that Refresh, want %d", got, before)
	}
	e.refresh(t)
	if got := failedSlotIDs(t, g); len(got) != 0 || target(t, g) != before {
		t.Fatalf("failed slots %v, target %d once the listing caught up; want none and %d", got, target(t, g), before)
	}
}

func (e *testEnv) refresh(t *testing.T) {
	t.Helper()
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// TestNoDesiredNumberTargetCountsAnInstanceOnceItsGraceEnds: in a group
// without a desired number the target is the instances that stay. When the
// grace of a deletion the cloud accepted but never carried out ends, the
// instance stays again, and the refresh that ends the grace counts it: the
// target must not be one low until the next refresh.
func TestNoDesiredNumberTargetCountsAnInstanceOnceItsGraceEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withNoDesiredOther(fakeapi.StatusInService))
	g := e.group(t, otherGroupID)
	if got := target(t, g); got != 2 {
		t.Fatalf("target %d, want 2 live instances", got)
	}
	victim := e.fake.Instances(otherGroupID)[0].ID
	e.fake.HoldRemoval(victim)
	if err := g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor(ProviderIDPrefix + victim)}); err != nil {
		t.Fatal(err)
	}
	e.refresh(t)
	if got := target(t, e.group(t, otherGroupID)); got != 1 {
		t.Fatalf("target %d while the deletion is within its grace, want 1", got)
	}
	e.clock.Advance(groupstate.DeletingGrace)
	e.refresh(t)
	if got := target(t, e.group(t, otherGroupID)); got != 2 {
		t.Fatalf("target %d in the refresh that ends the deletion's grace, want 2: the instance is listed live and no longer Deleting", got)
	}
	e.refresh(t)
	if got := target(t, e.group(t, otherGroupID)); got != 2 {
		t.Fatalf("target %d a refresh later, want 2", got)
	}
}
