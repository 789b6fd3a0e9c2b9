package volcengine

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
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

// nodeGroup is a scaling group as CA sees it. Its served state is the
// embedded groupstate.Group; beside it the group keeps the description the
// last refresh read, its settings, and each instance's Auto Scaling status
// and failure message. The snapshot keeps one nodeGroup per group while it
// holds the group, so objects handed out before a Refresh keep working.
type nodeGroup struct {
	*groupstate.Group
	m  *manager
	id string

	// mu guards what Volcengine adds. A writer takes it before the
	// Group's lock, so what a reader takes under it belongs to the
	// instances the Group serves.
	mu    sync.RWMutex
	cloud volcapi.ScalingGroup
	// settings are read from the group's tags at each Refresh.
	settings groupconfig.GroupSettings
	// statuses is each listed instance's Auto Scaling status, by instance
	// id: DeleteNodes takes each instance's path from it, which the served
	// states do not tell apart (InService and Protected both run).
	statuses map[string]string
	// failures is the failed activity's message per Error instance, read
	// at Refresh; a mutation's fresh read of the group keeps them, since it
	// reads no activities.
	failures map[string]string
}

var _ cloudprovider.NodeGroup = (*nodeGroup)(nil)

// newNodeGroup returns the node group of scaling group id, serving the
// ledger's state of it. Its failed slots are inside the desired number:
// the service keeps the number and fails to fill them.
func newNodeGroup(m *manager, id string) *nodeGroup {
	return &nodeGroup{Group: m.ledger.Group(id, slotIDs(id), false), m: m, id: id}
}

// slotIDs builds the providerIDs of group's failed slots (slotID).
func slotIDs(group string) func(n int) string {
	return func(n int) string { return cloudprovider.BuildProviderID(ProviderIDPrefix, slotID(group, n)) }
}

// state is the group's served view read together with what Volcengine
// adds to it.
type state struct {
	groupstate.View
	cloud    volcapi.ScalingGroup
	statuses map[string]string
}

// state reads the group's served state for a mutation's plan.
func (n *nodeGroup) state() state {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return state{View: n.Read(), cloud: n.cloud, statuses: n.statuses}
}

func (s state) hasDesired() bool { return s.cloud.Desired != volcapi.NoDesiredNumber }

// active reports whether the group scales: only an Active group does (an
// empty state, from an API that omits it, counts as active).
func (s state) active() bool {
	return s.cloud.LifecycleState == "" || strings.EqualFold(s.cloud.LifecycleState, "Active")
}

// errDisabled refuses a change to a group the service will not scale.
func errDisabled(s state, verb string) error {
	return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
		"scaling group %s is disabled (LifecycleState %s): Volcengine scales only Active groups; enable it to %s", s.cloud.ID, s.cloud.LifecycleState, verb)
}

// Debug implements cloudprovider.NodeGroup.
func (n *nodeGroup) Debug(context.Context) string {
	if n.CheckManaged() != nil {
		v := n.Read()
		return fmt.Sprintf("%s min %d max %d (no longer in the snapshot)", n.id, v.Min, v.Max)
	}
	return n.debug()
}

func (n *nodeGroup) debug() string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	v := n.Read()
	s := state{View: v, cloud: n.cloud}
	desired := fmt.Sprintf("desired %d", v.Target)
	if !s.hasDesired() {
		desired = "no desired number"
	}
	instances := fmt.Sprintf("%d instances", len(v.Instances))
	if len(v.Instances) == 1 {
		instances = "1 instance"
	}
	d := fmt.Sprintf("%s (%s) min %d max %d, %s, %s", n.id, n.cloud.Name, v.Min, v.Max, desired, instances)
	if !s.active() {
		d += fmt.Sprintf(", disabled (LifecycleState %s)", n.cloud.LifecycleState)
	}
	if sum := n.settings.Summary(); sum != "" {
		d += "; settings " + sum
	}
	return d
}

// install applies a Refresh's read of the group (groupstate.Group.Install)
// and what Volcengine adds beside it.
func (n *nodeGroup) install(listing groupstate.Listing, r groupRead) {
	v := view(r)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.Install(listing, v, groupstate.Settling{})
	n.cloud = r.cloud
	n.settings = groupconfig.ParseGroupSettings(settingsSource, r.cloud.Tags)
	n.statuses, n.failures = statusesOf(r.instances), r.failures
}

