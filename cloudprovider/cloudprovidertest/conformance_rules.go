package cloudprovidertest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// The safety rules every provider shares (groupstate.Group.Do and Transact,
// cloudprovider.OutcomeUnknown, the one APIError class table): each check
// below fails for a provider that drops one of them.

// hangDeadline stands in for CA's deadline on calls the fake holds forever,
// so the fault matrix stays fast.
const hangDeadline = 300 * time.Millisecond

// faultTimes covers every retry a client may make, so a fault fails the call
// instead of being retried away.
const faultTimes = 16

// liveIDs returns the ids of a group's instances that are not going away.
func (k *kit) liveIDs(g cloudprovider.NodeGroup) map[string]bool {
	k.t.Helper()
	out := map[string]bool{}
	for _, in := range k.nodes(g) {
		if in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting {
			out[in.Id] = true
		}
	}
	return out
}

// clearFaults drops faults a check queued and no request consumed.
func (k *kit) clearFaults() {
	if k.env.ClearFaults != nil {
		k.env.ClearFaults()
	}
}

// checkReadsNeverWaitBehindMutation holds an IncreaseSize inside its cloud
// call (the fake never answers) and asks every read CA makes meanwhile: they
// must answer from the snapshot, not queue behind the mutation's lock. The
// held call is released only after the reads answered or the deadline of
// one CA call passed, so a read that waits fails the check.
func checkReadsNeverWaitBehindMutation(t *testing.T, k *kit) {
	k.require(HookInjectMutationFault)
	g := k.mainGroup()
	id := g.Id(k.ctx())
	node := k.env.Node(k.nodes(g)[0])
	k.env.InjectMutationFault(MutationIncreaseSize, FaultHang)
	calls := k.env.CloudCalls()
	mutationCtx, release := context.WithCancel(context.Background())
	defer release()
	mutated := make(chan error, 1)
	go func() { mutated <- g.IncreaseSize(mutationCtx, 1) }()
	// The fake records the request before holding it.
	deadline := time.Now().Add(CallDeadline)
	for k.env.CloudCalls() == calls {
		if time.Now().After(deadline) {
			t.Fatal("IncreaseSize never reached the cloud")
		}
		runtime.Gosched()
	}
	reads := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), CallDeadline)
		defer cancel()
		gs, err := k.env.Provider.NodeGroups(ctx)
		if err != nil {
			reads <- err
			return
		}
		for _, o := range gs {
			_ = o.MinSize(ctx) + o.MaxSize(ctx)
			_ = o.Debug(ctx)
			if _, err := o.TargetSize(ctx); err != nil {
				reads <- err
				return
			}
			if _, err := o.Nodes(ctx); err != nil {
				reads <- err
				return
			}
			_, _ = o.TemplateNodeInfo(ctx)
		}
		if got, err := k.env.Provider.NodeGroupForNode(ctx, node); err != nil || got == nil || got.Id(ctx) != id {
			reads <- errors.Join(errors.New("NodeGroupForNode lost the node during a mutation"), err)
			return
		}
		reads <- ctx.Err()
	}()
	select {
	case err := <-reads:
		if err != nil {
			t.Fatalf("reads during a held mutation: %v", err)
		}
	case <-time.After(CallDeadline):
		t.Fatal("reads waited behind a mutation held in its cloud call")
	}
	// The held mutation ends when its caller gives up; without the
	// caller's context it ends when the fake closes.
	if ok, why := hookPresent(t, k.h, k.env, HookCallerDeadline); !ok {
		t.Log(why + "; the check's last part, the held IncreaseSize failing once its caller gives up, does not run")
		return
	}
	release()
	if err := <-mutated; err == nil {
		t.Fatal("IncreaseSize succeeded although its cloud call never answered")
	}
}

