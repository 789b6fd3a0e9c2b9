package vultr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// nodeGroup is one VKE node pool: the embedded groupstate.Group, the pool's
// record and its label settings. mu guards the last two, never across a call.
type nodeGroup struct {
	*groupstate.Group
	m *manager

	mu       sync.Mutex
	pool     vultrapi.NodePool         // last listed record (label, plan, labels, taints)
	settings groupconfig.GroupSettings // read from pool.Labels at each list
}

var _ cloudprovider.NodeGroup = (*nodeGroup)(nil)

// newNodeGroup returns pool id's group, without failed slots (instanceStatus).
func newNodeGroup(m *manager, id string) *nodeGroup {
	return &nodeGroup{m: m, Group: m.ledger.Group(id, nil, false)}
}

// update installs pool p from listing with the bounds and reason Refresh chose.
func (g *nodeGroup) update(listing groupstate.Listing, p vultrapi.NodePool, minSize, maxSize int, why cloudprovider.Management) {
	v := view(p, minSize, maxSize)
	v.Managed = why
	g.Install(listing, v, groupstate.Settling{})
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pool = p
	g.settings = groupconfig.ParseGroupSettings(settingsSource, p.Labels)
}

// answered is the view of pool p from an answer or read, with the served bounds.
func answered(p vultrapi.NodePool) func(served groupstate.View) groupstate.View {
	return func(served groupstate.View) groupstate.View { return view(p, served.Min, served.Max) }
}

// Debug implements cloudprovider.NodeGroup.
func (g *nodeGroup) Debug(ctx context.Context) string {
	v := g.Read()
	g.mu.Lock()
	defer g.mu.Unlock()
	d := fmt.Sprintf("vultr node pool %s (label %q, plan %s, min:%d max:%d target:%d)",
		g.Id(ctx), g.pool.Label, g.pool.Plan, v.Min, v.Max, v.Target)
	if s := g.settings.Summary(); s != "" {
		d += "; settings " + s
	}
	return d
}

// Status implements cloudprovider.NodeGroup.
func (g *nodeGroup) Status(context.Context) cloudprovider.GroupStatus {
	g.mu.Lock()
	settings := g.settings
	g.mu.Unlock()
	return g.StatusWith(settings)
}

// IncreaseSize implements cloudprovider.NodeGroup: one PATCH of the absolute
// node_quantity; VKE creates the nodes in the background.
func (g *nodeGroup) IncreaseSize(ctx context.Context, delta int) error {
	return g.Do(ctx, g.readPool, func() (groupstate.Plan, error) {
		v := g.Read()
		if err := groupstate.CheckIncrease(g.Id(ctx), delta, v.Target, v.Max); err != nil {
			return groupstate.Plan{}, err
		}
		return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) {
			return g.setQuantity(ctx, "increase", v.Target, v.Target+delta)
		}}, nil
	})
}

// DecreaseTargetSize implements cloudprovider.NodeGroup and sends nothing:
// VKE picks the nodes a smaller node_quantity removes, among them those it
// creates and does not list yet, so a decrease could remove a running node
// while any is unlisted, and with all listed none is left to cancel.
// groupstate.CheckCancel says which, with nothing named: VKE reports no
// failed node.
func (g *nodeGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	return g.Do(ctx, g.readPool, func() (groupstate.Plan, error) {
		// With nothing named, CheckCancel refuses every decrease.
		return groupstate.Plan{}, groupstate.CheckCancel(g.Id(ctx), delta, g.Target(), g.Live(), 0)
	})
}

// setQuantity PATCHes node_quantity; the pool in Vultr's answer is the effect.
func (g *nodeGroup) setQuantity(ctx context.Context, verb string, from, want int) (groupstate.Effect, error) {
	id := g.Id(ctx)
	np, err := g.m.client.SetNodePoolQuantity(ctx, g.m.clusterID, id, want)
	if err != nil {
		return groupstate.Effect{}, fmt.Errorf("%s node pool %s from %d to %d: %w", verb, id, from, want, err)
	}
	if np.NodeQuantity != want {
		// A 2xx with another node_quantity is applied; the guard reads the pool.
		return groupstate.Effect{}, cloudprovider.WithOutcome(fmt.Errorf("%s node pool %s from %d to %d: vultr reports node_quantity %d after setting %d: %w",
			verb, id, from, want, np.NodeQuantity, want, cloudprovider.ErrMalformedResponse), cloudprovider.MutationApplied)
	}
	klog.V(2).InfoS("Resized node pool", "provider", ProviderName, "nodeGroup", id, "from", from, "to", want)
	return groupstate.Effect{Read: answered(*np)}, nil
}

// readPool re-reads the pool and installs its node_quantity and nodes.
func (g *nodeGroup) readPool(ctx context.Context) error {
	np, err := g.m.client.GetNodePool(ctx, g.m.clusterID, g.Id(ctx))
	if err != nil {
		return err
	}
	g.Fresh(answered(*np))
	return nil
}