// reload re-reads the group (bounds, desired number and instances) for the
// guard (groupstate.Group.Fresh). It reads no scaling activities, so the
// failed slots and Error messages stay as the last Refresh read them.
func (n *nodeGroup) reload(ctx context.Context) error {
	gs, err := n.m.api.ListScalingGroups(ctx, []string{n.id})
	if err != nil {
		return fmt.Errorf("re-read scaling group %s: %w", n.id, err)
	}
	var cg *volcapi.ScalingGroup
	for i := range gs {
		if gs[i].ID == n.id {
			cg = &gs[i]
		}
	}
	if cg == nil {
		return cloudprovider.Errorf(cloudprovider.ErrNodeGroupNotFound, "scaling group %s no longer exists", n.id)
	}
	listed, err := n.m.api.ListScalingInstances(ctx, n.id)
	if err != nil {
		return fmt.Errorf("re-read instances of scaling group %s: %w", n.id, err)
	}
	r := groupRead{cloud: *cg, instances: listed, unfilled: -1}
	r.min, r.max = managedGroup{cloud: *cg, spec: n.m.staticSpec(n.id)}.bounds()
	n.mu.Lock()
	r.failures = n.failures
	n.Fresh(func(groupstate.View) groupstate.View { return view(r) })
	// The description's size fields follow the read; its name, state and
	// tags stay as the last Refresh read them.
	n.cloud.Min, n.cloud.Max, n.cloud.HasMin, n.cloud.HasMax, n.cloud.Desired = cg.Min, cg.Max, cg.HasMin, cg.HasMax, cg.Desired
	n.statuses = statusesOf(listed)
	n.mu.Unlock()
	n.m.index(n.id, listed)
	return nil
}

// IncreaseSize raises the group's desired number with one ModifyScalingGroup
// call and returns; the service launches the instances. Polling for them,
// as upstream does for up to 30 minutes, cannot fit CA's deadline.
func (n *nodeGroup) IncreaseSize(ctx context.Context, delta int) error {
	return n.setDesired(ctx, "increase", delta, delta <= 0, func(s state) error {
		return groupstate.CheckIncrease(n.id, delta, s.Target, s.Max)
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
	return n.setDesired(ctx, "decrease", delta, delta >= 0, func(s state) error {
		return groupstate.CheckDecrease(n.id, delta, s.Target, n.Live())
	})
}

// setDesired moves the desired number by delta (groupstate.Group.Do). The
// number is absolute, so a decrease is planned from a fresh read.
func (n *nodeGroup) setDesired(ctx context.Context, verb string, delta int, malformed bool, check func(state) error) error {
	if malformed {
		return check(n.state())
	}
	return n.Do(ctx, n.reload, func() (groupstate.Plan, error) {
		s := n.state()
		if err := check(s); err != nil {
			return groupstate.Plan{}, err
		}
		if !s.active() {
			return groupstate.Plan{}, errDisabled(s, verb+" it")
		}
		if !s.hasDesired() {
			return groupstate.Plan{}, errNoDesired(n.id)
		}
		from, want := s.Target, s.Target+delta
		return groupstate.Plan{Shrinks: want < from, Send: func(ctx context.Context) (groupstate.Effect, error) {
			return n.sendDesired(ctx, verb, from, want)
		}}, nil
	})
}

// sendDesired sets the desired number from to want; its effect is the new
// target.
func (n *nodeGroup) sendDesired(ctx context.Context, verb string, from, want int) (groupstate.Effect, error) {
	err := n.m.api.SetDesiredInstances(ctx, n.id, want)
	if err != nil {
		err = fmt.Errorf("%s scaling group %s from %d to %d: %w", verb, n.id, from, want, err)
	}
	if taken(err) {
		klog.V(2).InfoS("Changed scaling group desired number", "provider", ProviderName, "nodeGroup", n.id, "change", verb, "from", from, "to", want, "err", err)
	}
	return groupstate.Resize(want), err
}

// taken reports whether the service took a change that ended with err
// (applied, perhaps with an unusable answer).
func taken(err error) bool { return cloudprovider.OutcomeOf(err) == cloudprovider.MutationApplied }

// deletion is a DeleteNodes request sorted by the path each instance
// takes. RemoveInstances takes only instances in service (BytePlus Auto
// Scaling API reference, RemoveInstances). An Error instance is removed by
// the service's health check, which replaces it unless the desired number
// drops: so lowering the desired number is its deletion. A failed slot (one
// the service failed to fill, groupstate.FailedSlot) has no instance:
// lowering the desired number gives it up.
type deletion struct {
	// inService and broken are ECS instance ids.
	inService, broken []string
	// slots are the numbers (groupstate.FailedSlot.N) of the failed slots.
	slots []int
}

// DeleteNodes removes exactly these instances: InService ones with
// RemoveInstances (20 per call); Error instances and failed slots by
// lowering the desired number, planned from a fresh read (Txn.Shrink) so
// an instance launched since the snapshot is not removed in their place.
// The request is checked by groupstate.Group.PlanDeletion, then sorted by
// Auto Scaling status (byStatus).
func (n *nodeGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	return n.Transact(ctx, n.reload, func(tx *groupstate.Txn) error {
		d, err := groupstate.Prepare(tx, func() (deletion, error) {
			planned, err := n.PlanDeletion(nodes, n.providerID, nil)
			if err != nil {
				return deletion{}, err
			}
			return n.byStatus(planned)
		})
		if err != nil {
			return err
		}
		for start := 0; start < len(d.inService); start += volcapi.MaxRemoveBatch {
			batch := d.inService[start:min(start+volcapi.MaxRemoveBatch, len(d.inService))]
			if err := tx.Step(func() (groupstate.Plan, error) {
				s := n.state()
				return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) {
					return n.removeBatch(ctx, s, batch, start, len(d.inService))
				}}, nil
			}); err != nil {
				return err
			}
		}
		if len(d.broken) > 0 {
			if err := tx.Shrink(func() (groupstate.Plan, error) { return n.planDropBroken(d.broken), nil }); err != nil {
				return err
			}
		}
		if len(d.slots) > 0 {
			return tx.Shrink(func() (groupstate.Plan, error) { return n.planDropSlots(d.slots), nil })
		}
		return nil
	})
}

