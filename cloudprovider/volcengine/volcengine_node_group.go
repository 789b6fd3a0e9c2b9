package volcengine

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

// nodeGroup is a scaling group as CA sees it. It holds only the id and reads
// everything else from the manager's snapshot, so objects handed out before a
// Refresh keep working after it.
type nodeGroup struct {
	m  *manager
	id string
	// min and max are frozen at creation for when the group has left the
	// snapshot; CA freezes them too. Debug is built only when asked: the server
	// resolves groups through NodeGroups on every per-group RPC, so creation
	// must stay cheap.
	min, max int
}

var _ cloudprovider.NodeGroup = (*nodeGroup)(nil)

func newNodeGroup(m *manager, g *groupState) *nodeGroup {
	return &nodeGroup{m: m, id: g.cloud.ID, min: g.min, max: g.max}
}

func (n *nodeGroup) state() (*groupState, error) {
	g, ok := n.m.group(n.id)
	if !ok {
		return nil, cloudprovider.Errorf(cloudprovider.ErrNodeGroupNotFound, "scaling group %s is not managed (any more)", n.id)
	}
	return g, nil
}

// Id implements cloudprovider.NodeGroup.
func (n *nodeGroup) Id(context.Context) string { return n.id }

// MinSize implements cloudprovider.NodeGroup.
func (n *nodeGroup) MinSize(context.Context) int {
	if g, ok := n.m.group(n.id); ok {
		return g.min
	}
	return n.min
}

// MaxSize implements cloudprovider.NodeGroup.
func (n *nodeGroup) MaxSize(context.Context) int {
	if g, ok := n.m.group(n.id); ok {
		return g.max
	}
	return n.max
}

// Debug implements cloudprovider.NodeGroup.
func (n *nodeGroup) Debug(context.Context) string {
	if g, ok := n.m.group(n.id); ok {
		return g.debug()
	}
	return fmt.Sprintf("%s min %d max %d (no longer in the snapshot)", n.id, n.min, n.max)
}

// TargetSize implements cloudprovider.NodeGroup.
func (n *nodeGroup) TargetSize(context.Context) (int, error) {
	g, err := n.state()
	if err != nil {
		return 0, err
	}
	return g.target, nil
}

// IncreaseSize raises the group's desired number with one ModifyScalingGroup
// call and returns; the service launches the instances on its own. (Upstream
// instead schedules a policy and polls for up to 30 minutes, which cannot fit
// CA's 5 s deadline.)
func (n *nodeGroup) IncreaseSize(ctx context.Context, delta int) error {
	return n.setDesired(ctx, "increase", delta, delta <= 0, func(g *groupState) error {
		return groupstate.CheckIncrease(n.id, delta, g.target, g.max)
	})
}

func errNoDesired(id string) error {
	return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
		"scaling group %s was created without a desired instance number (DesireInstanceNumber -1), which Volcengine cannot add later; recreate the group with a desired number to autoscale it", id)
}

// DecreaseTargetSize lowers the desired number for instances not created yet.
// Live instances (pending ones included) already exist, so the target never
// drops below their count: lowering further would make the service remove
// instances of its own choosing.
func (n *nodeGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	return n.setDesired(ctx, "decrease", delta, delta >= 0, func(g *groupState) error {
		return groupstate.CheckDecrease(n.id, delta, g.target, g.liveCount())
	})
}

// setDesired moves the desired number by delta under the group's mutation
// discipline (groupstate.MutationGuard). A malformed request is refused
// from the snapshot without any cloud call. ModifyScalingGroup sets an
// absolute number, so a decrease is planned from a fresh read of the group.
func (n *nodeGroup) setDesired(ctx context.Context, verb string, delta int, malformed bool, check func(*groupState) error) error {
	g, err := n.state()
	if err != nil {
		return err
	}
	if malformed {
		return check(g)
	}
	return n.m.guard(n.id).Do(ctx, groupstate.Mutation{
		Plan: func() (groupstate.Plan, error) {
			g, err := n.state()
			if err != nil {
				return groupstate.Plan{}, err
			}
			if err := check(g); err != nil {
				return groupstate.Plan{}, err
			}
			if !g.active() {
				return groupstate.Plan{}, errDisabled(g, verb+" it")
			}
			if !g.hasDesired() {
				return groupstate.Plan{}, errNoDesired(n.id)
			}
			from, want := g.target, g.target+delta
			return groupstate.Plan{Shrinks: want < from, Call: func(ctx context.Context) error { return n.sendDesired(ctx, verb, from, want) }}, nil
		},
		Read: n.reload,
	})
}

