package volcengine

import (
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

// Scaling-instance Status values of the Auto Scaling API.
const (
	asStatusInit        = "Init"
	asStatusPending     = "Pending"
	asStatusPendingWait = "Pending:Wait"
	asStatusInService   = "InService"
	asStatusError       = "Error"
	asStatusRemoving    = "Removing"
	asStatusRemoveWait  = "Removing:Wait"
	asStatusStopped     = "Stopped"
	asStatusProtected   = "Protected"
	asStatusStandby     = "Standby"
)

// errorCodeCreationFailed is the code of a failure whose activity gave none.
const errorCodeCreationFailed = "VolcengineInstanceCreationFailed"

// groupRead is one read of a scaling group: description, served bounds,
// instances with failure messages, and unfilled slots (-1: unknown).
type groupRead struct {
	cloud     volcapi.ScalingGroup
	min, max  int
	instances []volcapi.ScalingInstance
	failures  map[string]string
	unfilled  int
	failure   *cloudprovider.InstanceErrorInfo
	// why is why the group is managed.
	why cloudprovider.Management
}

// view maps a read to CA's terms. The target is the desired number, failed
// slots included, or without one the instances that stay.
func view(r groupRead) groupstate.View {
	v := groupstate.View{Min: r.min, Max: r.max, Target: r.cloud.Desired, Unfilled: r.unfilled, Failure: r.failure,
		TargetFromInstances: r.cloud.Desired == volcapi.NoDesiredNumber, Managed: r.why}
	for _, si := range r.instances {
		v.Instances = append(v.Instances, cloudprovider.Instance{
			Id:     cloudprovider.BuildProviderID(ProviderIDPrefix, si.ID),
			Status: instanceStatus(si.Status, r.failures[si.ID]),
		})
	}
	if v.Unfilled > 0 && v.Failure == nil {
		info := creationError("")
		v.Failure = &info
	}
	return v
}

// statusesOf indexes a listing's Auto Scaling statuses by instance id.
func statusesOf(instances []volcapi.ScalingInstance) map[string]string {
	out := make(map[string]string, len(instances))
	for _, si := range instances {
		out[si.ID] = si.Status
	}
	return out
}

// liveListed counts the instances a listing shows live (isLive).
func liveListed(instances []volcapi.ScalingInstance) int {
	n := 0
	for _, si := range instances {
		if isLive(si.Status) {
			n++
		}
	}
	return n
}

// instanceStatus maps an Auto Scaling Status to CA's. Error is creating with
// error info, so CA backs the group off and deletes it; unknown states are nil.
func instanceStatus(status, failure string) *cloudprovider.InstanceStatus {
	switch status {
	case asStatusInit, asStatusPending, asStatusPendingWait:
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceCreating}
	case asStatusInService, asStatusProtected, asStatusStandby, asStatusStopped:
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}
	case asStatusRemoving, asStatusRemoveWait:
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
	case asStatusError:
		return cloudprovider.FailedCreation(creationError(failure))
	}
	return nil
}

// isLive reports whether an instance counts towards the target (not leaving).
func isLive(status string) bool {
	return status != asStatusRemoving && status != asStatusRemoveWait
}

// creationError builds error info from a failed activity's message, which
// usually reads "<Code>: <text>". Quota and stock-out failures get the
// out-of-resources class so CA tries another group instead of waiting.
func creationError(message string) cloudprovider.InstanceErrorInfo {
	info := cloudprovider.InstanceErrorInfo{
		ErrorClass:   cloudprovider.OtherErrorClass,
		ErrorCode:    errorCodeCreationFailed,
		ErrorMessage: message,
	}
	if message == "" {
		info.ErrorMessage = "the scaling group reported the instance as failed"
	}
	if code, _, ok := strings.Cut(message, ":"); ok && isIdentifier(code) {
		info.ErrorCode = code
	}
	if outOfResources(message) {
		info.ErrorClass = cloudprovider.OutOfResourcesErrorClass
	}
	return info
}

func outOfResources(message string) bool {
	lc := strings.ToLower(message)
	for _, marker := range []string{"quota", "insufficient", "nostock", "no stock", "outofstock", "out of stock", "soldout", "sold out", "stockout", "stock out", "resource not enough", "notenough"} {
		if strings.Contains(lc, marker) {
			return true
		}
	}
	return false
}

func isIdentifier(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}
