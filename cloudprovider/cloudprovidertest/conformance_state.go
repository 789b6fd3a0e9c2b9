package cloudprovidertest

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// Checks of the state the safety rules protect: what a group shows between
// our mutation and the cloud's listing catching up with it.

// checkDeletingEndsByGrace: an instance whose deletion the cloud accepted
// shows Deleting while the cloud still lists it live, disappears once a
// listing no longer holds it, and, if the cloud keeps listing it, stops
// showing Deleting once groupstate.DeletingGrace has passed (the one
// rule, in groupstate.Group), so CA can delete it again.
func checkDeletingEndsByGrace(t *testing.T, h Harness) {
	t.Run("DisappearsOnceUnlisted", func(t *testing.T) {
		t.Parallel()

		k := newKit(t, h)
		g, victim := k.deleteHeld()
		id := g.Id(k.ctx())
		if k.env.Clock != nil {
			// Inside the grace the instance still shows Deleting.
			k.env.Clock.Advance(groupstate.DeletingGrace - time.Second)
			k.refresh()
			k.expectDeleting(k.group(id), victim, "a moment before the grace ends")
		}
		k.settle()
		k.refresh()
		if st, listed := k.listed(k.group(id), victim); listed {
			t.Fatalf("instance %s still listed as %+v after the cloud stopped listing it", victim, st)
		}
	})
	t.Run("EndsWhenGracePasses", func(t *testing.T) {
		t.Parallel()

		k := newKit(t, h)
		g, victim := k.deleteHeld()
		id := g.Id(k.ctx())
		if k.env.Clock == nil {
			t.Fatal("Env.Clock is nil: the check moves the provider's clock past groupstate.DeletingGrace")
		}
		k.env.Clock.Advance(groupstate.DeletingGrace)
		k.refresh()
		st, listed := k.listed(k.group(id), victim)
		if !listed {
			t.Fatalf("instance %s is not listed, but the cloud still lists it", victim)
		}
		if st != nil && st.State == cloudprovider.InstanceDeleting {
			t.Fatalf("instance %s the cloud still lists live shows Deleting %v after its deletion was accepted: the grace must have ended it",
				victim, groupstate.DeletingGrace)
		}
		// The refresh that ends the grace serves the target the next one
		// does: nothing changed in the cloud between them.
		ended := k.target(k.group(id))
		k.refresh()
		if next := k.target(k.group(id)); next != ended {
			t.Fatalf("target %d in the refresh that ended the grace of %s, %d in the next with the cloud unchanged", ended, victim, next)
		}
	})
}

// deleteHeld deletes a running instance of the main group whose removal the
// cloud holds (Env.HoldRemoval), checks it shows Deleting right after and
// after a Refresh, and returns the group and the instance's providerID.
func (k *kit) deleteHeld() (cloudprovider.NodeGroup, string) {
	k.t.Helper()
	k.require(HookHoldRemoval)
	g := k.mainGroup()
	id := g.Id(k.ctx())
	victim := runningVictim(k, g)
	pid := victim.Spec.ProviderID
	k.env.HoldRemoval(pid)
	k.must(g.DeleteNodes(k.ctx(), []*corev1.Node{victim}), "DeleteNodes of one registered node above min")
	k.expectDeleting(g, pid, "right after DeleteNodes")
	k.refresh()
	k.expectDeleting(k.group(id), pid, "after a Refresh while the cloud still lists it")
	return k.group(id), pid
}

// listed returns the status of providerID in g's Nodes, and whether it is
// listed at all.
func (k *kit) listed(g cloudprovider.NodeGroup, providerID string) (*cloudprovider.InstanceStatus, bool) {
	k.t.Helper()
	for _, in := range k.nodes(g) {
		if in.Id == providerID {
			return in.Status, true
		}
	}
	return nil, false
}

// expectDeleting fails unless providerID is listed in g as Deleting.
func (k *kit) expectDeleting(g cloudprovider.NodeGroup, providerID, when string) {
	k.t.Helper()
	st, listed := k.listed(g, providerID)
	if !listed {
		k.t.Fatalf("instance %s whose deletion the cloud accepted is not listed %s, but the cloud still lists it", providerID, when)
	}
	if st == nil || st.State != cloudprovider.InstanceDeleting {
		k.t.Fatalf("instance %s whose deletion the cloud accepted shows %+v %s, want Deleting", providerID, st, when)
	}
}