// mutationCase prepares a group for one kind of mutation and runs it.
type mutationCase struct {
	// prepare runs before the fault is injected and returns the instances
	// the mutation may remove.
	prepare func(k *kit, g cloudprovider.NodeGroup) map[string]bool
	run     func(ctx context.Context, k *kit, g cloudprovider.NodeGroup, victims map[string]bool) error
}

var mutationCases = map[Mutation]mutationCase{
	MutationIncreaseSize: {
		prepare: func(*kit, cloudprovider.NodeGroup) map[string]bool { return nil },
		run: func(ctx context.Context, _ *kit, g cloudprovider.NodeGroup, _ map[string]bool) error {
			return g.IncreaseSize(ctx, 1)
		},
	},
	MutationDecreaseTargetSize: {
		// Cancel a request the cloud has not fulfilled yet (or refuse to).
		prepare: func(k *kit, g cloudprovider.NodeGroup) map[string]bool {
			k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1) before the decrease")
			return nil
		},
		run: func(ctx context.Context, _ *kit, g cloudprovider.NodeGroup, _ map[string]bool) error {
			return g.DecreaseTargetSize(ctx, -1)
		},
	},
	MutationDeleteNodes: {
		prepare: func(k *kit, g cloudprovider.NodeGroup) map[string]bool {
			return map[string]bool{k.nodes(g)[0].Id: true}
		},
		run: func(ctx context.Context, k *kit, g cloudprovider.NodeGroup, victims map[string]bool) error {
			var nodes []*corev1.Node
			for id := range victims {
				nodes = append(nodes, k.env.Node(cloudprovider.Instance{Id: id}))
			}
			return g.DeleteNodes(ctx, nodes)
		},
	},
}

// checkMutationFaultMatrix runs each mutation against each fault a cloud
// answers with (throttle, 5xx, hang, garbled answer, applied but answer
// lost): whatever the call returned, once the cloud settled the group's
// target and instances stay within min and max, and no instance that was
// not asked for is gone.
func checkMutationFaultMatrix(t *testing.T, h Harness) {
	names := make([]string, 0, len(MutationFaults))
	for name := range MutationFaults {
		names = append(names, name)
	}
	sort.Strings(names)
	// Each fault hits every attempt (the call fails) or only the first, so
	// a client's own retry meets the cloud as the first attempt left it
	// (a lost answer's retry finds the change already made).
	for _, times := range []int{faultTimes, 1} {
		for _, kind := range Mutations {
			for _, name := range names {
				label := string(kind) + "/" + name
				if times == 1 {
					label += "/once"
				}
				t.Run(label, func(t *testing.T) {
					t.Parallel()
					runMutationFault(t, h, kind, name, times)
				})
			}
		}
	}
}

// runMutationFault is one cell of checkMutationFaultMatrix.
func runMutationFault(t *testing.T, h Harness, kind Mutation, name string, times int) {
	if MutationFaults[name].Hang {
		requireCallerDeadline(t, h, "the cell gives up a call the cloud holds forever at the caller's deadline")
	}
	k := newKit(t, h)
	k.require(HookInjectMutationFault)
	c := mutationCases[kind]
	g := k.mainGroup()
	id := g.Id(k.ctx())
	victims := c.prepare(k, g)
	before := k.liveIDs(g)
	fault := MutationFaults[name]
	fault.Times = times
	k.env.InjectMutationFault(kind, fault)
	ctx, cancel := context.WithTimeout(context.Background(), CallDeadline)
	if fault.Hang {
		ctx, cancel = context.WithTimeout(context.Background(), hangDeadline)
	}
	targetBefore := k.target(g)
	err := c.run(ctx, k, g, victims)
	cancel()
	k.clearFaults()
	if err != nil {
		// No answer was applied, so the target CA reads at once
		// is the one before the call.
		if got := k.target(g); got != targetBefore {
			t.Fatalf("%s under %s failed (%v) but moved the target from %d to %d", kind, name, err, targetBefore, got)
		}
	}
	if err != nil && errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Fatalf("%s under %s: %v", kind, name, err)
	}
	k.settle()
	k.refresh()
	g = k.group(id)
	target, minSize, maxSize := k.target(g), g.MinSize(k.ctx()), g.MaxSize(k.ctx())
	if target < minSize || target > maxSize {
		t.Fatalf("%s under %s (err %v): target %d outside [%d, %d]", kind, name, err, target, minSize, maxSize)
	}
	after := k.liveIDs(g)
	if len(after) > maxSize {
		t.Fatalf("%s under %s: %d live instances, max %d", kind, name, len(after), maxSize)
	}
	for inst := range before {
		if !after[inst] && !victims[inst] {
			t.Fatalf("%s under %s (err %v): instance %s was removed without being asked for", kind, name, err, inst)
		}
	}
}

