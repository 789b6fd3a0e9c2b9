package cloudprovidertest

import (
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// MutationClock returns a ManualClock for the outcome-unknown quarantine of
// the guards built with GuardOptions(clock), so a test passes the window
// with PassUnknownOutcomeWindow instead of waiting it out. Each test has its
// own: nothing is shared between tests running in parallel.
func MutationClock() *fakecloud.ManualClock {
	return fakecloud.NewManualClock(time.Now())
}

// GuardOptions makes MutationGuards measure their quarantine with c and the
// default window (BuildOptions.Guard, or NewMutationGuard's options).
func GuardOptions(c *fakecloud.ManualClock) cloudprovider.GuardOptions {
	return cloudprovider.GuardOptions{Now: c.Now}
}

// PassUnknownOutcomeWindow moves c past the quarantine an outcome-unknown
// mutation started, for guards with the default window
// (cloudprovider.DefaultUnknownOutcomeWindow).
func PassUnknownOutcomeWindow(c *fakecloud.ManualClock) {
	c.Advance(cloudprovider.DefaultUnknownOutcomeWindow + time.Nanosecond)
}
