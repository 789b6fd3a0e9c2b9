package cloudprovidertest

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// deletionPath is one way DeleteNodes removes what CA asks it to: the kind
// of instance it gets, and how the check makes the cloud hold one.
type deletionPath struct {
	name string
	// hooks are the Env hooks the path needs.
	hooks []Hook
	// victim prepares the cloud and returns the node CA asks to delete.
	victim func(k *kit, g cloudprovider.NodeGroup) *corev1.Node
}

var deletionPaths = []deletionPath{
	{name: "RunningNode", hooks: []Hook{HookAddUnseenInstance}, victim: runningVictim},
	{name: "FailedInstance", hooks: []Hook{HookAddUnseenInstance, HookAddFailedInstance}, victim: failedInstanceVictim},
	{name: "FailedSlot", hooks: []Hook{HookAddUnseenInstance, HookFailNextScaleUp}, victim: failedSlotVictim},
}

// checkDeletionRereadsBeforeShrink: for every way DeleteNodes removes an
// instance (a running node; an instance that failed to start; a slot the
// cloud failed to fill), the cloud launches an instance the provider has not
// seen (another actor, or a request being filled), then CA deletes the
// victim before any Refresh. Where the deletion lowers the cloud's size to
// an absolute number, a number computed from the snapshot is one too low
// and the cloud removes an instance of its own choosing; the rule
// (groupstate.Group.Transact: its absolute-size step, Txn.Shrink, always
// re-reads first) keeps every instance CA did not ask to delete, and the
// group at or above min.
func checkDeletionRereadsBeforeShrink(t *testing.T, h Harness) {
	for _, path := range deletionPaths {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			k := newKit(t, h)
			k.require(path.hooks...)
			g := k.mainGroup()
			id, minSize := g.Id(k.ctx()), g.MinSize(k.ctx())
			victim := path.victim(k, g)
			g = k.group(id)
			kept := k.liveIDs(g)
			delete(kept, victim.Spec.ProviderID)
			unseen := k.env.AddUnseenInstance(id)
			err := g.DeleteNodes(k.ctx(), []*corev1.Node{victim})
			if err != nil {
				k.expectErr(err, "DeleteNodes("+victim.Spec.ProviderID+") after an unseen launch", cloudprovider.ErrFailedPrecondition)
			}
			k.settle()
			k.refresh()
			g = k.group(id)
			after := k.liveIDs(g)
			for inst := range kept {
				if !after[inst] {
					t.Fatalf("DeleteNodes of %s (err %v) made the cloud remove instance %s, which CA did not ask to delete", victim.Spec.ProviderID, err, inst)
				}
			}
			if !after[unseen] {
				t.Fatalf("DeleteNodes of %s (err %v) made the cloud remove the instance it launched unseen (%s): the size was lowered from the snapshot without a fresh read", victim.Spec.ProviderID, err, unseen)
			}
			if got := k.target(g); got < minSize {
				t.Fatalf("cloud target %d below min %d after DeleteNodes of %s (err %v)", got, minSize, victim.Spec.ProviderID, err)
			}
		})
	}
}

// runningVictim is a registered, running instance of the group.
func runningVictim(k *kit, g cloudprovider.NodeGroup) *corev1.Node {
	k.t.Helper()
	for _, in := range k.nodes(g) {
		if in.Status == nil || in.Status.State == cloudprovider.InstanceRunning {
			return k.env.Node(in)
		}
	}
	k.t.Fatal("the main group has no running instance")
	return nil
}

// failedInstanceVictim is an instance the cloud failed to start, as CA
// sends it: a node that never registered.
func failedInstanceVictim(k *kit, g cloudprovider.NodeGroup) *corev1.Node {
	k.t.Helper()
	id := g.Id(k.ctx())
	providerID := k.env.AddFailedInstance(id)
	k.refresh()
	for _, in := range k.nodes(k.group(id)) {
		if in.Id == providerID {
			if !failedCreation(in) {
				k.t.Fatalf("instance %s that failed to start is reported as %+v, want a failed creation", providerID, in.Status)
			}
			return fakeNode(providerID, "create-error")
		}
	}
	k.t.Fatalf("instance %s that failed to start is not listed after a Refresh", providerID)
	return nil
}

// failedSlotVictim is a slot the cloud failed to fill after a scale-up, as
// the provider reports it (a placeholder) and CA sends it.
func failedSlotVictim(k *kit, g cloudprovider.NodeGroup) *corev1.Node {
	k.t.Helper()
	id := g.Id(k.ctx())
	before := map[string]bool{}
	for _, in := range k.nodes(g) {
		before[in.Id] = true
	}
	k.env.FailNextScaleUp(id)
	if k.env.Clock != nil {
		// Time passes between the seed and the scale-up, so the cloud's
		// record of the failure is newer than everything before it.
		k.env.Clock.Advance(time.Second)
	}
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1) the cloud then fails to fill")
	k.settle()
	k.refresh()
	for _, in := range k.nodes(k.group(id)) {
		if !before[in.Id] && failedCreation(in) {
			return fakeNode(in.Id, "create-error")
		}
	}
	k.t.Fatal("no failed-creation instance after a scale-up the cloud failed to fill")
	return nil
}

func failedCreation(in cloudprovider.Instance) bool {
	return in.Status != nil && in.Status.State == cloudprovider.InstanceCreating && in.Status.ErrorInfo != nil
}