// checkLostAnswerNotUndone: an IncreaseSize the cloud applied but whose
// answer was lost, then another IncreaseSize before any Refresh. Inside the
// outcome-unknown window the group takes no change (ErrUnavailable, no cloud
// call); after it, a provider that resizes by absolute size from its stale
// target would send the size the cloud already has, losing the second
// increase; the rule (cloudprovider.OutcomeUnknown) re-reads the group first.
func checkLostAnswerNotUndone(t *testing.T, k *kit) {
	k.require(HookInjectMutationFault, HookClearFaults)
	g := k.mainGroup()
	id, before := g.Id(k.ctx()), k.target(g)
	lost := FaultAnswerLost
	lost.Times = faultTimes
	k.env.InjectMutationFault(MutationIncreaseSize, lost)
	first := g.IncreaseSize(k.ctx(), 1)
	k.clearFaults()
	if first == nil {
		t.Fatal("IncreaseSize succeeded although every answer was lost")
	}
	calls := k.env.CloudCalls()
	k.expectErr(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1) right after a lost answer", cloudprovider.ErrUnavailable)
	k.noCalls(calls, "IncreaseSize inside the outcome-unknown window")
	PassUnknownOutcomeWindow(k.mutationClock)
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1) after a lost answer")
	k.settle()
	k.refresh()
	if got := k.target(k.group(id)); got != before+2 {
		t.Fatalf("cloud target %d after an applied-but-lost increase and a second increase from %d, want %d", got, before, before+2)
	}
}

// checkLateResizeRemovesNone: an IncreaseSize whose request the cloud holds
// until after the client gave up, then applies; meanwhile CA asks for a
// bigger increase. All three clouds resize by absolute size, so the late,
// older size would shrink the group and the cloud would remove instances
// nobody asked to delete; a fresh read cannot see a request that has not
// landed. The rule (the quarantine of groupstate.Group's guard) refuses every
// change of the group until the unknown request can no longer land, then
// re-reads the group before the next one.
func checkLateResizeRemovesNone(t *testing.T, k *kit) {
	requireCallerDeadline(t, k.h, "the check gives up a resize the cloud holds at the caller's deadline, then lets the cloud apply it")
	k.require(HookInjectMutationFault, HookClearFaults)
	g := k.mainGroup()
	id, before := g.Id(k.ctx()), k.target(g)
	release, landed := make(chan struct{}), make(chan struct{})
	k.env.InjectMutationFault(MutationIncreaseSize, fakecloud.Fault{Release: release, Landed: landed, AfterApply: true, PassThrough: true})
	ctx, cancel := context.WithTimeout(context.Background(), hangDeadline)
	err := g.IncreaseSize(ctx, 1)
	cancel()
	k.clearFaults()
	if err == nil {
		close(release)
		t.Fatal("IncreaseSize succeeded although the cloud held its request past the deadline")
	}
	newer := g.IncreaseSize(k.ctx(), 2)
	if newer != nil {
		k.expectErr(newer, "IncreaseSize(2) while an earlier resize may still land", cloudprovider.ErrUnavailable)
	}
	k.settle()
	k.refresh()
	asked := k.liveIDs(k.group(id))
	close(release)
	select {
	case <-landed:
	case <-time.After(CallDeadline):
		t.Fatal("the held resize never landed")
	}
	k.settle()
	k.refresh()
	after := k.liveIDs(k.group(id))
	for inst := range asked {
		if !after[inst] {
			t.Fatalf("instance %s removed that nobody asked to delete: the resize given up on landed after a newer one (newer resize: err %v)", inst, newer)
		}
	}
	// Once the late request can no longer land, the group takes changes
	// again, from a fresh read.
	PassUnknownOutcomeWindow(k.mutationClock)
	g = k.group(id)
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1) after the outcome-unknown window")
	k.settle()
	k.refresh()
	if got := k.target(k.group(id)); got != before+2 {
		t.Fatalf("cloud target %d after a late increase and one more from %d, want %d", got, before, before+2)
	}
}

