package fakeapi

import "time"

// Clock tells the fake what time it is, so that provisioning lag can be driven
// by tests (cloudprovidertest.ManualClock) or by real time (--simulate).
type Clock interface {
	Now() time.Time
}

// RealClock reads the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }
