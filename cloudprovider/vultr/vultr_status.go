package vultr

import (
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// view maps a listed or read pool to CA's terms, with the bounds Refresh
// chose for it (--nodes or the pool's own): the state mapping is the
// provider's whole part of the group state (groupstate.Group applies the
// ledger's rules). VKE reports no unfilled slots (see instanceStatus), so
// the view says nothing of them.
func view(p vultrapi.NodePool, minSize, maxSize int) groupstate.View {
	v := groupstate.View{Min: minSize, Max: maxSize, Target: p.NodeQuantity, Unfilled: -1}
	for _, n := range p.Nodes {
		v.Instances = append(v.Instances, cloudprovider.Instance{Id: cloudprovider.BuildProviderID(ProviderIDPrefix, n.ID), Status: instanceStatus(n.Status)})
	}
	return v
}

// instanceStatus maps a VKE node status to CA's instance state. Unknown values
// count as creating: CA then waits for the node to register instead of
// treating it as gone.
//
// VKE has no failed slots (groupstate.FailedSlot): a pool's listing holds
// only nodes that exist, each with a status, and the node-pool API reports
// neither a failed scaling activity nor a node it could not create. A
// node_quantity above the listed nodes is a pool still filling them, which
// CA times out by itself (its max node provision time), so no instance
// carries creation error info and view states no unfilled slots.
func instanceStatus(status string) *cloudprovider.InstanceStatus {
	switch strings.ToLower(status) {
	case "active", "upgrading", "suspended":
		// A suspended node still exists and keeps its slot: running, and
		// without error info, which CA reads only on instances being
		// created (cloudprovider.FailedCreation) and would otherwise take
		// for a failed creation to delete.
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}
	case "closed":
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
	default: // "pending", "unknown", "" and anything new
		return &cloudprovider.InstanceStatus{State: cloudprovider.InstanceCreating}
	}
}
