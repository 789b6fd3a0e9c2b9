package volcengine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// Tests of the provider against the strict fake's documented constraints:
// id filters of at most 10, RemoveInstances only for InService
// instances, asynchronous reconciliation, activity order, disabled groups.

func countOps(e *testEnv, op string) int {
	n := 0
	for _, r := range e.fake.Requests() {
		if r.Operation == op {
			n++
		}
	}
	return n
}

// TestManyStaticGroupsAndConfigurations: 25 static groups with 25
// configurations refresh and build templates, although one id filter takes at
// most 10 ids.
func TestManyStaticGroupsAndConfigurations(t *testing.T) {
	t.Parallel()
	const n = 25
	var specs []string
	for i := range n {
		specs = append(specs, fmt.Sprintf("0:5:scg-%02d", i))
	}
	e := newEnv(t, withStatic(specs...), withSeed(func(f *fakeapi.Server) {
		f.AddSubnet(fakeapi.Subnet{ID: "subnet-a", ZoneID: "cn-beijing-a"})
		f.AddImage(fakeapi.Image{ID: "image-linux", Architecture: "x86_64", OSType: "Linux"})
		f.AddInstanceType(fakeapi.InstanceType{ID: "ecs.g3i.xlarge", CPUs: 4, MemoryMiB: 16384})
		for i := range n {
			id := fmt.Sprintf("scg-%02d", i)
			cfg := fmt.Sprintf("scc-%02d", i)
			f.AddConfiguration(fakeapi.Configuration{ID: cfg, GroupID: id, InstanceTypes: []string{"ecs.g3i.xlarge"}, ImageID: "image-linux"})
			f.AddGroup(fakeapi.Group{ID: id, Name: id, Min: 0, Max: 5, Desired: 1, ActiveConfigID: cfg, SubnetIDs: []string{"subnet-a"}})
		}
		f.Reconcile()
		f.Settle()
	}))
	gs, err := e.p.NodeGroups(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != n {
		t.Fatalf("%d groups served, want %d", len(gs), n)
	}
	for _, g := range gs {
		node, err := g.TemplateNodeInfo(testCtx(t))
		if err != nil {
			t.Fatalf("template of %s: %v", g.Id(testCtx(t)), err)
		}
		if node == nil || node.Status.Capacity.Cpu().Value() != 4 {
			t.Fatalf("template of %s: %+v", g.Id(testCtx(t)), node)
		}
	}
	// Each filter batch is one call: 3 for the configurations. The groups
	// take one call: the account's whole list is one page, fewer calls
	// than 3 batches of ids (groupCatalog).
	if got := countOps(e, fakeapi.ActionDescribeScalingConfigurations); got != 3 {
		t.Errorf("%s calls = %d, want 3 batches of at most 10 ids", fakeapi.ActionDescribeScalingConfigurations, got)
	}
	if got := countOps(e, fakeapi.ActionDescribeScalingGroups); got != 1 {
		t.Errorf("%s calls = %d, want 1 page of the whole list", fakeapi.ActionDescribeScalingGroups, got)
	}
}

// TestDeleteErrorInstanceLowersDesired: RemoveInstances refuses an Error
// instance, so its deletion lowers the desired number and leaves the instance
// to the service's health check, which then does not replace it.
func TestDeleteErrorInstanceLowersDesired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	broken := e.fake.AddInstance(mainGroupID, fakeapi.StatusError)
	e.fake.SetGroupBounds(mainGroupID, 1, 10, 4)
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	g := e.group(t, mainGroupID)
	n := nodeFor(ProviderIDPrefix + broken)
	n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "create-error"}
	if err := g.DeleteNodes(testCtx(t), []*corev1.Node{n}); err != nil {
		t.Fatal(err)
	}
	if got := countOps(e, fakeapi.ActionRemoveInstances); got != 0 {
		t.Fatalf("%d RemoveInstances calls for an Error instance, want 0 (the API refuses them)", got)
	}
	if got := target(t, g); got != 3 {
		t.Fatalf("target %d, want 3", got)
	}
	if cg, _ := e.fake.Group(mainGroupID); cg.Desired != 3 {
		t.Fatalf("cloud desired %d, want 3", cg.Desired)
	}
	// The service's health check removes the Error instance and, the desired
	// number being 3 with 3 healthy instances, launches nothing.
	e.clock.Advance(2 * time.Minute)
	e.fake.Settle()
	live := 0
	for _, in := range e.fake.Instances(mainGroupID) {
		if in.ID == broken {
			t.Fatalf("Error instance still listed as %s", in.Status)
		}
		live++
	}
	if live != 3 {
		t.Fatalf("%d instances after the health check, want 3", live)
	}
}

