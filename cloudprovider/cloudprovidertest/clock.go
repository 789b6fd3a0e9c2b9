package cloudprovidertest

import (
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// MutationClock returns a ManualClock for the outcome-unknown quarantine of
// the guards built with GuardOptions(clock), so a test passes the window
// with PassUnknownOutcomeWindow instead of waiting it out. Each test has its
// own: nothing is shared between tests running in parallel.
func MutationClock() *fakecloud.ManualClock {
	return fakecloud.NewManualClock(time.Now())
}

// GuardOptions makes the groups' guards measure their quarantine with c
// and the default window (BuildOptions.Guard, or a Ledger's options).
func GuardOptions(c *fakecloud.ManualClock) groupstate.GuardOptions {
	return groupstate.GuardOptions{Now: c.Now}
}

// PassUnknownOutcomeWindow moves c past the quarantine an outcome-unknown
// mutation started, for guards with the default window
// (groupstate.DefaultUnknownOutcomeWindow).
func PassUnknownOutcomeWindow(c *fakecloud.ManualClock) {
	c.Advance(groupstate.DefaultUnknownOutcomeWindow + time.Nanosecond)
}
