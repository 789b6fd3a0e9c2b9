package cloudprovidertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// CallDeadline is the deadline the kit gives every call, as CA's externalgrpc
// client does by default.
const CallDeadline = 5 * time.Second

// Run runs every conformance check against environments from h.
func Run(t *testing.T, h Harness) {
	t.Helper()
	checks := []struct {
		name string
		fn   func(t *testing.T, k *kit)
	}{
		{"HooksSetOrNotApplicable", checkHooksAccounted},
		{"NodeGroupsWellFormed", checkNodeGroupsWellFormed},
		{"NodeGroupForNodeByProviderID", checkNodeGroupForNode},
		{"NodeGroupForNodeUnknownIsNil", checkUnknownNode},
		{"UnknownNodeHealsWithOneLookupPerRefresh", checkUnknownNodeHealsFast},
		{"NodeGroupForNodeByProviderIDNotLabels", checkProviderIDOverLabels},
		{"InstancesWellFormed", checkInstancesWellFormed},
		{"IncreaseSizePastMaxMakesNoCloudCall", checkIncreasePastMax},
		{"NonPositiveDeltaRejectedWithoutCloudCall", checkBadDeltas},
		{"TargetSizeFollowsIncrease", checkIncreaseTarget},
		{"DecreaseNeverBelowExistingInstances", checkDecreaseBelowExisting},
		{"DecreaseCancelsUnfulfilledRequests", checkDecreaseUnfulfilled},
		{"DeleteNodesOfAnotherGroupRejected", checkDeleteForeign},
		{"DeleteNodesLowersTarget", checkDeleteLowersTarget},
		{"MinRuleRegisteredVersusUnregistered", checkMinRule},
		{"ConcurrentIncreaseSizeNeverPassesMax", checkConcurrentIncrease},
		{"TemplateNodeInfoUsableOrNotImplemented", checkTemplate},
		{"GetOptionsDefaultsOrFullSet", checkOptions},
		{"FailedRefreshKeepsSnapshot", checkFailedRefresh},
		{"ReadsServedFromSnapshot", checkReadsFromSnapshot},
		{"HarnessHooksReachTheCloud", checkHarnessHooks},
		{"ReadsNeverWaitBehindMutation", checkReadsNeverWaitBehindMutation},
		{"LostAnswerNotUndoneByNextResize", checkLostAnswerNotUndone},
		{"AppliedEmptyAnswerTakesEffect", checkAppliedEmptyAnswer},
		{"LateResizeRemovesNoInstance", checkLateResizeRemovesNone},
		{"QuarantineReportedWhileChangesRefused", checkQuarantineReported},
		{"LostDeleteAnswerKeepsMinRule", checkLostDeleteKeepsMin},
		{"DecreaseAfterUnseenInstanceRemovesNone", checkDecreaseAfterUnseenInstance},
		{"DecreaseBeforeNewInstanceListedRemovesNone", checkDecreaseBeforeInstanceListed},
		{"QuotaReachesCAAsResourceExhausted", func(t *testing.T, k *kit) { checkQuotaIsResourceExhausted(t, k, h) }},
		{"GroupSettingsFromCloud", func(t *testing.T, k *kit) { checkGroupSettings(t, k, h) }},
		{"UnchangedRefreshWithinBudget", checkUnchangedRefreshBudget},
		{"RefreshAfterScaleUpWithinBudget", checkAfterScaleUpRefreshBudget},
		{"DeletedFailedSlotEnds", checkDeletedFailedSlotEnds},
		{"LeastPrivilegePolicyEnforced", checkLeastPrivilege},
	}
	// Every check runs in parallel with the others: each builds its own
	// environments, with its own fake cloud and clocks (see kitFor).
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, newKit(t, h))
		})
	}
	// These build their own environments.
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"MutationFaultMatrix", checkMutationFaultMatrix},
		{"DefiniteRefusalNotQuarantined", checkRefusalNotQuarantined},
		{"CloudReportedFailureNotQuarantined", checkCloudReportedFailureNotQuarantined},
		{"EnrichmentFailureKeepsTemplates", checkEnrichmentFailureKeepsTemplates},
		{"RateLimitRefusesPastDeadlineAtOnce", checkRateLimitRefusesPastDeadline},
		{"RateLimitMutationsFirst", checkRateLimitMutationsFirst},
		{"RateLimitCountsRetries", checkRateLimitCountsRetries},
		{"ServedWithinStalenessBound", checkServedWithinStalenessBound},
		{"FailingLookupAnswersNoGroup", checkFailingLookupAnswersNoGroup},
		{"GoneNodesCostAtMostTwoCallsPerLoop", checkGoneNodesCostBounded},
		{"TwoSpecsForOneGroupAreAConfigError", checkTwoSpecsForOneGroup},
		{"DeletionRereadsBeforeAbsoluteShrink", checkDeletionRereadsBeforeShrink},
		{"DeletingEndsByTheOneGraceRule", checkDeletingEndsByGrace},
		{"ListingOlderThanMutationKeepsIt", checkOlderListingKeepsMutation},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, h)
		})
	}
}

