package cloudprovidertest

import (
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// MutationClock makes every groupstate.MutationGuard measure its
// outcome-unknown quarantine with a ManualClock for the rest of the test (t's
// cleanup restores the wall clock), so a test passes the window with
// PassUnknownOutcomeWindow instead of waiting it out.
func MutationClock(t testing.TB) *fakecloud.ManualClock {
	t.Helper()
	c := fakecloud.NewManualClock(time.Now())
	t.Cleanup(groupstate.SetMutationClock(c.Now))
	return c
}

// PassUnknownOutcomeWindow moves c past the quarantine an outcome-unknown
// mutation started (groupstate.UnknownOutcomeWindow).
func PassUnknownOutcomeWindow(c *fakecloud.ManualClock) {
	c.Advance(groupstate.UnknownOutcomeWindow() + time.Nanosecond)
}
