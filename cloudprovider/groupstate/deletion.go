package groupstate

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// Deletion is a DeleteNodes request checked against the served state.
type Deletion struct {
	// Instances are the providerIDs to remove, in request order.
	Instances []string
	// Slots are the failed slots to give up.
	Slots []int
}

// Empty reports whether every node named is already leaving.
func (d Deletion) Empty() bool { return len(d.Instances) == 0 && len(d.Slots) == 0 }

// PlanDeletion checks a DeleteNodes request against the served state.
// providerID maps a node to its providerID (an error refuses the request;
// "" skips a node already gone). Each node must be a served instance, a
// failed slot, or one member accepts (member may be nil). A node named
// twice is refused. An instance already leaving is skipped, as CA repeats
// deletions until the node is gone. Registered nodes never take the
// target below min.
func (g *Group) PlanDeletion(nodes []*corev1.Node, providerID func(*corev1.Node) (string, error), member func(pid string) bool) (Deletion, error) {
	var d Deletion
	served := map[string]cloudprovider.Instance{}
	for _, in := range g.Read().Instances {
		served[in.Id] = in
	}
	deleting := g.deleting()
	seen := map[string]bool{}
	var counted []*corev1.Node
	for _, n := range nodes {
		if n == nil {
			return Deletion{}, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: nil node", g.id)
		}
		name := cloudprovider.NodeName(n.Name, n.Spec.ProviderID)
		pid, err := providerID(n)
		if err != nil {
			return Deletion{}, err
		}
		if pid == "" {
			continue
		}
		if seen[pid] {
			return Deletion{}, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: node %s listed twice", g.id, name)
		}
		seen[pid] = true
		if slot, ok := g.slot(pid); ok {
			d.Slots = append(d.Slots, slot)
			counted = append(counted, n)
			continue
		}
		in, ok := served[pid]
		if !ok && (member == nil || !member(pid)) {
			return Deletion{}, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: node %s does not belong to it", g.id, name)
		}
		if deleting.holds(pid) || (ok && !stays(in, deleting)) {
			continue
		}
		d.Instances = append(d.Instances, pid)
		counted = append(counted, n)
	}
	if len(counted) == 0 {
		return d, nil
	}
	return d, checkDeleteMin(g.id, g.Target(), g.Read().Min, counted)
}
