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

// nodeGroup is one VKE node pool. Its served state (bounds, target, nodes,
// the ledger's rules) is the shared groupstate.Group it embeds, which gives
// Id, MinSize and MaxSize; beside it the group keeps only what Vultr adds:
// the pool's record and the settings read from its labels.
//
// Every read-compute-mutate sequence runs under the group's guard
// (Group.Guard), so concurrent IncreaseSize calls each PATCH an absolute
// quantity computed from the previous one and can never jointly pass max;
// waiting for it respects the caller's deadline. Refresh never takes it:
// the ledger keeps a running mutation's effect instead. mu guards the
// fields below and is held only for memory access, never across a cloud
// call.
type nodeGroup struct {
	*groupstate.Group
	m *manager

	mu       sync.Mutex
	pool     vultrapi.NodePool         // last listed record (label, plan, labels, taints)
	settings groupconfig.GroupSettings // read from pool.Labels at each list
}

var _ cloudprovider.NodeGroup = (*nodeGroup)(nil)

// newNodeGroup returns pool id's group; VKE has no failed slots (see
// instanceStatus), so its Group builds no slot ids.
func newNodeGroup(m *manager, id string) *nodeGroup {
	return &nodeGroup{m: m, Group: m.ledger.Group(id, nil, false)}
}

// update installs a pool from the listing that began at listing, with the
// bounds and reason Refresh chose, by the ledger's rules (groupstate.Group.Install):
// when a mutation of ours overtook the listing, the target served stands
// until a later listing. It never waits for a running mutation.
func (g *nodeGroup) update(listing groupstate.Listing, p vultrapi.NodePool, minSize, maxSize int, why cloudprovider.Management) {
	v := view(p, minSize, maxSize)
	v.Managed = why
	g.Install(listing, v)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pool = p
	g.settings = groupconfig.ParseGroupSettings(settingsSource, p.Labels)
}

// fresh installs what a mutation's answer or fresh read says of the pool
// (groupstate.Group.Fresh), with the bounds served now: they come from
// Refresh (--nodes or the pool's flags), not from the pool alone.
func (g *nodeGroup) fresh(p vultrapi.NodePool) {
	g.FreshFrom(func(served groupstate.View) groupstate.View { return view(p, served.Min, served.Max) })
}

// live counts the nodes that exist and are not going away (the cloud lists
// them closed, or it accepted our deletion of them).
func live(ins []cloudprovider.Instance) int {
	n := 0
	for _, in := range ins {
		if in.Status == nil || in.Status.State != cloudprovider.InstanceDeleting {
			n++
		}
	}
	return n
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
// quantity under the shared mutation discipline; the nodes are created by
// VKE in the background.
func (g *nodeGroup) IncreaseSize(ctx context.Context, delta int) error {
	return g.Guard().Do(ctx, groupstate.Mutation{
		Plan: func() (groupstate.Plan, error) {
			if err := g.CheckManaged(); err != nil {
				return groupstate.Plan{}, err
			}
			v := g.Read()
			if err := groupstate.CheckIncrease(g.Id(ctx), delta, v.Target, v.Max); err != nil {
				return groupstate.Plan{}, err
			}
			return groupstate.Plan{Call: func(ctx context.Context) error { return g.setQuantity(ctx, "increase", v.Target, v.Target+delta) }}, nil
		},
		Read: g.readPool,
	})
}

// DecreaseTargetSize implements cloudprovider.NodeGroup. VKE removes random
// nodes when a pool shrinks, so the target may only drop to the number of
// nodes that exist; the shared discipline re-reads the pool right before the
// PATCH because nodes may have appeared since the last Refresh.
func (g *nodeGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	return g.Guard().Do(ctx, groupstate.Mutation{
		Plan: func() (groupstate.Plan, error) {
			if err := g.CheckManaged(); err != nil {
				return groupstate.Plan{}, err
			}
			v := g.Read()
			if err := g.checkDecrease(delta, v, g.Instances()); err != nil {
				return groupstate.Plan{}, err
			}
			return groupstate.Plan{Shrinks: true, Call: func(ctx context.Context) error { return g.setQuantity(ctx, "decrease", v.Target, v.Target+delta) }}, nil
		},
		Read: g.readPool,
	})
}

// checkDecrease applies the decrease rules to the served view v and its
// instances with the Deleting overlay.
func (g *nodeGroup) checkDecrease(delta int, v groupstate.View, ins []cloudprovider.Instance) error {
	id := g.Id(context.Background())
	if err := groupstate.CheckDecrease(id, delta, v.Target, live(ins)); err != nil {
		return err
	}
	if v.Target+delta < v.Min {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
			"node group %s: size decrease too large: target %d%+d is below min %d", id, v.Target, delta, v.Min)
	}
	return nil
}

// setQuantity PATCHes node_quantity and installs Vultr's answer, which
// holds the pool as it is now; callers hold the group's guard.
func (g *nodeGroup) setQuantity(ctx context.Context, verb string, from, want int) error {
	id := g.Id(ctx)
	np, err := g.m.client.SetNodePoolQuantity(ctx, g.m.clusterID, id, want)
	if err != nil {
		return fmt.Errorf("%s node pool %s from %d to %d: %w", verb, id, from, want, err)
	}
	if np.NodeQuantity != want {
		// Vultr answered 2xx, so it took the PATCH, but its answer does not
		// state the size we set: the guard reads the pool once (Finish)
		// and adopts Vultr's own number, with no quarantine.
		return cloudprovider.WithOutcome(fmt.Errorf("%s node pool %s from %d to %d: vultr reports node_quantity %d after setting %d: %w",
			verb, id, from, want, np.NodeQuantity, want, cloudprovider.ErrMalformedResponse), cloudprovider.MutationApplied)
	}
	g.fresh(*np)
	klog.V(2).InfoS("Resized node pool", "provider", ProviderName, "nodeGroup", id, "from", from, "to", want)
	return nil
}