// checkDecreaseAfterUnseenInstance: the cloud launches an instance the
// snapshot does not list yet (it fills the request CA just made). A
// decrease must not make the cloud remove an instance: the provider reads
// the group fresh before a shrink and refuses, or cancels only what is
// really unfulfilled.
func checkDecreaseAfterUnseenInstance(t *testing.T, k *kit) {
	k.require(HookAddUnseenInstance)
	g := k.mainGroup()
	id := g.Id(k.ctx())
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1)")
	before := k.liveIDs(g)
	unseen := k.env.AddUnseenInstance(id)
	err := g.DecreaseTargetSize(k.ctx(), -1)
	if err != nil {
		k.expectErr(err, "DecreaseTargetSize(-1) after an unseen launch", cloudprovider.ErrFailedPrecondition)
	}
	k.settle()
	k.refresh()
	after := k.liveIDs(k.group(id))
	for inst := range before {
		if !after[inst] {
			t.Fatalf("DecreaseTargetSize (err %v) made the cloud remove instance %s", err, inst)
		}
	}
	if !after[unseen] {
		t.Fatalf("DecreaseTargetSize (err %v) made the cloud remove the instance it launched unseen (%s)", err, unseen)
	}
}

// lateRounds is how many scale-ups checkDecreaseBeforeInstanceListed
// cancels: a cloud that picks what a smaller size removes at random must
// not pass by luck.
const lateRounds = 3

// checkDecreaseBeforeInstanceListed: IncreaseSize(1), then at once
// DecreaseTargetSize(-1), while the cloud does not list the new instance
// yet (ListScaleUpLate), as CA cancels a scale-up it no longer needs. A
// cloud that picks the instances a smaller size removes may take a running
// one instead of the one not listed: every instance listed before stays
// listed and not leaving, before and after the new one shows up, and the
// target is what the cloud then runs.
func checkDecreaseBeforeInstanceListed(t *testing.T, k *kit) {
	k.require(HookListScaleUpLate)
	id := k.mainGroup().Id(k.ctx())
	for round := 1; round <= lateRounds; round++ {
		g := k.group(id)
		target := k.target(g)
		if target+1 > g.MaxSize(k.ctx()) {
			t.Fatalf("round %d: target %d leaves no room below max %d; the seed needs target+%d <= max", round, target, g.MaxSize(k.ctx()), lateRounds)
		}
		before := k.liveIDs(g)
		k.env.ListScaleUpLate(id)
		k.must(g.IncreaseSize(k.ctx(), 1), fmt.Sprintf("round %d: IncreaseSize(1)", round))
		err := g.DecreaseTargetSize(k.ctx(), -1)
		want := target
		if err != nil {
			k.expectErr(err, fmt.Sprintf("round %d: DecreaseTargetSize(-1) before the new instance is listed", round), cloudprovider.ErrFailedPrecondition)
			want = target + 1
		}
		if got := k.target(g); got != want {
			t.Fatalf("round %d: TargetSize right after DecreaseTargetSize(-1) (err %v) = %d, want %d", round, err, got, want)
		}
		stays := func(when string) map[string]bool {
			t.Helper()
			k.refresh()
			live := k.liveIDs(k.group(id))
			for inst := range before {
				if !live[inst] {
					t.Fatalf("round %d, %s: DecreaseTargetSize(-1) (err %v) made instance %s leave; it was listed before the increase", round, when, err, inst)
				}
			}
			return live
		}
		stays("before the new instance is listed")
		k.settle()
		live := stays("once the cloud lists the new instance")
		if got := k.target(k.group(id)); got != want || len(live) != want {
			t.Fatalf("round %d, after the cloud settled: target %d with %d live instances, want %d of both (decrease err %v)", round, got, len(live), want, err)
		}
	}
}

