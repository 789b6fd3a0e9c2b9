package vultr

import (
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// instanceStatus maps a VKE node status to CA's instance state. Unknown values
// count as creating: CA then waits for the node to register instead of
// treating it as gone.
func instanceStatus(status string) *cloudprovider.InstanceStatus {
	switch strings.ToLower(status) {
	case "active", "upgrading":
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}
	case "closed":
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
	case "suspended":
		// CA reads errorInfo only on creating instances, so this is
		// informational; a suspended node still exists and keeps its slot.
		return &cloudprovider.InstanceStatus{
			State: cloudprovider.InstanceRunning,
			ErrorInfo: &cloudprovider.InstanceErrorInfo{
				ErrorClass:   cloudprovider.OtherErrorClass,
				ErrorCode:    "suspended",
				ErrorMessage: "Vultr node is suspended",
			},
		}
	default: // "pending", "unknown", "" and anything new
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceCreating}
	}
}
