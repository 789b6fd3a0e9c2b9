package cloudprovidertest

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// The outcome rule (cloudprovider.MutationOutcome, decided where the answer
// is read): a 2xx applies the change, a definite refusal changes nothing,
// and only an unknown outcome quarantines the group. Each check below fails
// for a provider that quarantines a definite answer or loses an applied one.

// notQuarantined makes another IncreaseSize(1) right away: a definite answer
// leaves nothing in flight, so the group must take it (no ErrUnavailable
// from the outcome-unknown quarantine).
func (k *kit) notQuarantined(g cloudprovider.NodeGroup, after string) {
	k.t.Helper()
	err := g.IncreaseSize(k.ctx(), 1)
	if errors.Is(err, cloudprovider.ErrUnavailable) {
		k.t.Fatalf("IncreaseSize(1) right after %s was refused as Unavailable (quarantined although the answer was definite): %v", after, err)
	}
	k.must(err, "IncreaseSize(1) right after "+after)
}

// checkAppliedEmptyAnswer: the cloud carries out a mutation and answers 2xx
// with an empty body (a gateway dropped it). The change is applied:
// TargetSize shows it at once, the cloud agrees after a Refresh, and the
// next change is not quarantined. A provider that reads "no usable body" as
// "outcome unknown" freezes the group for the quarantine window.
func checkAppliedEmptyAnswer(t *testing.T, k *kit) {
	k.require(HookInjectMutationFault, HookClearFaults)
	g := k.mainGroup()
	id, before := g.Id(k.ctx()), k.target(g)
	victim := k.nodes(g)[0]

	k.env.InjectMutationFault(MutationIncreaseSize, FaultAppliedEmptyBody)
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1) the cloud applied and answered 2xx with an empty body")
	k.clearFaults()
	if got := k.target(g); got != before+1 {
		t.Fatalf("TargetSize right after an applied IncreaseSize(1) answered with an empty body = %d, want %d", got, before+1)
	}
	k.notQuarantined(g, "an applied IncreaseSize answered 2xx with an empty body")
	k.settle()
	k.refresh()
	g = k.group(id)
	if got := k.target(g); got != before+2 {
		t.Fatalf("cloud target %d after two increases from %d (the first answered with an empty body), want %d", got, before, before+2)
	}

	k.env.InjectMutationFault(MutationDeleteNodes, FaultAppliedEmptyBody)
	k.must(g.DeleteNodes(k.ctx(), []*corev1.Node{k.env.Node(victim)}), "DeleteNodes the cloud applied and answered 2xx with an empty body")
	k.clearFaults()
	if got := k.target(g); got != before+1 {
		t.Fatalf("TargetSize right after an applied DeleteNodes answered with an empty body = %d, want %d", got, before+1)
	}
	k.notQuarantined(g, "an applied DeleteNodes answered 2xx with an empty body")
	k.settle()
	k.refresh()
	g = k.group(id)
	if got := k.target(g); got != before+2 {
		t.Fatalf("cloud target %d after +2, -1, +1 from %d, want %d", got, before, before+2)
	}
	if k.liveIDs(g)[victim.Id] {
		t.Fatalf("instance %s still live after a DeleteNodes the cloud applied", victim.Id)
	}
}

// checkRefusalNotQuarantined: the cloud refuses a mutation with a 4xx. That
// proves nothing changed: the call fails, the target stays, and the next
// change goes to the cloud at once.
func checkRefusalNotQuarantined(t *testing.T, h Harness) {
	for _, kind := range []Mutation{MutationIncreaseSize, MutationDeleteNodes} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			k := newKit(t, h)
			k.require(HookInjectMutationFault, HookClearFaults)
			k.refusedOnce(kind, func() { k.env.InjectMutationFault(kind, FaultRefused) }, "a 400")
		})
	}
}

// checkCloudReportedFailureNotQuarantined: the cloud answers a mutation
// with its own report that the change failed (an Exoscale operation that
// ended in "failure", a Volcengine 200 carrying its error object). That is a
// refusal too: the call fails, and the next change is not quarantined.
func checkCloudReportedFailureNotQuarantined(t *testing.T, h Harness) {
	for _, kind := range []Mutation{MutationIncreaseSize, MutationDeleteNodes} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			k := newKit(t, h)
			k.require(HookReportMutationFailed)
			k.refusedOnce(kind, func() { k.env.ReportMutationFailed(kind) }, "the cloud's report that it failed")
		})
	}
}

// refusedOnce runs one mutation of kind that inject makes the cloud refuse,
// then checks it failed without moving the target and did not quarantine.
func (k *kit) refusedOnce(kind Mutation, inject func(), how string) {
	k.t.Helper()
	g := k.mainGroup()
	id := g.Id(k.ctx())
	victims := mutationCases[kind].prepare(k, g)
	before := k.target(g)
	inject()
	err := mutationCases[kind].run(k.ctx(), k, g, victims)
	k.clearFaults()
	if err == nil {
		k.t.Fatalf("%s answered with %s succeeded", kind, how)
	}
	if got := k.target(g); got != before {
		k.t.Fatalf("%s answered with %s (%v) moved the target from %d to %d", kind, how, err, before, got)
	}
	k.notQuarantined(g, string(kind)+" answered with "+how)
	k.settle()
	k.refresh()
	if got := k.target(k.group(id)); got != before+1 {
		k.t.Fatalf("cloud target %d after a refused %s and IncreaseSize(1) from %d, want %d", got, kind, before, before+1)
	}
	for inst := range victims {
		if !k.liveIDs(k.group(id))[inst] {
			k.t.Fatalf("instance %s gone although its deletion was refused", inst)
		}
	}
}