// DeleteNodes implements cloudprovider.NodeGroup: the request is checked
// whole, then one DELETE per node in order, stopping at the first failure.
func (g *nodeGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	pids := make(map[*corev1.Node]string, len(nodes))
	for _, n := range nodes {
		id, err := nodeIDOf(n)
		if errors.Is(err, errIdentityMismatch) {
			g.identityMismatch(n)
		}
		if err != nil {
			return fmt.Errorf("node group %s: %w", g.Id(ctx), err)
		}
		pids[n] = cloudprovider.BuildProviderID(ProviderIDPrefix, id)
	}
	resolved := func(n *corev1.Node) (string, error) { return pids[n], nil }

	return g.Transact(ctx, g.readPool, func(tx *groupstate.Txn) error {
		d, err := groupstate.Prepare(tx, func() (groupstate.Deletion, error) { return g.PlanDeletion(nodes, resolved, nil) })
		if err != nil {
			return err
		}
		for i, pid := range d.Instances {
			if err := tx.Step(func() (groupstate.Plan, error) {
				target := g.Target() - 1
				return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) {
					return g.deleteNode(ctx, pid, target, d.Instances[:i])
				}}, nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
}

// deleteNode DELETEs the node pid; target is the pool's target after it, and
// done the nodes this request deleted before it.
func (g *nodeGroup) deleteNode(ctx context.Context, pid string, target int, done []string) (groupstate.Effect, error) {
	pool, id := g.Id(ctx), instanceID(pid)
	if err := g.m.client.DeleteNode(ctx, g.m.clusterID, pool, id); err != nil {
		// A 404 (gone already, maybe by our DELETE whose answer was lost)
		// stays a refusal; the guard re-reads before the next change.
		return groupstate.Effect{}, fmt.Errorf("delete node %s of node pool %s (deleted before the failure: %s): %w", id, pool, idList(done), err)
	}
	klog.V(2).InfoS("Deleted node", "provider", ProviderName, "nodeGroup", pool, "node", id, "target", target)
	return groupstate.Effect{Deleting: []string{pid}, Target: target, SetTarget: true}, nil
}

// instanceID is the Vultr instance id of providerID pid.
func instanceID(pid string) string { return strings.TrimPrefix(pid, ProviderIDPrefix) }

// idList renders the instance ids of providerIDs for an error message.
func idList(pids []string) string {
	if len(pids) == 0 {
		return "none"
	}
	ids := make([]string, len(pids))
	for i, pid := range pids {
		ids[i] = instanceID(pid)
	}
	return strings.Join(ids, ", ")
}

// errIdentityMismatch marks a node whose node-id label and providerID differ:
// a node writes its own labels, so either id may name a machine CA did not pick.
var errIdentityMismatch = errors.New("node-id label and providerID disagree")

// identityMismatch logs and counts a node refused for errIdentityMismatch.
func (g *nodeGroup) identityMismatch(n *corev1.Node) {
	klog.InfoS("Refusing to delete a node whose node-id label and providerID disagree", "provider", ProviderName,
		"nodeGroup", g.Id(context.Background()), "node", n.Name, "label", n.Labels[LabelNodeID], "providerID", n.Spec.ProviderID)
	if g.m.identityMismatch != nil {
		g.m.identityMismatch(g.Id(context.Background()))
	}
}

// nodeIDOf is a node's instance id: the node-id label, else the providerID
// (CA's fake nodes have only that). It refuses another cloud's providerID.
func nodeIDOf(n *corev1.Node) (string, error) {
	if n == nil {
		return "", cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "nil node")
	}
	name := cloudprovider.NodeName(n.Name, n.Spec.ProviderID)
	var fromPID string
	if n.Spec.ProviderID != "" {
		id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, n.Spec.ProviderID)
		if err != nil {
			return "", fmt.Errorf("node %s: %w", name, err)
		}
		fromPID = id
	}
	label := n.Labels[LabelNodeID]
	switch {
	case label != "" && fromPID != "" && label != fromPID:
		return "", cloudprovider.Refusal(fmt.Errorf("node %s: label %s=%s, providerID %s: %w: %w", name, LabelNodeID, label,
			n.Spec.ProviderID, errIdentityMismatch, cloudprovider.ErrInvalidArgument))
	case label != "":
		return label, nil
	case fromPID != "":
		return fromPID, nil
	}
	return "", cloudprovider.Errorf(cloudprovider.ErrInvalidArgument,
		"node %s has neither label %s nor a providerID", name, LabelNodeID)
}

// TemplateNodeInfo implements cloudprovider.NodeGroup.
func (g *nodeGroup) TemplateNodeInfo(ctx context.Context) (*corev1.Node, error) {
	g.mu.Lock()
	pool, settings := g.pool, g.settings
	g.mu.Unlock()
	plan, ok := g.m.plan(pool.Plan)
	if !ok {
		return nil, cloudprovider.Errorf(cloudprovider.ErrNotImplemented, "node pool %s: plan %q not known yet", g.Id(ctx), pool.Plan)
	}
	return buildTemplate(g.Id(ctx), pool, plan, g.m.clusterRegion(), settings), nil
}

// GetOptions implements cloudprovider.NodeGroup: the pool labels' overrides,
// or ErrNotImplemented without any, so CA keeps options the protocol lacks.
func (g *nodeGroup) GetOptions(_ context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.settings.GetOptions(defaults)
}
