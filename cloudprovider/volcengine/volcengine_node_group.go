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

// nodeGroup is a scaling group as CA sees it: groupstate.Group plus what
// Volcengine adds. One object serves the group for as long as it is managed.
type nodeGroup struct {
	*groupstate.Group
	m  *manager
	id string

	// mu guards the fields below. Writers take it before the Group's lock,
	// so readers under it see data matching the Group's instances.
	mu    sync.RWMutex
	cloud volcapi.ScalingGroup
	// settings are read from the group's tags.
	settings groupconfig.GroupSettings
	// statuses is each instance's Auto Scaling status, finer than served states.
	statuses map[string]string
	// failures is the failed activity's message per Error instance.
	failures map[string]string
}

var _ cloudprovider.NodeGroup = (*nodeGroup)(nil)

// newNodeGroup returns the node group of scaling group id.
func newNodeGroup(m *manager, id string) *nodeGroup {
	return &nodeGroup{Group: m.ledger.Group(id, slotIDs(id), false), m: m, id: id}
}

// slotIDs builds the providerIDs of group's failed slots (slotID).
func slotIDs(group string) func(n int) string {
	return func(n int) string { return cloudprovider.BuildProviderID(ProviderIDPrefix, slotID(group, n)) }
}

// state is the group's served view with what Volcengine adds.
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

// active reports whether the service scales the group: Active, or no state.
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

// install applies a Refresh's read of the group and what Volcengine adds.
func (n *nodeGroup) install(listing groupstate.Listing, r groupRead) {
	v := view(r)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.Install(listing, v, groupstate.Settling{})
	n.cloud = r.cloud
	n.settings = groupconfig.ParseGroupSettings(settingsSource, r.cloud.Tags)
	n.statuses, n.failures = statusesOf(r.instances), r.failures
}

// reload re-reads bounds, desired number and instances for the guard. It reads
// no activities, so failed slots and Error messages stay as Refresh read them.
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
	// Only the size fields follow this read; name, state and tags stay.
	n.cloud.Min, n.cloud.Max, n.cloud.HasMin, n.cloud.HasMax, n.cloud.Desired = cg.Min, cg.Max, cg.HasMin, cg.HasMax, cg.Desired
	n.statuses = statusesOf(listed)
	n.mu.Unlock()
	n.m.index(n.id, listed)
	return nil
}

// IncreaseSize raises the desired number with one ModifyScalingGroup call and
// returns; the service launches the instances.
func (n *nodeGroup) IncreaseSize(ctx context.Context, delta int) error {
	return n.setDesired(ctx, "increase", delta, delta <= 0, func(s state) error {
		return groupstate.CheckIncrease(n.id, delta, s.Target, s.Max)
	})
}

func errNoDesired(id string) error {
	return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition,
		"scaling group %s was created without a desired instance number (DesireInstanceNumber -1), which Volcengine cannot add later; recreate the group with a desired number to autoscale it", id)
}

// DecreaseTargetSize lowers the desired number for instances not created yet,
// never below the live ones: the service would remove instances of its choice.
func (n *nodeGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	return n.setDesired(ctx, "decrease", delta, delta >= 0, func(s state) error {
		return groupstate.CheckDecrease(n.id, delta, s.Target, n.Live())
	})
}

// setDesired moves the desired number by delta. The number is absolute, so a
// decrease is planned from a fresh read.
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

// sendDesired sets the desired number from to want.
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

// taken reports whether a change that ended with err was applied.
func taken(err error) bool { return cloudprovider.OutcomeOf(err) == cloudprovider.MutationApplied }

// deletion is a DeleteNodes request by path. RemoveInstances takes only
// InService instances (BytePlus API reference); lowering the desired number
// gives up slots and Error instances, which the health check then removes.
type deletion struct {
	// inService and broken are ECS instance ids.
	inService, broken []string
	// slots are failed slot numbers.
	slots []int
}

// DeleteNodes removes exactly these instances: InService ones with
// RemoveInstances (20 per call), Error instances and failed slots by lowering
// the desired number, planned from a fresh read (Txn.Shrink).
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

// byStatus sorts a checked request by Auto Scaling status. Starting, stopped,
// protected or standby instances cannot be removed: refused without a call.
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

// removeBatch removes InService instances, lowering the desired number as much.
func (n *nodeGroup) removeBatch(ctx context.Context, s state, batch []string, done, total int) (groupstate.Effect, error) {
	decrease := true
	activity, err := n.m.api.RemoveInstances(ctx, n.id, batch, decrease)
	if err != nil && s.Target-len(batch) < s.Min && errors.Is(err, cloudprovider.ErrFailedPrecondition) {
		// Only never-registered instances get here. If the API refuses to go
		// below min, remove them without a decrease: CA needs them gone.
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

// planDropBroken lowers the desired number by the Error instances the group
// lists, so the health check does not replace them; never below min nor the
// healthy instances, which the service would remove instead.
func (n *nodeGroup) planDropBroken(broken []string) groupstate.Plan {
	s := n.state()
	pids := asProviderIDs(broken)
	asked := make(map[string]bool, len(pids))
	for _, pid := range pids {
		asked[pid] = true
	}
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

// planDropSlots plans giving up failed slots by lowering the desired number,
// never below min (the API refuses) nor below the live instances.
func (n *nodeGroup) planDropSlots(slots []int) groupstate.Plan {
	s := n.state()
	// A Refresh since the check may have seen some slots filled.
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

// GetOptions returns the tags' overrides on top of defaults, or
// ErrNotImplemented without any: an answer zeroes what CA's protocol omits.
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
