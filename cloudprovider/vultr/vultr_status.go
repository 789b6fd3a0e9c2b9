package vultr

import (
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// view maps a pool, with the bounds Refresh chose, to a groupstate.View.
func view(p vultrapi.NodePool, minSize, maxSize int) groupstate.View {
	v := groupstate.View{Min: minSize, Max: maxSize, Target: p.NodeQuantity, Unfilled: -1}
	for _, n := range p.Nodes {
		v.Instances = append(v.Instances, cloudprovider.Instance{Id: cloudprovider.BuildProviderID(ProviderIDPrefix, n.ID), Status: instanceStatus(n.Status)})
	}
	return v
}

// instanceStatus maps a VKE node status to CA's; an unknown one is creating,
// so CA waits for the node. VKE has no failed slots: a pool lists only nodes
// that exist, and a node_quantity above them is a pool still filling, which
// CA times out itself. So no instance carries error info.
func instanceStatus(status string) *cloudprovider.InstanceStatus {
	switch strings.ToLower(status) {
	case "active", "upgrading", "suspended":
		// A suspended node exists and keeps its slot; error info would
		// make CA delete it as a failed creation.
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}
	case "closed":
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
	default: // "pending", "unknown", "" and anything new
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceCreating}
	}
}
