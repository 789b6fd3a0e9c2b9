package cloudprovidertest

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// Checks of the nodes CA asks about that the snapshot cannot place, and of
// the --nodes specs that name one group twice.

// goneNodes is how many nodes the cloud does not have the cost check asks
// about in every loop, and maxLookupCallsPerLoop what they may cost on top
// of the same loop without them: one listing, and one call to spare for a
// cloud whose listing takes two requests.
const (
	goneNodes             = 1000
	maxLookupCallsPerLoop = 2
	goneNodeLoops         = 7
)

// ghostIDs returns n providerIDs of the same cloud and shape as providerID
// that name no instance in taken: the tail is replaced by a counter from
// f000 (the fakes number or draw their ids well below it).
func ghostIDs(providerID string, n int, taken map[string]bool) []string {
	out := make([]string, 0, n)
	for i := 0; len(out) < n && i < 0x1000; i++ {
		id := providerID[:len(providerID)-4] + fmt.Sprintf("%04x", 0xf000+i)
		if !taken[id] {
			out = append(out, id)
		}
	}
	return out
}

// goneNode is a registered Node whose instance the cloud no longer has.
func goneNode(providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gone-" + providerID[len(providerID)-4:]},
		Spec: corev1.NodeSpec{ProviderID: providerID}}
}

// caLoop is one CA loop as far as nodes go: a Refresh, then NodeGroupForNode
// for every node, each answer checked against want (providerID -> group id,
// "" for none). It returns the cloud calls the loop made.
func (k *kit) caLoop(nodes []*corev1.Node, want map[string]string) int {
	k.t.Helper()
	before := k.env.CloudCalls()
	k.refresh()
	ctx := k.ctx()
	for _, n := range nodes {
		g, err := k.env.Provider.NodeGroupForNode(ctx, n)
		if err != nil {
			k.t.Fatalf("NodeGroupForNode(%s): %v, want an answer (CA reads an error as a failure, not as \"no group\")", n.Spec.ProviderID, err)
		}
		got := ""
		if g != nil {
			got = g.Id(ctx)
		}
		if got != want[n.Spec.ProviderID] {
			k.t.Fatalf("NodeGroupForNode(%s) = group %q, want %q", n.Spec.ProviderID, got, want[n.Spec.ProviderID])
		}
	}
	return k.env.CloudCalls() - before
}

// checkGoneNodesCostBounded: CA asks NodeGroupForNode about every node in
// every loop and never caches a "no group" answer, so 1,000 registered nodes
// whose instances the cloud does not have (deleted behind CA's back, or
// never ours) must not cost a call each. Two environments run the same
// loops on the same clock, one with the gone nodes and one without; the
// difference per loop is at most maxLookupCallsPerLoop, over loops that pass
// --max-staleness (when the harness gives the clock), and none of the gone
// nodes is ever claimed for a group (refresh.UnknownNodeLookup).
func checkGoneNodesCostBounded(t *testing.T, h Harness) {
	base := newKit(t, h)
	k := newKit(t, h)
	// Each environment asks about its own instances: fakes need not number
	// them alike.
	baseNodes, baseWant := base.registeredNodes()
	nodes, want := k.registeredNodes()
	if len(nodes) == 0 {
		t.Fatal("the seed has no instance to model gone nodes on")
	}
	taken := map[string]bool{}
	for id := range want {
		taken[id] = true
	}
	ghosts := ghostIDs(nodes[0].Spec.ProviderID, goneNodes, taken)
	for _, id := range ghosts {
		nodes = append(nodes, goneNode(id))
		want[id] = ""
	}
	step := refresh.DefaultMaxStaleness / 3
	var extra []int
	for loop := 0; loop < goneNodeLoops; loop++ {
		if loop > 0 && k.env.Clock != nil && base.env.Clock != nil {
			k.env.Clock.Advance(step)
			base.env.Clock.Advance(step)
		}
		without := base.caLoop(baseNodes, baseWant)
		with := k.caLoop(nodes, want)
		extra = append(extra, with-without)
		if with-without > maxLookupCallsPerLoop {
			t.Fatalf("loop %d: %d nodes the cloud does not have cost %d extra cloud calls (%d with them, %d without), at most %d allowed; extra calls so far %v",
				loop+1, len(ghosts), with-without, with, without, maxLookupCallsPerLoop, extra)
		}
	}
	t.Logf("%d nodes the cloud does not have cost %v extra cloud calls in %d loops %s apart (clock driven: %v)",
		len(ghosts), extra, goneNodeLoops, step, k.env.Clock != nil)
}

// registeredNodes returns the Node of every instance of every group, and
// each one's group by providerID.
func (k *kit) registeredNodes() ([]*corev1.Node, map[string]string) {
	k.t.Helper()
	var nodes []*corev1.Node
	want := map[string]string{}
	for _, g := range k.groups() {
		for _, in := range k.nodes(g) {
			nodes = append(nodes, k.env.Node(in))
			want[in.Id] = g.Id(k.ctx())
		}
	}
	return nodes, want
}

