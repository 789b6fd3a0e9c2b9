package exoscale

import (
	"fmt"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// view maps a pool and its members to a View. The pool's size is the target;
// failed slots come from failed operations, not the listing (Unfilled -1).
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

// instanceStatus maps each Exoscale instance state to CA's. Error info
// always comes with a state, as CA drops it otherwise.
func instanceStatus(state string) *cloudprovider.InstanceStatus {
	switch state {
	case "starting", "":
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceCreating}
	case "running", "migrating":
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}
	case "stopping", "stopped":
		// Still counted in the pool's size; Deleting would make Nodes
		// disagree with TargetSize. CA handles the NotReady node itself.
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
		// An unknown state: keep the instance counted rather than guess it failed.
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}
	}
}

// operationErrorInfo describes a failed scale-up for its failed slots;
// capacity and quota failures are out of resources, so CA tries other groups.
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
