package cloudprovidertest

import (
	"testing"
	"time"
)

// checkQuarantineReported: while a group refuses changes after a lost
// answer, its node group's Status says so, which is what the server's
// quarantined_node_groups metric counts; once the window has passed it
// reports none.
func checkQuarantineReported(t *testing.T, k *kit) {
	if k.env.InjectMutationFault == nil || k.env.ClearFaults == nil {
		t.Skip("Env.InjectMutationFault or Env.ClearFaults not provided")
	}
	g := k.mainGroup()
	id := g.Id(k.ctx())
	quarantinedUntil := func() time.Time { return k.group(id).Status(k.ctx()).QuarantinedUntil }
	if until := quarantinedUntil(); !until.IsZero() {
		t.Fatalf("node group %s reports a quarantine until %s before any change", id, until)
	}
	lost := FaultAnswerLost
	lost.Times = faultTimes
	k.env.InjectMutationFault(MutationIncreaseSize, lost)
	err := g.IncreaseSize(k.ctx(), 1)
	k.clearFaults()
	if err == nil {
		t.Fatal("IncreaseSize succeeded although every answer was lost")
	}
	if quarantinedUntil().IsZero() {
		t.Fatalf("node group %s refuses changes after a lost answer but reports no quarantine", id)
	}
	PassUnknownOutcomeWindow(k.mutationClock)
	if until := quarantinedUntil(); !until.IsZero() {
		t.Fatalf("node group %s still reports a quarantine until %s after the window", id, until)
	}
}
