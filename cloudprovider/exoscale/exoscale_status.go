package exoscale

import (
	"fmt"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// view maps a pool and its members to CA's terms, with the bounds its spec
// gives: the state mapping is the provider's whole part of the group
// state. The pool's size is the target; the listing says nothing of failed
// slots (Unfilled -1), which come from failed operations.
func view(p exoapi.InstancePool, members []exoapi.Instance, min, max int) groupstate.View {
	v := groupstate.View{Min: min, Max: max, Target: p.Size, Unfilled: -1}
	for _, in := range members {
		v.Instances = append(v.Instances, member(in.ID, in.State))
	}
	return v
}

// member is a pool member in CA's terms.
func member(id, state string) cloudprovider.Instance {
	return cloudprovider.Instance{Id: cloudprovider.BuildProviderID(ProviderIDPrefix, id), Status: instanceStatus(state)}
}

// instanceStatus maps an Exoscale instance state to CA's. Every state of the
// API's vocabulary is listed; a state always accompanies error info because
// CA drops error info without one.
func instanceStatus(state string) *cloudprovider.InstanceStatus {
	switch state {
	case "starting", "":
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceCreating}
	case "running", "migrating":
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}
	case "stopping", "stopped":
		// Still a member and still counted in the pool size; reporting
		// Deleting (as upstream does for "stopping") would make Nodes disagree
		// with TargetSize. CA handles the resulting NotReady node itself.
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}
	case "destroying", "expunging", "destroyed":
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
	case "error":
		// Creating + error info makes CA treat it as a failed scale-up: it backs
		// the group off and deletes the instance through DeleteNodes.
		return cloudprovider.FailedCreation(cloudprovider.InstanceErrorInfo{
			ErrorClass:   cloudprovider.OtherErrorClass,
			ErrorCode:    errorCodeInstance,
			ErrorMessage: "Exoscale reports the instance in state error",
		})
	default:
		// A state newer than this code: keep the instance counted and leave it
		// alone rather than guess that it failed.
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}
	}
}

// operationErrorInfo describes a failed scale-up operation for the
// placeholders of the instances it did not create. Capacity and quota
// failures use the out-of-resources class so CA tries other groups.
func operationErrorInfo(op exoapi.Operation, quotaExceeded bool) *cloudprovider.InstanceErrorInfo {
	info := &cloudprovider.InstanceErrorInfo{
		ErrorClass:   cloudprovider.OtherErrorClass,
		ErrorCode:    errorCodeOperationBase + op.State,
		ErrorMessage: fmt.Sprintf("Exoscale operation %s ended in %s", op.ID, op.State),
	}
	if op.Reason != "" {
		info.ErrorCode = errorCodeOperationBase + op.Reason
		info.ErrorMessage += ", reason " + op.Reason
	}
	if op.Message != "" {
		info.ErrorMessage += ": " + op.Message
	}
	switch {
	case quotaExceeded:
		info.ErrorClass = cloudprovider.OutOfResourcesErrorClass
		info.ErrorCode = errorCodeQuota
	case op.Reason == "unavailable" || op.Reason == "partial":
		info.ErrorClass = cloudprovider.OutOfResourcesErrorClass
	}
	return info
}