// TestDeleteInstanceNotInServiceRefused: a stopped, standby or starting
// instance cannot be removed now; the refusal is FailedPrecondition and makes
// no cloud call.
func TestDeleteInstanceNotInServiceRefused(t *testing.T) {
	t.Parallel()
	for _, status := range []string{fakeapi.StatusPending, fakeapi.StatusStopped, fakeapi.StatusStandby, fakeapi.StatusProtected} {
		t.Run(status, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			id := e.fake.AddInstance(mainGroupID, status)
			e.fake.SetGroupBounds(mainGroupID, 1, 10, 4)
			if err := e.p.Refresh(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			g := e.group(t, mainGroupID)
			calls := e.fake.RequestCount()
			err := g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor(ProviderIDPrefix + id)})
			if !errors.Is(err, cloudprovider.ErrFailedPrecondition) || !strings.Contains(err.Error(), status) {
				t.Fatalf("DeleteNodes = %v, want FailedPrecondition naming %s", err, status)
			}
			if e.fake.RequestCount() != calls {
				t.Fatal("a refused delete reached the cloud")
			}
		})
	}
}

// TestDisabledGroup: a group whose LifecycleState is not Active says so and
// refuses to grow without a cloud call.
func TestDisabledGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetLifecycleState(mainGroupID, "InActive")
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	g := e.group(t, mainGroupID)
	if d := g.Debug(testCtx(t)); !strings.Contains(d, "disabled (LifecycleState InActive)") {
		t.Fatalf("Debug = %q", d)
	}
	calls := e.fake.RequestCount()
	err := g.IncreaseSize(testCtx(t), 1)
	if !errors.Is(err, cloudprovider.ErrFailedPrecondition) || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("IncreaseSize = %v, want FailedPrecondition saying disabled", err)
	}
	insts := e.fake.Instances(mainGroupID)
	if err := g.DeleteNodes(testCtx(t), []*corev1.Node{nodeFor(ProviderIDPrefix + insts[0].ID)}); !errors.Is(err, cloudprovider.ErrFailedPrecondition) {
		t.Fatalf("DeleteNodes = %v, want FailedPrecondition", err)
	}
	if e.fake.RequestCount() != calls {
		t.Fatal("a refused change reached the cloud")
	}
}

// TestScaleUpJudgedOnlyByLaterActivities: a failed activity from before our
// IncreaseSize does not mark the new, not yet started, request as failed, in
// either activity order; a failure after it does.
func TestScaleUpJudgedOnlyByLaterActivities(t *testing.T) {
	t.Parallel()
	for _, oldestFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("oldestFirst=%v", oldestFirst), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, func(c *envConfig) {
				c.fakeOpts.ActivitiesOldestFirst = oldestFirst
				c.fakeOpts.CheckInterval = 10 * time.Minute
			}, withSeed(func(f *fakeapi.Server) {
				seedStandard(f)
				// An old stock-out, already given up (desired back to 3).
				f.SetCreateFailure(mainGroupID, &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "no stock", NoInstances: true})
				f.SetGroupBounds(mainGroupID, 1, 10, 4)
				f.Reconcile()
				f.SetGroupBounds(mainGroupID, 1, 10, 3)
				f.SetCreateFailure(mainGroupID, nil)
			}))
			e.clock.Advance(time.Minute)
			g := e.group(t, mainGroupID)
			if err := g.IncreaseSize(testCtx(t), 1); err != nil {
				t.Fatal(err)
			}
			// Before the service's next check: one slot unfilled, no new activity.
			if err := e.p.Refresh(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			nodes, _ := g.Nodes(testCtx(t))
			for _, in := range nodes {
				if in.Status != nil && in.Status.ErrorInfo != nil {
					t.Fatalf("instance %s reported failed by an activity older than the scale-up: %+v", in.Id, in.Status.ErrorInfo)
				}
			}
			// Now the launch fails after our change: that is reported.
			e.fake.SetCreateFailure(mainGroupID, &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "no stock", NoInstances: true})
			e.clock.Advance(10 * time.Minute)
			if err := e.p.Refresh(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			nodes, _ = g.Nodes(testCtx(t))
			failed := 0
			for _, in := range nodes {
				if in.Status != nil && in.Status.ErrorInfo != nil {
					failed++
				}
			}
			if failed != 1 {
				t.Fatalf("%d failed slots after a failed activity following the scale-up, want 1: %+v", failed, nodes)
			}
		})
	}
}

// TestIncreaseSizeDoesNotLaunchInsideTheCall: ModifyScalingGroup only records
// the desired number; instances appear at the service's next check.
func TestIncreaseSizeDoesNotLaunchInsideTheCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *envConfig) { c.fakeOpts.CheckInterval = 10 * time.Minute })
	before := len(e.fake.Instances(mainGroupID))
	if err := e.group(t, mainGroupID).IncreaseSize(testCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	if got := len(e.fake.Instances(mainGroupID)); got != before {
		t.Fatalf("%d instances right after IncreaseSize, want %d (reconciliation is asynchronous)", got, before)
	}
	if got := target(t, e.group(t, mainGroupID)); got != before+2 {
		t.Fatalf("target %d, want %d at once", got, before+2)
	}
	e.clock.Advance(10 * time.Minute)
	if got := len(e.fake.Instances(mainGroupID)); got != before+2 {
		t.Fatalf("%d instances after the check, want %d", got, before+2)
	}
}
