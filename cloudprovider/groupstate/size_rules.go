package groupstate

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// The functions below hold the resize rules of the contract (§2.7 of the
// externalgrpc contract doc) once, so that every provider enforces them alike and
// before any cloud call.

// CheckIncrease validates IncreaseSize(delta) against the current target and max.
func CheckIncrease(group string, delta, target, max int) error {
	if delta <= 0 {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: size increase must be positive, got %d", group, delta)
	}
	if target+delta > max {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "node group %s: size increase too large: target %d + %d exceeds max %d", group, target, delta, max)
	}
	return nil
}

// CheckDecrease validates DecreaseTargetSize(delta): the target may only drop to
// the number of instances that already exist, because only unfulfilled requests
// may be cancelled.
func CheckDecrease(group string, delta, target, existing int) error {
	if delta >= 0 {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: size decrease must be negative, got %d", group, delta)
	}
	if target+delta < existing {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "node group %s: attempt to delete existing nodes: target %d%+d is below %d existing instances", group, target, delta, existing)
	}
	return nil
}

// IsRegistered reports whether node is a real cluster node rather than one of the
// fake nodes CA builds for instances that never registered or failed to create.
func IsRegistered(node *corev1.Node) bool {
	if node == nil {
		return false
	}
	_, fake := node.Annotations[cloudprovider.FakeNodeReasonAnnotation]
	return !fake
}

// CheckDeleteMin applies the min rule to a DeleteNodes request: registered nodes
// are never taken below min, while instances that never registered (or failed to
// create) can always be removed, because CA must be able to clean them up
// (including under --force-delete-unregistered-nodes).
func CheckDeleteMin(group string, target, min int, nodes []*corev1.Node) error {
	registered := 0
	for _, n := range nodes {
		if IsRegistered(n) {
			registered++
		}
	}
	if registered > 0 && target-len(nodes) < min {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "node group %s: deleting %d nodes (%d registered) would take target %d below min %d", group, len(nodes), registered, target, min)
	}
	return nil
}