// checkQuotaIsResourceExhausted sends IncreaseSize through the real gRPC
// server while the cloud refuses it for lack of quota or capacity: CA must
// receive ResourceExhausted (it backs the group off), not Internal or
// FailedPrecondition.
func checkQuotaIsResourceExhausted(t *testing.T, k *kit, h Harness) {
	k.require(HookRefuseForQuota, HookServe)
	g := k.mainGroup()
	id := g.Id(k.ctx())
	k.env.RefuseForQuota()
	client := h.Serve(t, k.env.Provider)
	_, err := client.NodeGroupIncreaseSize(k.ctx(), &protos.NodeGroupIncreaseSizeRequest{Id: id, Delta: 1})
	if got := status.Code(err); got != codes.ResourceExhausted {
		t.Fatalf("IncreaseSize refused for quota reached CA as %s (%v), want ResourceExhausted", got, err)
	}
}

// checkEnrichmentFailureKeepsTemplates: lookups that only enrich a template
// (a subnet's zone, an image's architecture) fail for good, as with a key
// lacking those permissions. Every group whose template builds normally must
// still get one, only less precise.
func checkEnrichmentFailureKeepsTemplates(t *testing.T, h Harness) {
	normal := newKit(t, h)
	normal.require(HookFailEnrichmentLookups)
	want := map[string]bool{}
	for _, g := range normal.groups() {
		if node, err := g.TemplateNodeInfo(normal.ctx()); err == nil && node != nil {
			want[g.Id(normal.ctx())] = true
		}
	}
	k := kitFor(t, h, registry.BuildOptions{})
	k.env.FailEnrichmentLookups()
	k.refresh()
	k.refresh()
	for _, g := range k.groups() {
		gid := g.Id(k.ctx())
		if !want[gid] {
			continue
		}
		node, err := g.TemplateNodeInfo(k.ctx())
		if err != nil || node == nil {
			t.Fatalf("template of %s with enrichment lookups failing: %v, want a template", gid, err)
		}
		for _, l := range []string{corev1.LabelOSStable, corev1.LabelArchStable} {
			if node.Labels[l] == "" {
				t.Fatalf("template of %s with enrichment lookups failing lacks %s", gid, l)
			}
		}
	}
}

// newKit builds an environment and takes its first snapshot.
func newKit(t *testing.T, h Harness) *kit {
	t.Helper()
	k := kitFor(t, h, registry.BuildOptions{})
	k.must(k.env.Provider.Refresh(k.ctx()), "initial Refresh")
	return k
}

