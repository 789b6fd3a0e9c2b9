package volcengine

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
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
		return cloudprovider.CheckIncrease(n.id, delta, g.target, g.max)
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
		return cloudprovider.CheckDecrease(n.id, delta, g.target, g.liveCount())
	})
}

// setDesired moves the desired number by delta under the group's mutation
// discipline (cloudprovider.MutationGuard). A malformed request is refused
// from the snapshot without any cloud call. ModifyScalingGroup sets an
// absolute number, so a decrease re-reads the group first.
func (n *nodeGroup) setDesired(ctx context.Context, verb string, delta int, malformed bool, check func(*groupState) error) error {
	g, err := n.state()
	if err != nil {
		return err
	}
	if malformed {
		return check(g)
	}
	return n.m.guard(n.id).Do(ctx, cloudprovider.Mutation{
		Check: func() error {
			if g, err = n.state(); err != nil {
				return err
			}
			if err := check(g); err != nil {
				return err
			}
			if !g.active() {
				return errDisabled(g, verb+" it")
			}
			if !g.hasDesired() {
				return errNoDesired(n.id)
			}
			return nil
		},
		Shrinks: delta < 0,
		Read:    func(ctx context.Context) error { return n.m.reload(ctx, n.id) },
		Call: func(ctx context.Context) error {
			want := g.target + delta
			if err := n.m.api.SetDesiredInstances(ctx, n.id, want); err != nil {
				if cloudprovider.SizeUnstated(err) {
					// Applied; the guard reads the group for the number.
					n.m.noteDesiredChange(n.id)
				}
				return fmt.Errorf("%s scaling group %s from %d to %d: %w", verb, n.id, g.target, want, err)
			}
			n.m.noteDesiredChange(n.id)
			n.m.update(n.id, func(c *groupState) {
				c.target = want
				c.cloud.Desired = want
			})
			klog.V(2).InfoS("Changed scaling group desired number", "provider", ProviderName, "nodeGroup", n.id, "change", verb, "from", g.target, "to", want)
			return nil
		},
	})
}

// DeleteNodes removes exactly these instances with RemoveInstances (20 per
// call) and lowers the desired number by as many. Every node must belong to
// this group; registered nodes never take the group below min, while
// instances that never registered can always go.
func (n *nodeGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	guard := n.m.guard(n.id)
	unlock, err := guard.BeginMutation(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	g, err := n.state()
	if err != nil {
		return err
	}
	byID := map[string]instanceState{}
	for _, in := range g.instances {
		byID[in.id] = in
	}
	// Each instance takes the path its status allows. RemoveInstances takes
	// only instances in service (BytePlus Auto Scaling API reference,
	// RemoveInstances). An Error instance is removed by the service's health
	// check, which replaces it unless the desired number drops: so lowering
	// the desired number is its deletion. Instances still starting, stopped,
	// protected or in standby cannot be removed now: that is refused without
	// a call, and CA retries on a later loop.
	var ids, placeholders, broken []string
	var toDelete []*corev1.Node
	seen := map[string]bool{}
	for _, node := range nodes {
		if node == nil {
			return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: nil node", n.id)
		}
		name := cloudprovider.NodeName(node.Name, node.Spec.ProviderID)
		id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, node.Spec.ProviderID)
		if err != nil {
			return fmt.Errorf("node group %s: node %s: %w", n.id, name, err)
		}
		in, ok := byID[id]
		if !ok {
			return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s does not belong to scaling group %s", name, n.id)
		}
		if seen[id] {
			return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s listed twice", name)
		}
		seen[id] = true
		switch {
		case in.placeholder:
			placeholders = append(placeholders, id)
		case !in.live():
			// Already on its way out: CA resends failed and unregistered
			// nodes every loop until they disappear.
			continue
		case in.status == asStatusError:
			broken = append(broken, id)
		case in.status == asStatusInService:
			ids = append(ids, id)
		default:
			return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
				"node %s: instance %s is %s; Volcengine removes only InService instances from a scaling group, try again once it is in service", name, id, in.status)
		}
		toDelete = append(toDelete, node)
	}
	if len(toDelete) > 0 && !g.active() && (len(ids) > 0 || len(broken) > 0 || len(placeholders) > 0) {
		return errDisabled(g, "remove instances")
	}
	if len(toDelete) == 0 {
		return nil
	}
	if guard.NeedsRead() {
		// The desired number may have moved under an unconfirmed change.
		if err := guard.ReadFirst(ctx, func(ctx context.Context) error { return n.m.reload(ctx, n.id) }); err != nil {
			return err
		}
		if g, err = n.state(); err != nil {
			return err
		}
	}
	if err := cloudprovider.CheckDeleteMin(n.id, g.target, g.min, toDelete); err != nil {
		return err
	}

	target := g.target
	var removed []string
	var failure error
	for start := 0; start < len(ids); start += volcapi.MaxRemoveBatch {
		batch := ids[start:min(start+volcapi.MaxRemoveBatch, len(ids))]
		decrease := true
		activity, err := n.m.api.RemoveInstances(ctx, n.id, batch, decrease)
		if err != nil && target-len(batch) < g.min && errors.Is(err, cloudprovider.ErrFailedPrecondition) {
			// Only never-registered instances get here (CheckDeleteMin). If
			// the API will not lower the desired number below min, remove them
			// anyway and let the group replace them: CA needs them gone.
			decrease = false
			activity, err = n.m.api.RemoveInstances(ctx, n.id, batch, decrease)
		}
		if err != nil {
			// Finish reads the group once when the cloud took the batch but
			// its answer was unusable: the batch is then removed.
			failure = guard.Finish(ctx, fmt.Errorf("remove %d instances from scaling group %s (%d of %d already removed): %w", len(batch), n.id, len(removed), len(ids), err),
				func(ctx context.Context) error { return n.m.reload(ctx, n.id) })
			if failure != nil {
				break
			}
		}
		removed = append(removed, batch...)
		if g.hasDesired() && decrease {
			target -= len(batch)
		}
		klog.V(2).InfoS("Removed instances from scaling group", "provider", ProviderName, "nodeGroup", n.id, "instances", batch, "activity", activity)
	}
	if len(removed) > 0 {
		n.noteRemoved(removed, target)
	}
	if failure != nil {
		return failure
	}
	if len(broken) > 0 {
		var err error
		if target, err = n.dropBroken(ctx, g, target, broken); err != nil {
			return guard.Finish(ctx, err, func(ctx context.Context) error { return n.m.reload(ctx, n.id) })
		}
	}
	if len(placeholders) == 0 {
		return nil
	}
	return guard.Finish(ctx, n.dropPlaceholders(ctx, g, target, placeholders), func(ctx context.Context) error { return n.m.reload(ctx, n.id) })
}

