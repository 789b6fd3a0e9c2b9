package volcengine

import (
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
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

// errorCodeCreationFailed is reported for a failed instance whose scaling
// activity gave no code of its own.
const errorCodeCreationFailed = "VolcengineInstanceCreationFailed"

// instanceStatus maps a scaling instance's Status (and, for Error, the failed
// activity's message) to what CA expects. Failed creations are reported as
// creating with error info: CA then backs the group off and deletes the
// instance. Unknown states map to nil so CA simply waits for registration.
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

// isLive reports whether an instance counts towards the target: everything
// but instances on their way out.
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