// reload re-reads the group into the snapshot; the guard calls it.
func (n *nodeGroup) reload(ctx context.Context) error { return n.m.reload(ctx, n.id) }

// sendDesired sets the desired number from to want and applies the answer
// to the snapshot.
func (n *nodeGroup) sendDesired(ctx context.Context, verb string, from, want int) error {
	if err := n.m.api.SetDesiredInstances(ctx, n.id, want); err != nil {
		if cloudprovider.SizeUnstated(err) {
			// Applied; the guard reads the group for the number.
			n.m.noteDesiredChange(n.id)
		}
		return fmt.Errorf("%s scaling group %s from %d to %d: %w", verb, n.id, from, want, err)
	}
	n.m.noteDesiredChange(n.id)
	n.m.update(n.id, func(c *groupState) {
		c.target = want
		c.cloud.Desired = want
	})
	klog.V(2).InfoS("Changed scaling group desired number", "provider", ProviderName, "nodeGroup", n.id, "change", verb, "from", from, "to", want)
	return nil
}

// deletion is a DeleteNodes request sorted by the path each instance
// takes. RemoveInstances takes only instances in service (BytePlus Auto
// Scaling API reference, RemoveInstances). An Error instance is removed by
// the service's health check, which replaces it unless the desired number
// drops: so lowering the desired number is its deletion. A failed slot (one
// the service failed to fill, groupstate.FailedSlots) has no instance:
// lowering the desired number gives it up.
type deletion struct {
	inService, broken []string
	// slots are the numbers (groupstate.FailedSlot.N) of the failed slots.
	slots []int
}

// DeleteNodes removes exactly these instances: InService ones with
// RemoveInstances (20 per call), which lowers the desired number by as
// many; Error instances and failed slots by lowering the desired number,
// an absolute value the transaction plans from a fresh read of the group
// (groupstate.Txn.Shrink), so an instance launched since the snapshot is
// not removed in their place. Every node must belong to this group;
// registered nodes never take the group below min, while instances that
// never registered can always go.
func (n *nodeGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	return n.m.guard(n.id).Transact(ctx, n.reload, func(tx *groupstate.Txn) error {
		d, err := groupstate.Prepare(tx, func() (deletion, error) { return n.planDeletion(nodes) })
		if err != nil {
			return err
		}
		for start := 0; start < len(d.inService); start += volcapi.MaxRemoveBatch {
			batch := d.inService[start:min(start+volcapi.MaxRemoveBatch, len(d.inService))]
			if err := tx.Step(func() (groupstate.Plan, error) {
				return groupstate.Plan{Call: func(ctx context.Context) error { return n.removeBatch(ctx, batch, start, len(d.inService)) }}, nil
			}); err != nil {
				return err
			}
		}
		if len(d.broken) > 0 {
			if err := tx.Shrink(func() (groupstate.Plan, error) { return n.planDropBroken(d.broken) }); err != nil {
				return err
			}
		}
		if len(d.slots) > 0 {
			return tx.Shrink(func() (groupstate.Plan, error) { return n.planDropSlots(d.slots) })
		}
		return nil
	})
}