// checkOlderListingKeepsMutation: a Refresh whose listing began before our
// latest accepted mutation of a group (IncreaseSize while the cloud holds
// the listing, answered with the cloud as it was on arrival) must not
// overwrite the mutation's effect: TargetSize after that Refresh still
// shows it, and so does the next Refresh once the cloud has caught up. It
// runs twice: with the cloud's answer stating the new size, and with an
// answer that does not (an applied change answered 2xx with an empty
// body), where the size the provider serves comes from the guard's fresh
// read, which no cloud operation of the provider's tracks.
func checkOlderListingKeepsMutation(t *testing.T, h Harness) {
	for _, c := range []struct {
		name string
		// emptyAnswer answers the increase with FaultAppliedEmptyBody.
		emptyAnswer bool
	}{
		{"SizeFromTheAnswer", false},
		{"SizeFromAFreshRead", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			k := newKit(t, h)
			k.require(HookInjectListingFault)
			var fault *fakecloud.Fault
			if c.emptyAnswer {
				k.require(HookInjectMutationFault, HookClearFaults)
				f := FaultAppliedEmptyBody
				fault = &f
			}
			k.olderListingKeepsIncrease(fault)
		})
	}
}

func (k *kit) olderListingKeepsIncrease(fault *fakecloud.Fault) {
	t := k.t
	g := k.mainGroup()
	id, before := g.Id(k.ctx()), k.target(g)

	release, arrived := make(chan struct{}), make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	k.env.InjectListingFault(fakecloud.Fault{Release: release, Arrived: arrived, AnswerOnArrival: true})
	done := make(chan error, 1)
	ctx := k.ctx()
	go func() { done <- k.env.Provider.Refresh(ctx) }()
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("Refresh ended (err %v) without sending the listing the harness holds", err)
	}

	if fault != nil {
		k.env.InjectMutationFault(MutationIncreaseSize, *fault)
	}
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1) while a Refresh's listing is held")
	if fault != nil {
		k.clearFaults()
	}
	if got := k.target(g); got != before+1 {
		t.Fatalf("TargetSize right after IncreaseSize(1) = %d, want %d", got, before+1)
	}
	close(release)
	released = true
	if err := <-done; err != nil {
		if ctx.Err() != nil {
			t.Fatalf("Refresh with a held listing ran past CA's deadline: %v", err)
		}
		t.Fatalf("Refresh whose listing began before IncreaseSize(1): %v", err)
	}
	if got := k.target(k.group(id)); got != before+1 {
		t.Fatalf("TargetSize after a Refresh whose listing began before IncreaseSize(1) = %d, want %d: the older listing overwrote the mutation", got, before+1)
	}
	k.settle()
	k.refresh()
	if got := k.target(k.group(id)); got != before+1 {
		t.Fatalf("TargetSize after the cloud caught up = %d, want %d", got, before+1)
	}
}

// checkDeletedFailedSlotEnds: a slot the cloud failed to fill shows as a
// failed creation until CA deletes it (groupstate.Group.FailedSlots); once
// DeleteNodes of it succeeds, it is gone from Nodes and the target no
// longer counts it, at once and after the cloud settles and a Refresh, so
// CA neither deletes it again nor waits for it.
func checkDeletedFailedSlotEnds(t *testing.T, k *kit) {
	k.require(HookFailNextScaleUp)
	g := k.mainGroup()
	id := g.Id(k.ctx())
	slot := failedSlotVictim(k, g)
	g = k.group(id)
	before := k.target(g)
	k.must(g.DeleteNodes(k.ctx(), []*corev1.Node{slot}), "DeleteNodes of the failed slot "+slot.Spec.ProviderID)
	for _, when := range []string{"right after DeleteNodes", "after the cloud settled and a Refresh"} {
		if when != "right after DeleteNodes" {
			k.settle()
			k.refresh()
			g = k.group(id)
		}
		if st, listed := k.listed(g, slot.Spec.ProviderID); listed {
			t.Fatalf("failed slot %s CA deleted is still listed %s, as %+v", slot.Spec.ProviderID, when, st)
		}
		if got := k.target(g); got != before-1 {
			t.Fatalf("TargetSize %s of the failed slot = %d, want %d: the slot must stop counting once CA deleted it", when, got, before-1)
		}
	}
}
