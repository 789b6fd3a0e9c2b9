package groupstate

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// CheckIncrease checks IncreaseSize(delta) against the target and max.
func CheckIncrease(group string, delta, target, max int) error {
	if delta <= 0 {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: size increase must be positive, got %d", group, delta)
	}
	if target+delta > max {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "node group %s: size increase too large: target %d + %d exceeds max %d", group, target, delta, max)
	}
	return nil
}

// CheckDecrease checks DecreaseTargetSize(delta): only requests not yet
// filled may be cancelled, so the target never drops below the existing
// instances.
func CheckDecrease(group string, delta, target, existing int) error {
	if delta >= 0 {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: size decrease must be negative, got %d", group, delta)
	}
	if target+delta < existing {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "node group %s: attempt to delete existing nodes: target %d%+d is below %d existing instances", group, target, delta, existing)
	}
	return nil
}

// CheckCancel is CheckDecrease for a cloud that picks the instances a
// smaller size removes, among them those it holds and does not list yet
// (VKE, Exoscale's :scale): while the group lists fewer instances than its
// target, a smaller size may remove a running one instead of the one not
// listed. So a decrease may give up only the slots the provider names
// without the cloud picking (failed slots), named of them; live counts
// the listed instances that stay.
func CheckCancel(group string, delta, target, live, named int) error {
	if err := CheckDecrease(group, delta, target, live); err != nil {
		return err
	}
	if -delta > named {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
			"node group %s: decrease by %d refused: %d of its %d instances are not listed yet and the cloud picks the instances a smaller size removes, possibly a running one; once they are listed, scale-down removes those not needed",
			group, -delta, target-live-named, target)
	}
	return nil
}

// isRegistered reports whether node is a real node, not one CA makes up
// for an instance that never registered.
func isRegistered(node *corev1.Node) bool {
	if node == nil {
		return false
	}
	_, fake := node.Annotations[cloudprovider.FakeNodeReasonAnnotation]
	return !fake
}

// checkDeleteMin refuses a deletion of registered nodes that takes the
// target below min. Unregistered ones may always go: CA must be able to
// clean them up.
func checkDeleteMin(group string, target, min int, nodes []*corev1.Node) error {
	registered := 0
	for _, n := range nodes {
		if isRegistered(n) {
			registered++
		}
	}
	if registered > 0 && target-len(nodes) < min {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "node group %s: deleting %d nodes (%d registered) would take target %d below min %d", group, len(nodes), registered, target, min)
	}
	return nil
}