// planDeletion checks the request against the snapshot: ownership, the path
// each instance's status allows, and the min rule. Instances still
// starting, stopped, protected or in standby cannot be removed now: that is
// refused without a call, and CA retries on a later loop.
func (n *nodeGroup) planDeletion(nodes []*corev1.Node) (deletion, error) {
	var d deletion
	g, err := n.state()
	if err != nil {
		return d, err
	}
	byID := map[string]instanceState{}
	for _, in := range g.instances {
		byID[in.id] = in
	}
	failed := n.m.ledger.Failed(n.id)
	var toDelete []*corev1.Node
	seen := map[string]bool{}
	for _, node := range nodes {
		if node == nil {
			return d, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: nil node", n.id)
		}
		name := cloudprovider.NodeName(node.Name, node.Spec.ProviderID)
		id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, node.Spec.ProviderID)
		if err != nil {
			return d, fmt.Errorf("node group %s: node %s: %w", n.id, name, err)
		}
		in, ok := byID[id]
		group, slot, isSlot := parseSlotID(id)
		isSlot = isSlot && group == n.id && failed.Holds(slot)
		if !ok && !isSlot {
			return d, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s does not belong to scaling group %s", name, n.id)
		}
		if seen[id] {
			return d, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s listed twice", name)
		}
		seen[id] = true
		switch {
		case isSlot:
			d.slots = append(d.slots, slot)
		case !in.live():
			// Already on its way out: CA resends failed and unregistered
			// nodes every loop until they disappear.
			continue
		case in.status == asStatusError:
			d.broken = append(d.broken, id)
		case in.status == asStatusInService:
			d.inService = append(d.inService, id)
		default:
			return d, cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
				"node %s: instance %s is %s; Volcengine removes only InService instances from a scaling group, try again once it is in service", name, id, in.status)
		}
		toDelete = append(toDelete, node)
	}
	if len(toDelete) == 0 {
		return d, nil
	}
	if !g.active() {
		return d, errDisabled(g, "remove instances")
	}
	return d, groupstate.CheckDeleteMin(n.id, g.target, g.min, toDelete)
}

// removeBatch removes InService instances with RemoveInstances, lowering
// the desired number by as many; done of total were removed before it.
func (n *nodeGroup) removeBatch(ctx context.Context, batch []string, done, total int) error {
	g, err := n.state()
	if err != nil {
		return err
	}
	decrease := true
	activity, err := n.m.api.RemoveInstances(ctx, n.id, batch, decrease)
	if err != nil && g.target-len(batch) < g.min && errors.Is(err, cloudprovider.ErrFailedPrecondition) {
		// Only never-registered instances get here (CheckDeleteMin). If
		// the API will not lower the desired number below min, remove them
		// anyway and let the group replace them: CA needs them gone.
		decrease = false
		activity, err = n.m.api.RemoveInstances(ctx, n.id, batch, decrease)
	}
	if err != nil && !cloudprovider.SizeUnstated(err) {
		return fmt.Errorf("remove %d instances from scaling group %s (%d of %d already removed): %w", len(batch), n.id, done, total, err)
	}
	// Taken (when the answer was unusable, the guard reads the group for
	// the number right after).
	target := g.target
	if g.hasDesired() && decrease {
		target -= len(batch)
	}
	n.noteRemoved(batch, target)
	klog.V(2).InfoS("Removed instances from scaling group", "provider", ProviderName, "nodeGroup", n.id, "instances", batch, "activity", activity)
	if err != nil {
		return fmt.Errorf("remove %d instances from scaling group %s (%d of %d already removed): %w", len(batch), n.id, done, total, err)
	}
	return nil
}

// planDropBroken plans the deletion of Error instances from the fresh
// state: the desired number drops by as many of them as the group still
// lists, so the health check removes them without replacing them. It never
// drops below min (at min the service replaces them, which is what min asks
// for) nor below the healthy instances, which the service would otherwise
// remove instead.
func (n *nodeGroup) planDropBroken(broken []string) (groupstate.Plan, error) {
	g, err := n.state()
	if err != nil {
		return groupstate.Plan{}, err
	}
	listed := countLive(g, broken)
	from, want := g.target, g.target
	if g.hasDesired() {
		want = min(max(from-listed, g.min, g.liveCount()-listed), from)
	}
	return groupstate.Plan{Call: func(ctx context.Context) error {
		if want < from {
			if err := n.m.api.SetDesiredInstances(ctx, n.id, want); err != nil {
				if cloudprovider.SizeUnstated(err) {
					// Applied: the instances are on their way out, so a
					// repeated deletion must not lower the number again.
					n.m.noteDesiredChange(n.id)
					n.noteRemoved(broken, want)
				}
				return fmt.Errorf("delete %d failed instances of scaling group %s (desired %d to %d): %w", len(broken), n.id, from, want, err)
			}
			n.m.noteDesiredChange(n.id)
		}
		n.noteRemoved(broken, want)
		klog.V(2).InfoS("Left failed instances to the scaling group's health check", "provider", ProviderName, "nodeGroup", n.id, "instances", broken, "desiredFrom", from, "desiredTo", want)
		return nil
	}}, nil
}