// readPool re-reads the pool and installs Vultr's node_quantity and nodes;
// the guard calls it, under the group's guard.
func (g *nodeGroup) readPool(ctx context.Context) error {
	np, err := g.m.client.GetNodePool(ctx, g.m.clusterID, g.Id(ctx))
	if err != nil {
		return err
	}
	g.fresh(*np)
	return nil
}

// DeleteNodes implements cloudprovider.NodeGroup. Every node is resolved and
// checked for ownership before the first DELETE, so a bad request deletes
// nothing. Deletions run one by one and stop at the first failure.
func (g *nodeGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		id, err := nodeIDOf(n)
		if errors.Is(err, errIdentityMismatch) {
			g.identityMismatch(n)
		}
		if err != nil {
			return fmt.Errorf("node group %s: %w", g.Id(ctx), err)
		}
		ids = append(ids, id)
	}

	return g.Guard().Transact(ctx, g.readPool, func(tx *groupstate.Txn) error {
		todo, err := groupstate.Prepare(tx, func() ([]string, error) { return g.planDeletion(ids, nodes) })
		if err != nil {
			return err
		}
		for i, id := range todo {
			if err := tx.Step(func() (groupstate.Plan, error) {
				return groupstate.Plan{Call: func(ctx context.Context) error { return g.deleteNode(ctx, id, todo[:i]) }}, nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
}

// deleteNode DELETEs one node and applies the answer to the served state;
// done are the nodes of the same request deleted before it.
func (g *nodeGroup) deleteNode(ctx context.Context, id string, done []string) error {
	pool, pid := g.Id(ctx), cloudprovider.BuildProviderID(ProviderIDPrefix, id)
	if err := g.m.client.DeleteNode(ctx, g.m.clusterID, pool, id); err != nil {
		if errors.Is(err, cloudprovider.ErrNotFound) {
			// Gone already (often our own retry after a lost answer):
			// report it as deleting until a list drops it. The target is
			// unknown now; the guard makes the next mutation re-read the
			// pool first (a NotFound answer), so a later delete is not
			// checked against a target one too high.
			g.Deleting().Add(pid)
		}
		return fmt.Errorf("delete node %s of node pool %s (deleted before the failure: %s): %w", id, pool, idList(done), err)
	}
	g.Deleting().Add(pid)
	var target int
	g.Update(func(v *groupstate.View) { v.Target--; target = v.Target })
	klog.V(2).InfoS("Deleted node", "provider", ProviderName, "nodeGroup", pool, "node", id, "target", target)
	return nil
}

// planDeletion checks ownership and the min rule for the whole request and
// returns the instance ids still to delete; callers hold the group's guard.
func (g *nodeGroup) planDeletion(ids []string, nodes []*corev1.Node) ([]string, error) {
	if err := g.CheckManaged(); err != nil {
		return nil, err
	}
	pool := g.Id(context.Background())
	v := g.Read()
	owned := make(map[string]bool, len(v.Instances))
	for _, in := range v.Instances {
		owned[in.Id] = true
	}
	deleting := g.Deleting()
	seen := map[string]bool{}
	var todo []string
	var todoNodes []*corev1.Node
	for i, id := range ids {
		name := cloudprovider.NodeName(nodes[i].Name, nodes[i].Spec.ProviderID)
		pid := cloudprovider.BuildProviderID(ProviderIDPrefix, id)
		if !owned[pid] {
			return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument,
				"cannot delete node %s (instance %s): it does not belong to node pool %s", name, id, pool)
		}
		if seen[id] {
			return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s listed twice", name)
		}
		seen[id] = true
		if deleting.Holds(pid) {
			// CA re-sends failed instances every loop until they vanish; the
			// DELETE was accepted already and the target lowered once.
			continue
		}
		todo = append(todo, id)
		todoNodes = append(todoNodes, nodes[i])
	}
	if len(todo) == 0 {
		return nil, nil
	}
	if err := groupstate.CheckDeleteMin(pool, v.Target, v.Min, todoNodes); err != nil {
		return nil, err
	}
	return todo, nil
}

// idList renders instance ids for an error message.
func idList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// errIdentityMismatch marks a node whose node-id label and providerID name
// different instances. The node is refused: a node can write that label
// itself, so deleting by either id could remove a machine CA did not choose.
var errIdentityMismatch = errors.New("node-id label and providerID disagree")

// identityMismatch logs and counts a node refused for errIdentityMismatch;
// nothing else reports it, and it hints at a node relabelled by hand or by
// a compromised kubelet.
func (g *nodeGroup) identityMismatch(n *corev1.Node) {
	klog.InfoS("Refusing to delete a node whose node-id label and providerID disagree", "provider", ProviderName,
		"nodeGroup", g.Id(context.Background()), "node", n.Name, "label", n.Labels[LabelNodeID], "providerID", n.Spec.ProviderID)
	if g.m.identityMismatch != nil {
		g.m.identityMismatch(g.Id(context.Background()))
	}
}

// nodeIDOf finds the Vultr instance id of a node: the VKE label first (real
// nodes), then the providerID (CA's fake nodes for unregistered or failed
// instances carry only that). A providerID of another cloud is refused, and
// so is a label that disagrees with the providerID (errIdentityMismatch).
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

// GetOptions implements cloudprovider.NodeGroup: the overrides in the pool's
// labels, or ErrNotImplemented without any (an answer would zero CA's
// options the protocol cannot carry).
func (g *nodeGroup) GetOptions(_ context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.settings.GetOptions(defaults)
}