// providerID is the providerID a node names, in this provider's form.
func (n *nodeGroup) providerID(node *corev1.Node) (string, error) {
	id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, node.Spec.ProviderID)
	if err != nil {
		return "", fmt.Errorf("node group %s: node %s: %w", n.id, cloudprovider.NodeName(node.Name, node.Spec.ProviderID), err)
	}
	return cloudprovider.BuildProviderID(ProviderIDPrefix, id), nil
}

// byStatus sorts a checked request by the path each instance's Auto
// Scaling status allows. Instances still starting, stopped, protected or in
// standby cannot be removed now: that is refused without a call, and CA
// retries on a later loop. A disabled group removes nothing.
func (n *nodeGroup) byStatus(planned groupstate.Deletion) (deletion, error) {
	s := n.state()
	d := deletion{slots: planned.Slots}
	for _, pid := range planned.Instances {
		id := strings.TrimPrefix(pid, ProviderIDPrefix)
		switch status := s.statuses[id]; status {
		case asStatusError:
			d.broken = append(d.broken, id)
		case asStatusInService:
			d.inService = append(d.inService, id)
		default:
			return deletion{}, cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
				"instance %s is %s; Volcengine removes only InService instances from a scaling group, try again once it is in service", id, status)
		}
	}
	if !planned.Empty() && !s.active() {
		return deletion{}, errDisabled(s, "remove instances")
	}
	return d, nil
}

// asProviderIDs returns the providerIDs of ECS instance ids.
func asProviderIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = cloudprovider.BuildProviderID(ProviderIDPrefix, id)
	}
	return out
}

// removeBatch removes InService instances with RemoveInstances, lowering
// the desired number by as many; done of total were removed before it, and
// s is the state the batch was planned from.
func (n *nodeGroup) removeBatch(ctx context.Context, s state, batch []string, done, total int) (groupstate.Effect, error) {
	decrease := true
	activity, err := n.m.api.RemoveInstances(ctx, n.id, batch, decrease)
	if err != nil && s.Target-len(batch) < s.Min && errors.Is(err, cloudprovider.ErrFailedPrecondition) {
		// Only never-registered instances get here (Group.PlanDeletion's min rule). If
		// the API will not lower the desired number below min, remove them
		// anyway and let the group replace them: CA needs them gone.
		decrease = false
		activity, err = n.m.api.RemoveInstances(ctx, n.id, batch, decrease)
	}
	if err != nil {
		err = fmt.Errorf("remove %d instances from scaling group %s (%d of %d already removed): %w", len(batch), n.id, done, total, err)
	}
	// A group without a desired number counts the instances that stay.
	e := groupstate.Effect{Target: s.Target - len(batch), SetTarget: s.hasDesired() && decrease, Deleting: asProviderIDs(batch)}
	if taken(err) {
		klog.V(2).InfoS("Removed instances from scaling group", "provider", ProviderName, "nodeGroup", n.id, "instances", batch, "decreaseDesired", decrease, "activity", activity, "err", err)
	}
	return e, err
}