// countLive counts the instances of ids the group still lists as live.
func countLive(g *groupState, ids []string) int {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	n := 0
	for _, in := range g.instances {
		if want[in.id] && in.live() {
			n++
		}
	}
	return n
}

// planDropSlots plans giving up failed slots from the fresh state: a slot
// has no instance, so deleting it means lowering the desired number, never
// below min (the API refuses; at min the group keeps trying, as it must)
// nor below the live instances (a slot the service filled since the
// snapshot is not given up, and the service does not remove an instance of
// its own choosing). The slots given up end in the ledger
// (groupstate.FailedSlots.Drop) once the cloud took the lower number.
func (n *nodeGroup) planDropSlots(slots []int) (groupstate.Plan, error) {
	g, err := n.state()
	if err != nil {
		return groupstate.Plan{}, err
	}
	// A Refresh since the request was checked may have ended slots the
	// service filled: only those still failed are given up.
	failed := n.m.ledger.Failed(n.id)
	held := make([]int, 0, len(slots))
	for _, s := range slots {
		if failed.Holds(s) {
			held = append(held, s)
		}
	}
	from := g.target
	want := min(max(from-len(held), g.min, g.liveCount()), from)
	drop := held[:min(from-want, len(held))]
	return groupstate.Plan{Call: func(ctx context.Context) error {
		if want < from {
			if err := n.m.api.SetDesiredInstances(ctx, n.id, want); err != nil {
				return fmt.Errorf("drop %d unfilled slots of scaling group %s (desired %d to %d): %w", len(held), n.id, from, want, err)
			}
		}
		n.m.update(n.id, func(c *groupState) {
			// Under the snapshot's lock, so a Refresh reconciling an
			// older listing either sees this mutation or runs before
			// the slots end (refreshWith).
			failed.Drop(drop...)
			c.target = want
			c.cloud.Desired = want
		})
		klog.V(2).InfoS("Dropped unfilled slots of scaling group", "provider", ProviderName, "nodeGroup", n.id, "slots", len(drop), "from", from, "to", want)
		return nil
	}}, nil
}

// Nodes implements cloudprovider.NodeGroup.
func (n *nodeGroup) Nodes(context.Context) ([]cloudprovider.Instance, error) {
	g, err := n.state()
	if err != nil {
		return nil, err
	}
	return g.instancesView(n.m.ledger.Failed(n.id).List()), nil
}

// TemplateNodeInfo builds the template from inputs cached at Refresh.
func (n *nodeGroup) TemplateNodeInfo(context.Context) (*corev1.Node, error) {
	g, err := n.state()
	if err != nil {
		return nil, err
	}
	info, err := n.m.template(n.id)
	if err != nil {
		return nil, err
	}
	return buildTemplateNode(n.id, n.m.region, info, g.settings), nil
}

// GetOptions returns the overrides in the group's tags on top of defaults,
// or ErrNotImplemented without any: returning options would zero the
// settings the protocol cannot carry.
func (n *nodeGroup) GetOptions(_ context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	g, err := n.state()
	if err != nil {
		return nil, err
	}
	return g.settings.GetOptions(defaults)
}

// Status implements cloudprovider.NodeGroup.
func (n *nodeGroup) Status(context.Context) cloudprovider.GroupStatus {
	settings := groupconfig.GroupSettings{Source: settingsSource}
	if g, ok := n.m.group(n.id); ok {
		settings = g.settings
	}
	return n.m.guard(n.id).Status(settings)
}

// noteRemoved applies accepted removals to the snapshot: the instances show as
// deleting, and the target becomes the new desired number (or, for a group
// without one, what is left).
func (n *nodeGroup) noteRemoved(ids []string, target int) {
	n.m.markRemoved(n.id, ids)
	gone := make(map[string]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	n.m.update(n.id, func(c *groupState) {
		for i := range c.instances {
			if gone[c.instances[i].id] {
				c.instances[i].removing = true
			}
		}
		if c.hasDesired() {
			c.target = target
			c.cloud.Desired = target
		} else {
			c.target = c.liveCount()
		}
	})
}