// checkFailingLookupAnswersNoGroup: when the cloud fails the lookup of a
// node the snapshot lacks, NodeGroupForNode answers "no group", never an
// error (CA does not read one as "not autoscaled") and never a group, for a
// node just launched in a group as for one the cloud does not have; every
// such answer is counted (BuildOptions.NodeLookupFailed, when the harness
// builds from options). Once the cloud answers again, the next Refresh
// places the new node.
func checkFailingLookupAnswersNoGroup(t *testing.T, h Harness) {
	var failures atomic.Int32
	k := kitFor(t, h, registry.BuildOptions{NodeLookupFailed: func() { failures.Add(1) }})
	k.refresh()
	k.require(HookFailNextCalls, HookAddUnseenInstance)
	id := k.mainGroup().Id(k.ctx())
	unseen := k.env.AddUnseenInstance(id)
	ghost := ghostIDs(unseen, 1, map[string]bool{unseen: true})[0]
	k.env.FailNextCalls(1000)
	for _, n := range []*corev1.Node{fakeNode(unseen, "unregistered"), goneNode(ghost), fakeNode(unseen, "unregistered")} {
		g, err := k.env.Provider.NodeGroupForNode(k.ctx(), n)
		if err != nil {
			k.env.FailNextCalls(0)
			t.Fatalf("NodeGroupForNode(%s) while the cloud fails: error %v, want no group and no error", n.Spec.ProviderID, err)
		}
		if g != nil {
			k.env.FailNextCalls(0)
			t.Fatalf("NodeGroupForNode(%s) while the cloud fails = group %s, want no group", n.Spec.ProviderID, g.Id(k.ctx()))
		}
	}
	k.env.FailNextCalls(0)
	if n := failures.Load(); h.NewEnvWithOptions != nil && n != 3 {
		t.Fatalf("%d answers counted as failed lookups (BuildOptions.NodeLookupFailed), want 3", n)
	}
	k.refresh()
	g, err := k.env.Provider.NodeGroupForNode(k.ctx(), fakeNode(unseen, "unregistered"))
	if err != nil || g == nil || g.Id(k.ctx()) != id {
		t.Fatalf("after the cloud recovered and a Refresh: NodeGroupForNode(%s) = %v, %v; want group %s", unseen, g, err, id)
	}
}

// checkProviderIDOverLabels: the providerID decides a node's group. A node
// can write its own labels, so labels naming another instance (the labels
// the cloud puts on a node of another group) never claim it for that group.
func checkProviderIDOverLabels(t *testing.T, k *kit) {
	g := k.mainGroup()
	id := g.Id(k.ctx())
	labelled := k.env.Node(k.nodes(g)[0])
	cases := map[string]string{ghostIDs(labelled.Spec.ProviderID, 1, map[string]bool{labelled.Spec.ProviderID: true})[0]: ""}
	if o := k.otherGroup(g); o != nil {
		cases[k.nodes(o)[0].Id] = o.Id(k.ctx())
	}
	for providerID, want := range cases {
		n := labelled.DeepCopy()
		n.Name, n.Spec.ProviderID = "relabelled", providerID
		got, err := k.env.Provider.NodeGroupForNode(k.ctx(), n)
		k.must(err, "NodeGroupForNode("+providerID+")")
		gotID := ""
		if got != nil {
			gotID = got.Id(k.ctx())
		}
		if gotID != want {
			t.Fatalf("NodeGroupForNode(providerID %s, labels of a node of %s) = group %q, want %q", providerID, id, gotID, want)
		}
	}
}

// checkTwoSpecsForOneGroup: two --nodes specs naming one group (by id and
// by another of its names, or by the same id with other bounds) are a
// configuration error: the provider's construction or first Refresh fails
// with an error wrapping ErrConfig (main exits 2) that names both specs,
// never a silent "last one wins".
func checkTwoSpecsForOneGroup(t *testing.T, h Harness) {
	k := newKit(t, h)
	k.require(HookStartWithSpecs)
	g := k.mainGroup()
	id, maxSize := g.Id(k.ctx()), g.MaxSize(k.ctx())
	pairs := [][2]string{{fmt.Sprintf("1:%d:%s", maxSize, id), fmt.Sprintf("1:%d:%s", maxSize-1, id)}}
	if k.optional(HookSpecNames) {
		for _, name := range k.env.SpecNames(id) {
			if name != id {
				pairs = append(pairs, [2]string{fmt.Sprintf("1:%d:%s", maxSize, id), fmt.Sprintf("1:%d:%s", maxSize-1, name)})
				break
			}
		}
	}
	if len(pairs) == 1 {
		t.Logf("group %s has no name besides its id (Env.SpecNames): checking the same id twice only", id)
	}
	for _, specs := range pairs {
		for _, order := range [][]string{{specs[0], specs[1]}, {specs[1], specs[0]}} {
			err := h.StartWithSpecs(t, order)
			if err == nil {
				t.Fatalf("--nodes %s --nodes %s: the provider started; two specs for group %s must be a configuration error", order[0], order[1], id)
			}
			if !errors.Is(err, cloudprovider.ErrConfig) {
				t.Fatalf("--nodes %s --nodes %s: %v, want an error wrapping ErrConfig (exit 2)", order[0], order[1], err)
			}
			for _, s := range order {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("--nodes %s --nodes %s: error %q does not name %s", order[0], order[1], err, s)
				}
			}
		}
	}
}

// checkStatus fails for error info on any state but creating: CA reads error
// info only on instances being created, so elsewhere it only misleads
// (cloudprovider.FailedCreation).
func (k *kit) checkStatus(in cloudprovider.Instance) {
	k.t.Helper()
	if in.Status != nil && in.Status.ErrorInfo != nil && in.Status.State != cloudprovider.InstanceCreating {
		k.t.Fatalf("instance %s is %v with error info %+v; error info goes only with creating", in.Id, in.Status.State, *in.Status.ErrorInfo)
	}
}