// planDropBroken plans the deletion of Error instances: the desired number
// drops by as many as the group still lists, so the health check removes
// them without replacing them, but never below min (the service then
// replaces them, as min asks) nor below the healthy instances, which the
// service would remove instead. Its effect shows them Deleting, so a
// repeated deletion does not lower the number again.
func (n *nodeGroup) planDropBroken(broken []string) groupstate.Plan {
	s := n.state()
	pids := asProviderIDs(broken)
	asked := make(map[string]bool, len(pids))
	for _, pid := range pids {
		asked[pid] = true
	}
	// The asked instances the group still lists, and that stay.
	listed := 0
	for _, in := range s.Instances {
		if asked[in.Id] && n.Stays(in) {
			listed++
		}
	}
	from, want := s.Target, s.Target
	if s.hasDesired() {
		want = min(max(from-listed, s.Min, n.Live()-listed), from)
	}
	return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) {
		var err error
		if want < from {
			if err = n.m.api.SetDesiredInstances(ctx, n.id, want); err != nil {
				err = fmt.Errorf("delete %d failed instances of scaling group %s (desired %d to %d): %w", len(broken), n.id, from, want, err)
			}
		}
		if taken(err) {
			klog.V(2).InfoS("Left failed instances to the scaling group's health check", "provider", ProviderName, "nodeGroup", n.id, "instances", broken, "desiredFrom", from, "desiredTo", want, "err", err)
		}
		return groupstate.Effect{Target: want, SetTarget: want < from, Deleting: pids}, err
	}}
}

// planDropSlots plans giving up failed slots by lowering the desired
// number, never below min (the API refuses) nor below the live instances
// (a slot filled since the snapshot is not given up).
func (n *nodeGroup) planDropSlots(slots []int) groupstate.Plan {
	s := n.state()
	// A Refresh since the request was checked may have ended slots the
	// service filled: only those still failed are given up.
	held := make([]int, 0, len(slots))
	for _, slot := range slots {
		if n.SlotFailed(slot) {
			held = append(held, slot)
		}
	}
	from := s.Target
	want := min(max(from-len(held), s.Min, n.Live()), from)
	drop := held[:min(from-want, len(held))]
	return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) {
		var err error
		if want < from {
			if err = n.m.api.SetDesiredInstances(ctx, n.id, want); err != nil {
				err = fmt.Errorf("drop %d unfilled slots of scaling group %s (desired %d to %d): %w", len(held), n.id, from, want, err)
			}
		}
		if taken(err) {
			klog.V(2).InfoS("Dropped unfilled slots of scaling group", "provider", ProviderName, "nodeGroup", n.id, "slots", len(drop), "from", from, "to", want, "err", err)
		}
		return groupstate.Effect{Target: want, SetTarget: want < from, DropSlots: drop}, err
	}}
}

// TemplateNodeInfo builds the template from inputs cached at Refresh.
func (n *nodeGroup) TemplateNodeInfo(context.Context) (*corev1.Node, error) {
	if err := n.CheckManaged(); err != nil {
		return nil, err
	}
	info, err := n.m.template(n.id)
	if err != nil {
		return nil, err
	}
	n.mu.RLock()
	settings := n.settings
	n.mu.RUnlock()
	return buildTemplateNode(n.id, n.m.region, info, settings), nil
}

// GetOptions returns the overrides in the group's tags on top of defaults,
// or ErrNotImplemented without any: returning options would zero the
// settings the protocol cannot carry.
func (n *nodeGroup) GetOptions(_ context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	if err := n.CheckManaged(); err != nil {
		return nil, err
	}
	n.mu.RLock()
	settings := n.settings
	n.mu.RUnlock()
	return settings.GetOptions(defaults)
}

// Status implements cloudprovider.NodeGroup.
func (n *nodeGroup) Status(context.Context) cloudprovider.GroupStatus {
	settings := groupconfig.GroupSettings{Source: settingsSource}
	if n.CheckManaged() == nil {
		n.mu.RLock()
		settings = n.settings
		n.mu.RUnlock()
	}
	return n.StatusWith(settings)
}