type kit struct {
	t   *testing.T
	h   Harness
	env *Env
	// mutationClock measures the guards' outcome-unknown quarantine.
	mutationClock *fakecloud.ManualClock
}

// kitFor builds an environment from opts whose guards measure their
// quarantine with the kit's own clock (BuildOptions.Guard), so checks
// running in parallel never share one. A harness with only NewEnv gets no
// options; its provider's guards, if any, keep the wall clock.
func kitFor(t *testing.T, h Harness, opts registry.BuildOptions) *kit {
	t.Helper()
	clock := MutationClock()
	opts.Guard = GuardOptions(clock)
	env := h.newEnv(t, opts)
	if p, ok := env.Provider.(*InMemoryProvider); ok && h.NewEnvWithOptions == nil {
		// The reference provider takes no BuildOptions but its guards',
		// whose clock also times its ledger (Env.Clock).
		p.Guard = opts.Guard
		env.Clock = clock
	}
	return &kit{t: t, h: h, env: env, mutationClock: clock}
}

// ctx returns a context with CA's deadline. Calls that overrun it fail with
// DeadlineExceeded, which every check treats as a failure.
func (k *kit) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), CallDeadline)
	k.t.Cleanup(cancel)
	return ctx
}

func (k *kit) must(err error, what string) {
	k.t.Helper()
	if err != nil {
		k.t.Fatalf("%s: %v", what, err)
	}
}

func (k *kit) groups() []cloudprovider.NodeGroup {
	k.t.Helper()
	gs, err := k.env.Provider.NodeGroups(k.ctx())
	k.must(err, "NodeGroups")
	if len(gs) == 0 {
		k.t.Fatal("NodeGroups returned no groups; the seed must contain at least one")
	}
	return gs
}

func (k *kit) target(g cloudprovider.NodeGroup) int {
	k.t.Helper()
	n, err := g.TargetSize(k.ctx())
	k.must(err, "TargetSize of "+g.Id(k.ctx()))
	return n
}

func (k *kit) nodes(g cloudprovider.NodeGroup) []cloudprovider.Instance {
	k.t.Helper()
	in, err := g.Nodes(k.ctx())
	k.must(err, "Nodes of "+g.Id(k.ctx()))
	for _, i := range in {
		k.checkStatus(i)
	}
	return in
}

func (k *kit) refresh() {
	k.t.Helper()
	k.must(k.env.Provider.Refresh(k.ctx()), "Refresh")
}

func (k *kit) settle() {
	if k.env.Settle != nil {
		k.env.Settle()
	}
}

// group re-reads the group with id after a Refresh (providers may rebuild objects).
func (k *kit) group(id string) cloudprovider.NodeGroup {
	k.t.Helper()
	for _, g := range k.groups() {
		if g.Id(k.ctx()) == id {
			return g
		}
	}
	k.t.Fatalf("node group %s disappeared", id)
	return nil
}

// mainGroup finds the group the seed contract promises.
func (k *kit) mainGroup() cloudprovider.NodeGroup {
	k.t.Helper()
	for _, g := range k.groups() {
		ctx := k.ctx()
		t, minSize, maxSize := k.target(g), g.MinSize(ctx), g.MaxSize(ctx)
		running := 0
		for _, in := range k.nodes(g) {
			if in.Status == nil || in.Status.State == cloudprovider.InstanceRunning {
				running++
			}
		}
		if minSize >= 1 && running >= minSize+1 && t+2 <= maxSize {
			return g
		}
	}
	k.t.Fatal("no node group with min >= 1, at least min+1 running instances and target+2 <= max; fix the seed")
	return nil
}

// otherGroup returns a group other than g, or nil.
func (k *kit) otherGroup(g cloudprovider.NodeGroup) cloudprovider.NodeGroup {
	for _, o := range k.groups() {
		if o.Id(k.ctx()) != g.Id(k.ctx()) && len(k.nodes(o)) > 0 {
			return o
		}
	}
	return nil
}

// fakeNode is the shape CA gives to instances that never registered.
func fakeNode(providerID, reason string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        providerID,
		Labels:      map[string]string{},
		Annotations: map[string]string{cloudprovider.FakeNodeReasonAnnotation: reason},
	}}
	n.Spec.ProviderID = providerID
	return n
}

// expectErr fails unless err wraps one of the sentinels.
func (k *kit) expectErr(err error, what string, sentinels ...error) {
	k.t.Helper()
	if err == nil {
		k.t.Fatalf("%s: succeeded, want an error", what)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		k.t.Fatalf("%s: ran past CA's deadline: %v", what, err)
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return
		}
	}
	k.t.Fatalf("%s: error %q wraps none of %v", what, err, sentinels)
}

// ownRefusal is expectErr for a request the provider refuses before any
// cloud call: its outcome, which the server logs and counts, must be
// refused, never unknown by omission (an unknown one would also quarantine
// the group).
func (k *kit) ownRefusal(err error, what string, sentinels ...error) {
	k.t.Helper()
	k.expectErr(err, what, sentinels...)
	if got := cloudprovider.OutcomeOf(err); got != cloudprovider.MutationRefused {
		k.t.Fatalf("%s: outcome %s, want refused (no call was sent): %v", what, got, err)
	}
}

func (k *kit) noCalls(before int, what string) {
	k.t.Helper()
	if after := k.env.CloudCalls(); after != before {
		k.t.Fatalf("%s made %d cloud calls, want 0", what, after-before)
	}
}

func checkNodeGroupsWellFormed(t *testing.T, k *kit) {
	seen := map[string]bool{}
	for _, g := range k.groups() {
		ctx := k.ctx()
		id := g.Id(ctx)
		if id == "" || seen[id] {
			t.Fatalf("node group id %q empty or duplicated", id)
		}
		seen[id] = true
		if g.MinSize(ctx) < 0 || g.MinSize(ctx) > g.MaxSize(ctx) {
			t.Fatalf("node group %s: min %d max %d", id, g.MinSize(ctx), g.MaxSize(ctx))
		}
		if g.Debug(ctx) == "" {
			t.Fatalf("node group %s: empty Debug", id)
		}
		switch why := g.Status(ctx).Managed; why.By {
		case cloudprovider.ManagedByCluster, cloudprovider.ManagedByNodes, cloudprovider.ManagedByDiscovery, cloudprovider.ManagedByLearnt:
		default:
			t.Fatalf("node group %s: Status().Managed = %q, want why the provider manages it (cluster, --nodes, discovery or learnt)", id, why)
		}
	}
	// A group is found by its id, and an unknown id is NotFound, from the
	// snapshot alone.
	ctx, calls := k.ctx(), k.env.CloudCalls()
	for id := range seen {
		g, err := k.env.Provider.NodeGroup(ctx, id)
		if err != nil || g == nil || g.Id(ctx) != id {
			t.Fatalf("NodeGroup(%q) = %v, %v; want the listed group", id, g, err)
		}
	}
	if g, err := k.env.Provider.NodeGroup(ctx, "no-such-group"); g != nil || !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Fatalf("NodeGroup of an unknown id = %v, %v; want nil and ErrNodeGroupNotFound", g, err)
	}
	k.noCalls(calls, "NodeGroup lookups")
}