// dropBroken deletes Error instances: the service's health check removes
// them, and lowering the desired number by as many keeps it from launching
// replacements. At min the desired number stays and the service replaces
// them, which is what min asks for. It returns the new target.
func (n *nodeGroup) dropBroken(ctx context.Context, g *groupState, target int, broken []string) (int, error) {
	want := target
	if g.hasDesired() {
		want = max(target-len(broken), g.min)
		if want < target {
			if err := n.m.api.SetDesiredInstances(ctx, n.id, want); err != nil {
				if cloudprovider.SizeUnstated(err) {
					// Applied: the instances are on their way out, so a
					// repeated deletion must not lower the number again.
					n.m.noteDesiredChange(n.id)
					n.noteRemoved(broken, want)
				}
				return target, fmt.Errorf("delete %d failed instances of scaling group %s (desired %d to %d): %w", len(broken), n.id, target, want, err)
			}
			n.m.noteDesiredChange(n.id)
		}
	}
	n.noteRemoved(broken, want)
	klog.V(2).InfoS("Left failed instances to the scaling group's health check", "provider", ProviderName, "nodeGroup", n.id, "instances", broken, "desiredFrom", target, "desiredTo", want)
	return want, nil
}

// dropPlaceholders gives up unfilled slots: placeholders have no instance, so
// deleting them means lowering the desired number. It cannot go below min
// (the API refuses); at min the group keeps trying, as it must.
func (n *nodeGroup) dropPlaceholders(ctx context.Context, g *groupState, target int, placeholders []string) error {
	want := max(target-len(placeholders), g.min)
	if want < target {
		// The desired number is absolute: read the group fresh first, so a
		// slot the service filled since the snapshot is not given up and
		// the service does not remove an instance of its own choosing. A
		// failed read sends nothing.
		if err := n.m.reload(ctx, n.id); err != nil {
			return cloudprovider.Refusal(err)
		}
		fresh, err := n.state()
		if err != nil {
			return err
		}
		target = fresh.target
		want = min(max(target-len(placeholders), g.min, fresh.liveCount()), target)
	}
	if want < target {
		if err := n.m.api.SetDesiredInstances(ctx, n.id, want); err != nil {
			return fmt.Errorf("drop %d unfilled slots of scaling group %s (desired %d to %d): %w", len(placeholders), n.id, target, want, err)
		}
	}
	drop := map[string]bool{}
	for _, id := range placeholders[:min(max(target-want, 0), len(placeholders))] {
		drop[id] = true
	}
	n.m.update(n.id, func(c *groupState) {
		kept := c.instances[:0]
		for _, in := range c.instances {
			if !drop[in.id] {
				kept = append(kept, in)
			}
		}
		c.instances = kept
		c.target = want
		c.cloud.Desired = want
	})
	klog.V(2).InfoS("Dropped unfilled slots of scaling group", "provider", ProviderName, "nodeGroup", n.id, "slots", len(drop), "from", target, "to", want)
	return nil
}

// Nodes implements cloudprovider.NodeGroup.
func (n *nodeGroup) Nodes(context.Context) ([]cloudprovider.Instance, error) {
	g, err := n.state()
	if err != nil {
		return nil, err
	}
	return g.instancesView(), nil
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

// Settings implements cloudprovider.SettingsReporter.
func (n *nodeGroup) Settings() cloudprovider.GroupSettings {
	if g, ok := n.m.group(n.id); ok {
		return g.settings
	}
	return cloudprovider.GroupSettings{Source: settingsSource}
}

// noteRemoved applies accepted removals to the snapshot: the instances show as
// deleting, and the target becomes the new desired number (or, for a group
// without one, what is left).
func (n *nodeGroup) noteRemoved(ids []string, target int) {
	n.m.markRemoved(ids)
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

// QuarantinedUntil implements cloudprovider.QuarantineReporter.
func (n *nodeGroup) QuarantinedUntil() time.Time { return n.m.guard(n.id).QuarantinedUntil() }
