// Package cloudprovidertest is the conformance kit every provider runs against
// its fake cloud, plus an in-memory provider used to test the kit and the server.
//
// The kit checks the rules of the externalgrpc contract that do not depend on a
// particular cloud: resize bounds enforced before any cloud call, ownership
// checks on deletion, the min rule for registered versus never-registered
// nodes, TargetSize following mutations at once, lookups by providerID, and
// concurrency safety.
package cloudprovidertest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// Env is one provider bound to a freshly seeded fake cloud.
//
// The seed must contain at least one node group ("the main group") with
// min >= 1, at least min+1 running instances, all of them registered, and
// target+2 <= max. A second group makes the cross-group deletion checks stronger.
type Env struct {
	// Provider talks to the fake cloud. The kit calls Refresh before using it.
	Provider cloudprovider.CloudProvider
	// CloudCalls returns how many requests the fake cloud has received so far.
	CloudCalls func() int
	// Node returns the Kubernetes Node a registered instance has: its
	// providerID and the labels the cloud puts on it.
	Node func(inst cloudprovider.Instance) *corev1.Node
	// Settle makes the fake cloud finish pending work (provisioning, removal)
	// without waiting. Optional.
	Settle func()
	// FailNextCalls makes the fake cloud fail its next n requests with a server
	// error; n = 0 clears any failures still pending. Optional; enables the
	// failed-Refresh checks.
	FailNextCalls func(n int)
}

// Harness builds environments for the kit.
type Harness struct {
	// NewEnv returns a fresh Env; the kit calls it once per check.
	NewEnv func(t *testing.T) *Env
}