func checkNodeGroupForNode(t *testing.T, k *kit) {
	for _, g := range k.groups() {
		ctx := k.ctx()
		for _, in := range k.nodes(g) {
			for _, node := range []*corev1.Node{k.env.Node(in), fakeNode(in.Id, "unregistered")} {
				if node.Spec.ProviderID != in.Id {
					t.Fatalf("Env.Node(%s) has providerID %q", in.Id, node.Spec.ProviderID)
				}
				got, err := k.env.Provider.NodeGroupForNode(ctx, node)
				k.must(err, "NodeGroupForNode "+in.Id)
				if got == nil || got.Id(ctx) != g.Id(ctx) {
					t.Fatalf("NodeGroupForNode(%s) = %v, want group %s", in.Id, got, g.Id(ctx))
				}
				if got.MinSize(ctx) != g.MinSize(ctx) || got.MaxSize(ctx) != g.MaxSize(ctx) {
					t.Fatalf("NodeGroupForNode(%s): min/max %d/%d differ from NodeGroups' %d/%d", in.Id,
						got.MinSize(ctx), got.MaxSize(ctx), g.MinSize(ctx), g.MaxSize(ctx))
				}
			}
		}
	}
}

func checkUnknownNode(t *testing.T, k *kit) {
	for _, node := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "control-plane-1"}, Spec: corev1.NodeSpec{ProviderID: "someothercloud://i-123"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bare"}},
		fakeNode("kwok://ghost", "unregistered"),
	} {
		got, err := k.env.Provider.NodeGroupForNode(k.ctx(), node)
		k.must(err, "NodeGroupForNode of an unknown node must answer nil, not an error")
		if got != nil {
			t.Fatalf("NodeGroupForNode(%q) = group %s, want nil", node.Spec.ProviderID, got.Id(k.ctx()))
		}
	}
}

func checkInstancesWellFormed(t *testing.T, k *kit) {
	seen := map[string]bool{}
	for _, g := range k.groups() {
		for _, in := range k.nodes(g) {
			if in.Id == "" || seen[in.Id] {
				t.Fatalf("instance id %q empty or duplicated", in.Id)
			}
			seen[in.Id] = true
			if in.Status != nil && in.Status.ErrorInfo != nil && in.Status.State == 0 {
				t.Fatalf("instance %s has error info but no state; CA would drop the error", in.Id)
			}
			k.checkStatus(in)
		}
	}
}

func checkIncreasePastMax(t *testing.T, k *kit) {
	g := k.mainGroup()
	before, calls := k.target(g), k.env.CloudCalls()
	err := g.IncreaseSize(k.ctx(), g.MaxSize(k.ctx())-before+1)
	k.ownRefusal(err, "IncreaseSize past max", cloudprovider.ErrFailedPrecondition, cloudprovider.ErrInvalidArgument)
	k.noCalls(calls, "IncreaseSize past max")
	if after := k.target(g); after != before {
		t.Fatalf("target changed from %d to %d after a refused increase", before, after)
	}
}

func checkBadDeltas(t *testing.T, k *kit) {
	g := k.mainGroup()
	before, calls := k.target(g), k.env.CloudCalls()
	for _, d := range []int{0, -1} {
		k.ownRefusal(g.IncreaseSize(k.ctx(), d), fmt.Sprintf("IncreaseSize(%d)", d), cloudprovider.ErrInvalidArgument)
	}
	for _, d := range []int{0, 1} {
		k.ownRefusal(g.DecreaseTargetSize(k.ctx(), d), fmt.Sprintf("DecreaseTargetSize(%d)", d), cloudprovider.ErrInvalidArgument)
	}
	k.ownRefusal(g.DeleteNodes(k.ctx(), []*corev1.Node{fakeNode("someothercloud://x", "unregistered")}),
		"DeleteNodes of a foreign providerID", cloudprovider.ErrInvalidArgument, cloudprovider.ErrNotFound)
	k.noCalls(calls, "rejected calls")
	if after := k.target(g); after != before {
		t.Fatalf("target changed from %d to %d after rejected calls", before, after)
	}
}

