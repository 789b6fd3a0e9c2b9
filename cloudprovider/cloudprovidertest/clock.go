package cloudprovidertest

import (
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// MutationClock makes every cloudprovider.MutationGuard measure its
// outcome-unknown quarantine with a ManualClock for the rest of the test (t's
// cleanup restores the wall clock), so a test passes the window with
// PassUnknownOutcomeWindow instead of waiting it out.
func MutationClock(t testing.TB) *fakecloud.ManualClock {
	t.Helper()
	c := fakecloud.NewManualClock(time.Now())
	t.Cleanup(cloudprovider.SetMutationClock(c.Now))
	return c
}

// PassUnknownOutcomeWindow moves c past the quarantine an outcome-unknown
// mutation started (cloudprovider.UnknownOutcomeWindow).
func PassUnknownOutcomeWindow(c *fakecloud.ManualClock) {
	c.Advance(cloudprovider.UnknownOutcomeWindow() + time.Nanosecond)
}