// checkUnknownNodeHealsFast: a node of this cloud launched since the last
// Refresh (by another actor, or a scale-up the cloud just fulfilled) is
// found by NodeGroupForNode at once with a targeted lookup, and asking again
// within the same Refresh, for it or for a node of this cloud that belongs
// to no group, costs no further call for the same lookup
// (refresh.UnknownNodeLookup).
func checkUnknownNodeHealsFast(t *testing.T, k *kit) {
	k.require(HookAddUnseenInstance)
	id := k.mainGroup().Id(k.ctx())
	unseen := k.env.AddUnseenInstance(id)
	node := fakeNode(unseen, "launched-since-refresh")
	ask := func(n *corev1.Node) (string, int) {
		t.Helper()
		before := k.env.CloudCalls()
		g, err := k.env.Provider.NodeGroupForNode(k.ctx(), n)
		k.must(err, "NodeGroupForNode("+n.Spec.ProviderID+")")
		got := ""
		if g != nil {
			got = g.Id(k.ctx())
		}
		return got, k.env.CloudCalls() - before
	}
	if got, _ := ask(node); got != id {
		t.Fatalf("NodeGroupForNode(%s) before any Refresh = %q, want %q: an unknown node of this cloud must be looked up", unseen, got, id)
	}
	if got, calls := ask(node); got != id || calls != 0 {
		t.Fatalf("asked again: group %q with %d cloud calls, want %q with 0", got, calls, id)
	}
	ghost := fakeNode(ghostOf(unseen), "in-no-group")
	if got, _ := ask(ghost); got != "" {
		t.Fatalf("NodeGroupForNode(%s) = %q, want none", ghost.Spec.ProviderID, got)
	}
	if got, calls := ask(ghost); got != "" || calls != 0 {
		t.Fatalf("a node in no group asked twice in one Refresh: group %q, %d cloud calls the second time, want none and 0", got, calls)
	}
}

// ghostOf returns a providerID of the same cloud and shape as providerID
// that names no instance (the fakes number their ids from 0).
func ghostOf(providerID string) string {
	tail := "dead"
	if strings.HasSuffix(providerID, tail) {
		tail = "beef"
	}
	return providerID[:len(providerID)-len(tail)] + tail
}

// checkLostDeleteKeepsMin: a DeleteNodes the cloud carried out but whose
// answer was lost once, so a client that retries finds the instance gone
// (404) and one that does not hears a 502. Either way the instance is gone
// and the cloud's target dropped; a provider that keeps its old target then
// lets CA delete one node too many, below min (a pool at 0 with min 1). CA then deletes registered nodes one at a time,
// without a Refresh in between, until the provider refuses: the cloud's
// target and instances must never go below min.
func checkLostDeleteKeepsMin(t *testing.T, k *kit) {
	k.require(HookInjectMutationFault, HookClearFaults)
	g := k.mainGroup()
	id, minSize := g.Id(k.ctx()), g.MinSize(k.ctx())
	var registered []string
	for _, in := range k.nodes(g) {
		registered = append(registered, in.Id)
	}
	lost := FaultAnswerLost
	lost.Times = 1
	k.env.InjectMutationFault(MutationDeleteNodes, lost)
	firstErr := g.DeleteNodes(k.ctx(), []*corev1.Node{k.env.Node(cloudprovider.Instance{Id: registered[0]})})
	k.clearFaults()
	refused := false
	for _, victim := range registered[1:] {
		del := func() error {
			return g.DeleteNodes(k.ctx(), []*corev1.Node{k.env.Node(cloudprovider.Instance{Id: victim})})
		}
		err := del()
		if errors.Is(err, cloudprovider.ErrUnavailable) {
			// Quarantined after the unknown outcome: CA retries later.
			PassUnknownOutcomeWindow(k.mutationClock)
			err = del()
		}
		if err != nil {
			k.expectErr(err, "DeleteNodes of registered node "+victim+" after a lost delete answer", cloudprovider.ErrFailedPrecondition)
			refused = true
			break
		}
	}
	if !refused {
		t.Fatalf("every registered node of group %s was deleted after a lost delete answer (first delete: %v); min is %d", id, firstErr, minSize)
	}
	k.settle()
	k.refresh()
	g = k.group(id)
	if got := k.target(g); got < minSize {
		t.Fatalf("cloud target %d below min %d after a lost delete answer (first delete: %v) and deletions down to min", got, minSize, firstErr)
	}
	if got := len(k.liveIDs(g)); got < minSize {
		t.Fatalf("%d live instances below min %d after a lost delete answer (first delete: %v)", got, minSize, firstErr)
	}
}