func checkIncreaseTarget(t *testing.T, k *kit) {
	g := k.mainGroup()
	id, before := g.Id(k.ctx()), k.target(g)
	k.must(g.IncreaseSize(k.ctx(), 2), "IncreaseSize(2)")
	if got := k.target(g); got != before+2 {
		t.Fatalf("TargetSize right after IncreaseSize(2) = %d, want %d", got, before+2)
	}
	k.refresh()
	g = k.group(id)
	if got := k.target(g); got != before+2 {
		t.Fatalf("TargetSize after Refresh = %d, want %d (the cloud lost the increase)", got, before+2)
	}
	k.settle()
	k.refresh()
	g = k.group(id)
	if got := len(k.nodes(g)); got != before+2 {
		t.Fatalf("after the cloud settled, Nodes lists %d instances, want %d", got, before+2)
	}
}

func checkDecreaseBelowExisting(t *testing.T, k *kit) {
	g := k.mainGroup()
	target, existing, calls := k.target(g), len(k.nodes(g)), k.env.CloudCalls()
	k.ownRefusal(g.DecreaseTargetSize(k.ctx(), existing-target-1), "DecreaseTargetSize below existing instances",
		cloudprovider.ErrFailedPrecondition, cloudprovider.ErrInvalidArgument)
	k.noCalls(calls, "refused DecreaseTargetSize")
	if got := k.target(g); got != target {
		t.Fatalf("target changed from %d to %d after a refused decrease", target, got)
	}
}

// checkDecreaseUnfulfilled increases and at once cancels the increase. A
// provider may accept (the request was not fulfilled yet) or refuse with
// FailedPrecondition (its cloud already materialised the instance); either way
// the target must be consistent and no instance that existed before may be
// deleted, because DecreaseTargetSize must never remove a registered node.
func checkDecreaseUnfulfilled(t *testing.T, k *kit) {
	g := k.mainGroup()
	id, before := g.Id(k.ctx()), k.target(g)
	registered := k.nodes(g)
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1)")
	err := g.DecreaseTargetSize(k.ctx(), -1)
	want := before
	if err != nil {
		k.expectErr(err, "DecreaseTargetSize(-1)", cloudprovider.ErrFailedPrecondition)
		want = before + 1
	}
	if got := k.target(g); got != want {
		t.Fatalf("TargetSize right after DecreaseTargetSize(-1) (err %v) = %d, want %d", err, got, want)
	}
	k.settle()
	k.refresh()
	g = k.group(id)
	if got := k.target(g); got != want {
		t.Fatalf("TargetSize after Refresh = %d, want %d", got, want)
	}
	listed := map[string]bool{}
	for _, in := range k.nodes(g) {
		if in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting {
			listed[in.Id] = true
		}
	}
	for _, in := range registered {
		if !listed[in.Id] {
			t.Fatalf("registered instance %s was removed by DecreaseTargetSize", in.Id)
		}
	}
}

func checkDeleteForeign(t *testing.T, k *kit) {
	g := k.mainGroup()
	id := g.Id(k.ctx())
	own := k.nodes(g)
	var foreign *corev1.Node
	if o := k.otherGroup(g); o != nil {
		foreign = k.env.Node(k.nodes(o)[0])
	} else {
		foreign = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "stranger"}, Spec: corev1.NodeSpec{ProviderID: "someothercloud://stranger"}}
	}
	target, calls := k.target(g), k.env.CloudCalls()
	err := g.DeleteNodes(k.ctx(), []*corev1.Node{k.env.Node(own[0]), foreign})
	k.ownRefusal(err, "DeleteNodes with a node of another group", cloudprovider.ErrInvalidArgument, cloudprovider.ErrNotFound)
	k.noCalls(calls, "refused DeleteNodes")
	if got := k.target(g); got != target {
		t.Fatalf("target changed from %d to %d after a refused delete", target, got)
	}
	k.refresh()
	if got := len(k.nodes(k.group(id))); got != len(own) {
		t.Fatalf("group %s has %d instances after a refused delete, want %d", id, got, len(own))
	}
}

