package vultr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// nodeGroup is one VKE node pool. Its state lives in the manager's snapshot.
//
// Two locks: guard serialises every read-compute-mutate sequence under the
// shared mutation discipline, so concurrent IncreaseSize calls each PATCH an
// absolute quantity computed from the previous one and can never jointly
// pass max; waiting for it respects the caller's deadline. Refresh never
// takes it: the manager's ledger keeps a running mutation's effect instead.
// mu guards the fields below and is held only for memory access, never
// across a cloud call, so reads such as TargetSize and Refresh's update
// never wait for a slow PATCH.
type nodeGroup struct {
	m     *manager
	id    string
	guard *groupstate.MutationGuard

	mu       sync.Mutex
	pool     vultrapi.NodePool         // last listed state (label, plan, labels, taints)
	settings groupconfig.GroupSettings // read from pool.Labels at each list
	min, max int
	target   int
	nodes    []vultrapi.Node
	// deleting holds nodes whose DELETE Vultr accepted; they are reported as
	// deleting and excluded from counts under the shared rule
	// (groupstate.DeletingSet). The ledger owns it.
	deleting *groupstate.DeletingSet
	removed  bool
}

var _ cloudprovider.NodeGroup = (*nodeGroup)(nil)

func newNodeGroup(m *manager, id string) *nodeGroup {
	return &nodeGroup{m: m, id: id, guard: m.ledger.Guard(id), deleting: m.ledger.Deleting(id)}
}

// update folds a pool from the listing that began at listing into the group
// by the ledger's rules: when a mutation of ours was accepted after the
// listing began, or is running now, the listed quantity may predate it, so
// the target we serve stands until a later listing. It never waits for a
// running mutation. VKE reports no slots it failed to fill (see
// instanceStatus), so the listing states none.
func (g *nodeGroup) update(listing groupstate.Listing, p vultrapi.NodePool, minSize, maxSize int) {
	listed := nodeSet(p.Nodes)
	// Decided under g.mu, which a mutation's call holds while it applies
	// Vultr's answer, and the ledger counts that call in flight until it
	// ends: either the answer is applied already and overtakes the
	// listing, or it is applied after this update.
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pool, g.min, g.max, g.removed = p, minSize, maxSize, false
	g.settings = groupconfig.ParseGroupSettings(settingsSource, p.Labels)
	g.nodes = p.Nodes
	r := g.m.ledger.Reconcile(listing, g.id, groupstate.GroupListing{Holds: listed, Unfilled: -1})
	if !r.KeepSize {
		g.target = p.NodeQuantity
	}
}

// setNodes replaces the node list with the one a mutation's answer or fresh
// read holds, read at start, and applies it to the deleting set; callers
// hold g.mu.
func (g *nodeGroup) setNodes(nodes []vultrapi.Node, start time.Time) {
	g.nodes = nodes
	g.deleting.Reconcile(start, nodeSet(nodes))
}

// nodeSet reports whether nodes hold an id.
func nodeSet(nodes []vultrapi.Node) func(id string) bool {
	listed := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		listed[n.ID] = true
	}
	return func(id string) bool { return listed[id] }
}

func (g *nodeGroup) markRemoved() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removed = true
}

// liveCount counts nodes that exist and are not going away; callers hold g.mu.
func (g *nodeGroup) liveCount(nodes []vultrapi.Node) int {
	n := 0
	for _, node := range nodes {
		if !g.deleting.Holds(node.ID) && !strings.EqualFold(node.Status, "closed") {
			n++
		}
	}
	return n
}

func (g *nodeGroup) checkExists() error {
	if g.removed {
		return cloudprovider.Errorf(cloudprovider.ErrNodeGroupNotFound, "node pool %s no longer exists or is no longer autoscaled", g.id)
	}
	return nil
}

// Id implements cloudprovider.NodeGroup.
func (g *nodeGroup) Id(context.Context) string { return g.id }

// MinSize implements cloudprovider.NodeGroup.
func (g *nodeGroup) MinSize(context.Context) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.min
}

// MaxSize implements cloudprovider.NodeGroup.
func (g *nodeGroup) MaxSize(context.Context) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.max
}

