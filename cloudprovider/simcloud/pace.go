package simcloud

import "time"

// Pace is how fast a simulated cloud carries out a change, in real time.
type Pace struct {
	// Appear is how long a requested instance takes to be listed, on a
	// cloud that lists it late (VKE lists a pool's new nodes after a while).
	Appear time.Duration
	// Provision is how long a requested instance takes to run.
	Provision time.Duration
	// Removal is how long a removed instance stays listed.
	Removal time.Duration
	// Operation is how long an asynchronous operation takes to end, on a
	// cloud that tracks its changes as operations (Exoscale).
	Operation time.Duration
}

// DemoPace is the pace of every provider's --simulate cloud: slow enough
// that an operator watching a demo sees each state an instance passes
// through, fast enough that a scale-up is running well within CA's
// default 15-minute provisioning timeout and within a minute of its
// request; the same for every cloud, so the demos read alike.
func DemoPace() Pace {
	return Pace{Appear: 2 * time.Second, Provision: 6 * time.Second, Removal: 3 * time.Second, Operation: 2 * time.Second}
}
