package groupstate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// TestQuarantinedUntil: zero until an outcome-unknown mutation, then the end
// of the window, then zero again once the window has passed.
func TestQuarantinedUntil(t *testing.T) {
	clock := cloudprovidertest.MutationClock()
	g := groupstate.NewGuard("g", cloudprovidertest.GuardOptions(clock))
	if until := g.QuarantinedUntil(); !until.IsZero() {
		t.Fatalf("fresh guard quarantined until %s", until)
	}
	lost := &countingMutation{callErr: errors.New("connection reset")}
	if err := g.Do(context.Background(), lost.read, lost.plan); err == nil {
		t.Fatal("the lost call did not fail")
	}
	want := clock.Now().Add(groupstate.DefaultUnknownOutcomeWindow)
	if until := g.QuarantinedUntil(); !until.Equal(want) {
		t.Fatalf("quarantined until %s, want %s", until, want)
	}
	cloudprovidertest.PassUnknownOutcomeWindow(clock)
	if until := g.QuarantinedUntil(); !until.IsZero() {
		t.Fatalf("still quarantined until %s after the window", until)
	}
}