// Debug implements cloudprovider.NodeGroup.
func (g *nodeGroup) Debug(context.Context) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := fmt.Sprintf("vultr node pool %s (label %q, plan %s, min:%d max:%d target:%d)",
		g.id, g.pool.Label, g.pool.Plan, g.min, g.max, g.target)
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
	return g.guard.Status(settings)
}

// TargetSize implements cloudprovider.NodeGroup.
func (g *nodeGroup) TargetSize(context.Context) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkExists(); err != nil {
		return 0, err
	}
	return g.target, nil
}

// IncreaseSize implements cloudprovider.NodeGroup: one PATCH of the absolute
// quantity under the shared mutation discipline; the nodes are created by
// VKE in the background.
func (g *nodeGroup) IncreaseSize(ctx context.Context, delta int) error {
	return g.guard.Do(ctx, groupstate.Mutation{
		Plan: func() (groupstate.Plan, error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			if err := g.checkExists(); err != nil {
				return groupstate.Plan{}, err
			}
			if err := groupstate.CheckIncrease(g.id, delta, g.target, g.max); err != nil {
				return groupstate.Plan{}, err
			}
			from := g.target
			return groupstate.Plan{Call: func(ctx context.Context) error { return g.setQuantity(ctx, "increase", from, from+delta) }}, nil
		},
		Read: g.readPool,
	})
}

// DecreaseTargetSize implements cloudprovider.NodeGroup. VKE removes random
// nodes when a pool shrinks, so the target may only drop to the number of
// nodes that exist; the shared discipline re-reads the pool right before the
// PATCH because nodes may have appeared since the last Refresh.
func (g *nodeGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	return g.guard.Do(ctx, groupstate.Mutation{
		Plan: func() (groupstate.Plan, error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			if err := g.checkExists(); err != nil {
				return groupstate.Plan{}, err
			}
			if err := g.checkDecrease(delta, g.nodes); err != nil {
				return groupstate.Plan{}, err
			}
			from := g.target
			return groupstate.Plan{Shrinks: true, Call: func(ctx context.Context) error { return g.setQuantity(ctx, "decrease", from, from+delta) }}, nil
		},
		Read: g.readPool,
	})
}

// checkDecrease applies the decrease rules against nodes; callers hold g.mu.
func (g *nodeGroup) checkDecrease(delta int, nodes []vultrapi.Node) error {
	if err := groupstate.CheckDecrease(g.id, delta, g.target, g.liveCount(nodes)); err != nil {
		return err
	}
	if g.target+delta < g.min {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
			"node group %s: size decrease too large: target %d%+d is below min %d", g.id, g.target, delta, g.min)
	}
	return nil
}