func checkDeleteLowersTarget(t *testing.T, k *kit) {
	g := k.mainGroup()
	id, before := g.Id(k.ctx()), k.target(g)
	victim := k.nodes(g)[0]
	k.must(g.DeleteNodes(k.ctx(), []*corev1.Node{k.env.Node(victim)}), "DeleteNodes of one registered node above min")
	if got := k.target(g); got != before-1 {
		t.Fatalf("TargetSize right after DeleteNodes = %d, want %d", got, before-1)
	}
	k.settle()
	k.refresh()
	g = k.group(id)
	if got := k.target(g); got != before-1 {
		t.Fatalf("TargetSize after Refresh = %d, want %d", got, before-1)
	}
	for _, in := range k.nodes(g) {
		if in.Id == victim.Id && (in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting) {
			t.Fatalf("deleted instance %s still listed and not deleting", victim.Id)
		}
	}
}

// checkMinRule takes a group down to min with registered nodes only and checks
// that one more registered node is refused; then it adds one instance that
// never registers, brings the group back to min, and checks that the
// unregistered instance can still be removed (CA must be able to clean it up)
// while registered nodes stay protected.
func checkMinRule(t *testing.T, k *kit) {
	g := k.mainGroup()
	id, minSize := g.Id(k.ctx()), g.MinSize(k.ctx())
	var registered []string
	for _, in := range k.nodes(g) {
		registered = append(registered, in.Id)
	}
	deleteRegistered := func() {
		t.Helper()
		victim := registered[0]
		registered = registered[1:]
		k.must(g.DeleteNodes(k.ctx(), []*corev1.Node{k.env.Node(cloudprovider.Instance{Id: victim})}), "DeleteNodes above min")
	}
	refuseRegistered := func(when string) {
		t.Helper()
		target, calls := k.target(g), k.env.CloudCalls()
		err := g.DeleteNodes(k.ctx(), []*corev1.Node{k.env.Node(cloudprovider.Instance{Id: registered[0]})})
		k.expectErr(err, "DeleteNodes of a registered node at min "+when, cloudprovider.ErrFailedPrecondition)
		k.noCalls(calls, "refused DeleteNodes at min")
		if got := k.target(g); got != target {
			t.Fatalf("target changed from %d to %d after a refused delete", target, got)
		}
	}
	for k.target(g) > minSize {
		deleteRegistered()
	}
	refuseRegistered("(all registered)")

	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1)")
	k.refresh()
	g = k.group(id)
	known := map[string]bool{}
	for _, pid := range registered {
		known[pid] = true
	}
	var fresh string
	for _, in := range k.nodes(g) {
		if !known[in.Id] && (in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting) {
			fresh = in.Id
		}
	}
	if fresh == "" {
		t.Fatal("after IncreaseSize(1) and Refresh, Nodes lists no new instance")
	}
	deleteRegistered()
	if len(registered) > 0 {
		refuseRegistered("(one instance never registered)")
	}
	wantTarget := minSize - 1
	if k.env.RemovesOnlyInService {
		calls := k.env.CloudCalls()
		err := g.DeleteNodes(k.ctx(), []*corev1.Node{fakeNode(fresh, "unregistered")})
		k.expectErr(err, "DeleteNodes of an instance still starting", cloudprovider.ErrFailedPrecondition)
		k.noCalls(calls, "refused DeleteNodes of an instance still starting")
		k.settle()
		k.refresh()
		g = k.group(id)
		wantTarget = minSize
	}
	k.must(g.DeleteNodes(k.ctx(), []*corev1.Node{fakeNode(fresh, "unregistered")}),
		"DeleteNodes of a never-registered instance at min")
	if got := k.target(g); got != wantTarget {
		t.Fatalf("TargetSize after removing the unregistered instance = %d, want %d", got, wantTarget)
	}
	for _, in := range k.nodes(g) {
		if in.Id == fresh && (in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting) {
			t.Fatalf("the removed never-registered instance is listed as %+v, want deleting", in.Status)
		}
	}
}

func checkConcurrentIncrease(t *testing.T, k *kit) {
	g := k.mainGroup()
	id, before, maxSize := g.Id(k.ctx()), k.target(g), g.MaxSize(k.ctx())
	const callers = 64
	var ok atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), CallDeadline)
			defer cancel()
			if err := g.IncreaseSize(ctx, 1); err != nil {
				errs <- err
				return
			}
			ok.Add(1)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a concurrent IncreaseSize ran past the deadline: %v", err)
		}
	}
	accepted := int(ok.Load())
	want := callers
	if maxSize-before < want {
		want = maxSize - before
	}
	if accepted != want {
		t.Fatalf("%d of %d concurrent IncreaseSize(1) accepted with room for %d", accepted, callers, maxSize-before)
	}
	if got := k.target(g); got != before+accepted || got > maxSize {
		t.Fatalf("TargetSize = %d after %d accepted increases from %d (max %d)", got, accepted, before, maxSize)
	}
	k.refresh()
	if got := k.target(k.group(id)); got != before+accepted {
		t.Fatalf("the cloud holds target %d, want %d", got, before+accepted)
	}
}

// checkTemplate: every group the harness declares in Env.TemplateGroups
// builds a usable template, and every other group answers ErrNotImplemented,
// so the check cannot pass by finding no template to look at.
func checkTemplate(t *testing.T, k *kit) {
	k.require(HookTemplateGroups)
	declared := k.declared(k.env.TemplateGroups, HookTemplateGroups)
	for _, g := range k.groups() {
		id := g.Id(k.ctx())
		node, err := g.TemplateNodeInfo(k.ctx())
		if !declared[id] {
			if !errors.Is(err, cloudprovider.ErrNotImplemented) {
				t.Fatalf("TemplateNodeInfo of %s, not in Env.TemplateGroups, = %v, %v; want ErrNotImplemented (or declare the group)", id, node != nil, err)
			}
			continue
		}
		if err != nil || node == nil {
			t.Fatalf("TemplateNodeInfo of %s, declared in Env.TemplateGroups, answered no template: %v", id, err)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			if q, ok := node.Status.Capacity[r]; !ok || q.IsZero() {
				t.Fatalf("template of %s: capacity %s missing", id, r)
			}
			if q, ok := node.Status.Allocatable[r]; !ok || q.IsZero() {
				t.Fatalf("template of %s: allocatable %s missing", id, r)
			}
		}
		for _, l := range []string{"kubernetes.io/os", "kubernetes.io/arch"} {
			if node.Labels[l] == "" {
				t.Fatalf("template of %s: label %s missing", id, l)
			}
		}
		ready := false
		for _, c := range node.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		if !ready {
			t.Fatalf("template of %s: no Ready condition", id)
		}
		if _, err := node.Marshal(); err != nil {
			t.Fatalf("template of %s does not marshal: %v", id, err)
		}
	}
}

// checkOptions: every group the harness declares in Env.OptionsGroups
// answers options that start from the defaults, and every other group
// answers ErrNotImplemented (CA then uses its own defaults).
func checkOptions(t *testing.T, k *kit) {
	k.require(HookOptionsGroups)
	declared := k.declared(k.env.OptionsGroups, HookOptionsGroups)
	defaults := cloudprovider.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold: 0.5, ScaleDownGpuUtilizationThreshold: 0.6,
		ScaleDownUnneededTime: 10 * time.Minute, ScaleDownUnreadyTime: 20 * time.Minute,
		MaxNodeProvisionTime: 15 * time.Minute, IgnoreDaemonSetsUtilization: true,
	}
	for _, g := range k.groups() {
		id := g.Id(k.ctx())
		o, err := g.GetOptions(k.ctx(), defaults)
		if !declared[id] {
			if !errors.Is(err, cloudprovider.ErrNotImplemented) {
				t.Fatalf("GetOptions of %s, not in Env.OptionsGroups, = %+v, %v; want ErrNotImplemented (or declare the group)", id, o, err)
			}
			continue
		}
		if err != nil || o == nil {
			t.Fatalf("GetOptions of %s, declared in Env.OptionsGroups, answered no options: %v", id, err)
		}
		if o.MaxNodeProvisionTime == 0 || o.ScaleDownUnreadyTime == 0 || o.ScaleDownUnneededTime == 0 {
			t.Fatalf("GetOptions of %s returned zero durations %+v; options must start from the defaults", id, *o)
		}
	}
}