// setQuantity PATCHes node_quantity and applies Vultr's answer to the
// snapshot; callers hold the mutation lock but not g.mu.
func (g *nodeGroup) setQuantity(ctx context.Context, verb string, from, want int) error {
	start := g.m.now()
	np, err := g.m.client.SetNodePoolQuantity(ctx, g.m.clusterID, g.id, want)
	if err != nil {
		return fmt.Errorf("%s node pool %s from %d to %d: %w", verb, g.id, from, want, err)
	}
	if np.NodeQuantity != want {
		// Vultr answered 2xx, so it took the PATCH, but its answer does not
		// state the size we set: the guard reads the pool once (Finish)
		// and adopts Vultr's own number, with no quarantine.
		return cloudprovider.WithOutcome(fmt.Errorf("%s node pool %s from %d to %d: vultr reports node_quantity %d after setting %d: %w",
			verb, g.id, from, want, np.NodeQuantity, want, cloudprovider.ErrMalformedResponse), cloudprovider.MutationApplied)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.target = want
	g.setNodes(np.Nodes, start)
	klog.V(2).InfoS("Resized node pool", "provider", ProviderName, "nodeGroup", g.id, "from", from, "to", want)
	return nil
}

// readPool re-reads the pool and adopts Vultr's node_quantity and nodes;
// callers hold the mutation lock only.
func (g *nodeGroup) readPool(ctx context.Context) error {
	start := g.m.now()
	fresh, err := g.m.client.GetNodePool(ctx, g.m.clusterID, g.id)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.setNodes(fresh.Nodes, start)
	g.target = fresh.NodeQuantity
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
			return fmt.Errorf("node group %s: %w", g.id, err)
		}
		ids = append(ids, id)
	}

	return g.guard.Transact(ctx, g.readPool, func(tx *groupstate.Txn) error {
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

// deleteNode DELETEs one node and applies the answer to the snapshot; done
// are the nodes of the same request deleted before it.
func (g *nodeGroup) deleteNode(ctx context.Context, id string, done []string) error {
	if err := g.m.client.DeleteNode(ctx, g.m.clusterID, g.id, id); err != nil {
		if errors.Is(err, cloudprovider.ErrNotFound) {
			// Gone already (often our own retry after a lost answer):
			// report it as deleting until a list drops it. The target is
			// unknown now; the guard makes the next mutation re-read the
			// pool first (a NotFound answer), so a later delete is not
			// checked against a target one too high.
			g.deleting.Add(id)
		}
		return fmt.Errorf("delete node %s of node pool %s (deleted before the failure: %s): %w", id, g.id, idList(done), err)
	}
	g.mu.Lock()
	g.target--
	g.deleting.Add(id)
	target := g.target
	g.mu.Unlock()
	klog.V(2).InfoS("Deleted node", "provider", ProviderName, "nodeGroup", g.id, "node", id, "target", target)
	return nil
}

// planDeletion checks ownership and the min rule for the whole request and
// returns the instance ids still to delete; callers hold the mutation lock.
func (g *nodeGroup) planDeletion(ids []string, nodes []*corev1.Node) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkExists(); err != nil {
		return nil, err
	}
	owned := make(map[string]bool, len(g.nodes))
	for _, n := range g.nodes {
		owned[n.ID] = true
	}
	seen := map[string]bool{}
	var todo []string
	var todoNodes []*corev1.Node
	for i, id := range ids {
		name := cloudprovider.NodeName(nodes[i].Name, nodes[i].Spec.ProviderID)
		if !owned[id] {
			return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument,
				"cannot delete node %s (instance %s): it does not belong to node pool %s", name, id, g.id)
		}
		if seen[id] {
			return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s listed twice", name)
		}
		seen[id] = true
		if g.deleting.Holds(id) {
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
	if err := groupstate.CheckDeleteMin(g.id, g.target, g.min, todoNodes); err != nil {
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
		"nodeGroup", g.id, "node", n.Name, "label", n.Labels[LabelNodeID], "providerID", n.Spec.ProviderID)
	if g.m.identityMismatch != nil {
		g.m.identityMismatch(g.id)
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
		return "", fmt.Errorf("node %s: label %s=%s, providerID %s: %w: %w", name, LabelNodeID, label,
			n.Spec.ProviderID, errIdentityMismatch, cloudprovider.ErrInvalidArgument)
	case label != "":
		return label, nil
	case fromPID != "":
		return fromPID, nil
	}
	return "", cloudprovider.Errorf(cloudprovider.ErrInvalidArgument,
		"node %s has neither label %s nor a providerID", name, LabelNodeID)
}

// Nodes implements cloudprovider.NodeGroup.
func (g *nodeGroup) Nodes(context.Context) ([]cloudprovider.Instance, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkExists(); err != nil {
		return nil, err
	}
	out := make([]cloudprovider.Instance, 0, len(g.nodes))
	for _, n := range g.nodes {
		st := instanceStatus(n.Status)
		if g.deleting.Holds(n.ID) {
			st = &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
		}
		out = append(out, cloudprovider.Instance{Id: cloudprovider.BuildProviderID(ProviderIDPrefix, n.ID), Status: st})
	}
	return out, nil
}

// TemplateNodeInfo implements cloudprovider.NodeGroup.
func (g *nodeGroup) TemplateNodeInfo(context.Context) (*corev1.Node, error) {
	g.mu.Lock()
	pool, settings := g.pool, g.settings
	g.mu.Unlock()
	plan, ok := g.m.plan(pool.Plan)
	if !ok {
		return nil, cloudprovider.Errorf(cloudprovider.ErrNotImplemented, "node pool %s: plan %q not known yet", g.id, pool.Plan)
	}
	return buildTemplate(g.id, pool, plan, g.m.clusterRegion(), settings), nil
}

// GetOptions implements cloudprovider.NodeGroup: the overrides in the pool's
// labels, or ErrNotImplemented without any (an answer would zero CA's
// options the protocol cannot carry).
func (g *nodeGroup) GetOptions(_ context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.settings.GetOptions(defaults)
}