// declared returns the ids a harness declares in the list hook names, and
// fails for an id NodeGroups does not serve.
func (k *kit) declared(ids []string, hook Hook) map[string]bool {
	k.t.Helper()
	served := map[string]bool{}
	for _, g := range k.groups() {
		served[g.Id(k.ctx())] = true
	}
	out := map[string]bool{}
	for _, id := range ids {
		if !served[id] {
			k.t.Fatalf("%s declares group %q, which NodeGroups does not serve", hook, id)
		}
		out[id] = true
	}
	return out
}

func checkFailedRefresh(t *testing.T, k *kit) {
	k.require(HookFailNextCalls)
	g := k.mainGroup()
	id, target := g.Id(k.ctx()), k.target(g)
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1)")
	nGroups := len(k.groups())
	k.env.FailNextCalls(1000)
	err := k.env.Provider.Refresh(k.ctx())
	k.env.FailNextCalls(0)
	if err == nil {
		t.Fatal("Refresh succeeded while every cloud call failed")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Refresh against a failing cloud ran past the deadline: %v", err)
	}
	if got := len(k.groups()); got != nGroups {
		t.Fatalf("after a failed Refresh NodeGroups has %d groups, want %d", got, nGroups)
	}
	if got := k.target(k.group(id)); got != target+1 {
		t.Fatalf("after a failed Refresh TargetSize = %d, want %d (the increase was lost)", got, target+1)
	}
	k.refresh()
	if got := k.target(k.group(id)); got != target+1 {
		t.Fatalf("after recovery TargetSize = %d, want %d", got, target+1)
	}
}

// checkReadsFromSnapshot: after a Refresh, every read CA makes in a loop is
// answered without a cloud call, however many nodes there are (contract §4.4).
func checkReadsFromSnapshot(t *testing.T, k *kit) {
	groups := k.groups()
	var instances []cloudprovider.Instance
	for _, g := range groups {
		instances = append(instances, k.nodes(g)...)
	}
	calls := k.env.CloudCalls()
	ctx := k.ctx()
	defaults := cloudprovider.NodeGroupAutoscalingOptions{MaxNodeProvisionTime: 15 * time.Minute}
	for round := 0; round < 3; round++ {
		for _, g := range k.groups() {
			_, _ = g.TargetSize(ctx)
			_, _ = g.Nodes(ctx)
			_, _ = g.TemplateNodeInfo(ctx)
			_, _ = g.GetOptions(ctx, defaults)
			_ = g.Debug(ctx)
		}
		for _, in := range instances {
			if _, err := k.env.Provider.NodeGroupForNode(ctx, k.env.Node(in)); err != nil {
				t.Fatalf("NodeGroupForNode(%s): %v", in.Id, err)
			}
		}
		_, _ = k.env.Provider.GPULabel(ctx)
		_, _ = k.env.Provider.GetAvailableGPUTypes(ctx)
		if model, err := k.env.Provider.Pricing(ctx); err == nil && model != nil {
			for _, g := range groups {
				if tmpl, err := g.TemplateNodeInfo(ctx); err == nil && tmpl != nil {
					_, _ = model.NodePrice(ctx, tmpl, time.Now(), time.Now().Add(time.Hour))
				}
			}
			_, _ = model.PodPrice(ctx, &corev1.Pod{}, time.Now(), time.Now().Add(time.Hour))
		}
	}
	k.noCalls(calls, "reads after Refresh")
}
