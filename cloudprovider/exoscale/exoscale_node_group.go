package exoscale

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// poolRecord is a group's pool or nodepool and its template and settings inputs.
type poolRecord struct {
	name                                string
	sks                                 bool
	clusterID, nodepoolID, nodepoolName string
	typeID                              string
	diskSizeGiB                         int
	labels                              map[string]string
	taints                              []exoapi.Taint
	// settings come from the nodepool's or the plain pool's labels.
	settings groupconfig.GroupSettings
}

// displayName is how logs and Debug name the group's pool or nodepool.
func (s poolRecord) displayName() string {
	if s.sks {
		return "nodepool " + s.nodepoolName
	}
	return "instance pool " + s.name
}

// Operation kinds tracked per group.
const (
	opScale = "scale"
	opEvict = "evict"
)

// submittedOp is a scale or evict Exoscale accepted, pending until settled.
type submittedOp struct {
	// op is the cloud's answer, already final if it finished on submission.
	op       exoapi.Operation
	kind     string
	from, to int
	// quotaHit says a scale-up asked past the instance quota last read.
	quotaHit bool
}

// settled reports whether the answer alone settles the operation.
func (o submittedOp) settled() bool { return o.op.Done() || o.op.ID == "" }

// nodeGroup is one instance pool, plain or an SKS nodepool's. Members asked
// for but not yet listed are not in Nodes: CA counts them from TargetSize.
type nodeGroup struct {
	*groupstate.Group
	m  *manager
	id string

	// mu guards rec and is never held while taking another lock.
	mu  sync.Mutex
	rec poolRecord
}

// String identifies the group; it never prints the manager and its config.
func (g *nodeGroup) String() string { return "exoscale node group " + g.id }

// GoString never prints the manager and its config.
func (g *nodeGroup) GoString() string { return g.String() }

// slotsOutsidePoolSize: a failed scale-up leaves the pool's size as it was.
const slotsOutsidePoolSize = true

func newNodeGroup(m *manager, id string) *nodeGroup {
	return &nodeGroup{Group: m.ledger.Group(id, slotIDs(id), slotsOutsidePoolSize), m: m, id: id}
}

// slotIDs builds the providerIDs of group's failed slots from their numbers.
func slotIDs(group string) func(n int) string {
	return func(n int) string { return fmt.Sprintf("%s%s/%s%d", placeholderPrefix, group, failedSlotPrefix, n) }
}

// record returns the pool's record as the last snapshot saw it.
func (g *nodeGroup) record() poolRecord {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rec
}

// install serves a refresh's view and settles the operations it shows done.
func (g *nodeGroup) install(rec poolRecord, v groupstate.View, results map[string]exoapi.Operation, listing groupstate.Listing) {
	g.mu.Lock()
	g.rec = rec
	g.mu.Unlock()
	g.Install(listing, v, groupstate.Settling{MaxAge: staleOperation, Result: func(o groupstate.Operation) groupstate.OperationResult {
		sub, _ := o.Data.(submittedOp)
		res, done := results[o.ID]
		if !done && sub.settled() {
			res, done = sub.op, true
		}
		switch {
		case !done:
			return groupstate.OperationResult{}
		case res.State == exoapi.OperationSuccess:
			return groupstate.OperationResult{Done: true}
		}
		return groupstate.OperationResult{Done: true, Failed: true, Info: operationErrorInfo(res, sub.quotaHit),
			Detail: []any{"provider", ProviderName, "kind", sub.kind, "state", res.State, "reason", res.Reason, "message", res.Message}}
	}})
}

// Debug implements cloudprovider.NodeGroup.
func (g *nodeGroup) Debug(context.Context) string {
	rec, pending := g.record(), len(g.Pending())
	v := g.Read()
	d := fmt.Sprintf("Exoscale %s (instance pool %s, min %d, max %d, target %d, pending operations %d)",
		rec.displayName(), g.id, v.Min, v.Max, g.Target(), pending)
	if s := rec.settings.Summary(); s != "" {
		d += "; settings " + s
	}
	return d
}

// Status implements cloudprovider.NodeGroup.
func (g *nodeGroup) Status(context.Context) cloudprovider.GroupStatus {
	return g.StatusWith(g.record().settings)
}

// scale sends an absolute size to the nodepool or pool.
func (g *nodeGroup) scale(ctx context.Context, size int) (exoapi.Operation, error) {
	rec := g.record()
	if rec.sks {
		return g.m.client.ScaleSKSNodepool(ctx, rec.clusterID, rec.nodepoolID, size)
	}
	return g.m.client.ScaleInstancePool(ctx, g.id, size)
}

// evict evicts the instances ids from the nodepool or pool.
func (g *nodeGroup) evict(ctx context.Context, ids []string) (exoapi.Operation, error) {
	rec := g.record()
	if rec.sks {
		return g.m.client.EvictSKSNodepoolMembers(ctx, rec.clusterID, rec.nodepoolID, ids)
	}
	return g.m.client.EvictInstancePoolMembers(ctx, g.id, ids)
}

// readPool is the guard's fresh read; members the snapshot lacks are starting.
func (g *nodeGroup) readPool(ctx context.Context) error {
	p, err := g.m.client.GetInstancePool(ctx, g.id)
	if err != nil {
		return fmt.Errorf("read instance pool %s: %w", g.id, err)
	}
	g.Fresh(func(v groupstate.View) groupstate.View {
		v.Target = p.Size
		// The pool's member list may be incomplete; the snapshot's members stay.
		known := make(map[string]bool, len(v.Instances))
		for _, in := range v.Instances {
			known[in.Id] = true
		}
		for _, id := range p.InstanceIDs {
			if in := member(id, "starting"); !known[in.Id] {
				v.Instances = append(v.Instances, in)
			}
		}
		return v
	})
	return nil
}

// failedImmediately turns an operation that ended unsuccessfully on
// submission into an error: a failure is a refusal; a timeout or a partial
// failure may have changed the pool, so it is applied with the size unstated.
func failedImmediately(op exoapi.Operation) error {
	if op.State != exoapi.OperationFailure && op.State != exoapi.OperationTimeout {
		return nil
	}
	code := op.State
	if op.Reason != "" {
		code += "/" + op.Reason
	}
	failed := op.State != exoapi.OperationTimeout && op.Reason != exoapi.OperationReasonPartial
	return cloudhttp.AnswerError("exoscale", "operation "+op.ID, cloudhttp.ErrorAnswer{Status: http.StatusOK,
		Code: code, Message: op.Message, CloudError: failed, Class: operationFailureClass(op.Reason)})
}

// operationFailureClass maps a documented failure reason to an error class.
func operationFailureClass(reason string) error {
	switch reason {
	case "forbidden":
		return cloudprovider.ErrPermissionDenied
	case "not-found":
		return cloudprovider.ErrNotFound
	case "incorrect", "unsupported", "conflict", "busy":
		return cloudprovider.ErrFailedPrecondition
	}
	return cloudprovider.ErrUnavailable
}

// IncreaseSize implements cloudprovider.NodeGroup; it does not wait for members.
func (g *nodeGroup) IncreaseSize(ctx context.Context, delta int) error {
	return g.Do(ctx, g.readPool, func() (groupstate.Plan, error) {
		v := g.Read()
		if err := groupstate.CheckIncrease(g.id, delta, g.Target(), v.Max); err != nil {
			return groupstate.Plan{}, err
		}
		from := v.Target
		return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) { return g.scaleUp(ctx, from, from+delta) }}, nil
	})
}

// scaleUp scales the pool from from to to; the operation stays pending.
func (g *nodeGroup) scaleUp(ctx context.Context, from, to int) (groupstate.Effect, error) {
	delta := to - from
	quota := g.m.quotaSnapshot()
	quotaHit := quota != nil && quota.Limit >= 0 && quota.Usage+int64(delta) > quota.Limit
	op, err := g.scale(ctx, to)
	opFailed := false
	if err == nil {
		err = failedImmediately(op)
		opFailed = err != nil
	}
	if err != nil {
		if quotaHit && (opFailed || errors.Is(err, cloudprovider.ErrFailedPrecondition)) {
			// Past the quota Exoscale answers a bare 400 or a failed operation
			// (both undocumented); the quota read at Refresh makes it a quota error.
			err = cloudhttp.Reclassify(err, cloudprovider.ErrQuotaExceeded)
			return groupstate.Effect{}, fmt.Errorf("scale node group %s from %d to %d (instance quota %d/%d): %w", g.id, from, to, quota.Usage, quota.Limit, err)
		}
		return groupstate.Effect{}, fmt.Errorf("scale node group %s from %d to %d: %w", g.id, from, to, err)
	}
	klog.V(2).InfoS("Scaled up node group", "provider", ProviderName, "nodeGroup", g.id, "from", from, "to", to, "operation", op.ID)
	return pendingEffect(op, submittedOp{op: op, kind: opScale, from: from, to: to, quotaHit: quotaHit}), nil
}

// pendingEffect is an accepted operation's target, pending until settled.
func pendingEffect(op exoapi.Operation, sub submittedOp) groupstate.Effect {
	e := groupstate.Resize(sub.to)
	e.Pending = &groupstate.Operation{ID: op.ID, Data: sub}
	return e
}

// DecreaseTargetSize implements cloudprovider.NodeGroup: it gives up failed
// slots, oldest first, and sends nothing. A smaller :scale removes members
// Exoscale picks (which is undocumented), among them those the pool counts
// and does not list yet, so it could remove a running one while any is
// unlisted (groupstate.CheckCancel); the failed slots are the ones the
// provider names.
func (g *nodeGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	err := g.Do(ctx, g.readPool, func() (groupstate.Plan, error) {
		slots := g.FailedSlots()
		if err := groupstate.CheckCancel(g.id, delta, g.Target(), g.Live(), len(slots)); err != nil {
			return groupstate.Plan{}, err
		}
		// Oldest slots first, by number, so a slot pruned meanwhile takes no other.
		drop := make([]int, -delta)
		for i := range drop {
			drop[i] = slots[i].N
		}
		return groupstate.Plan{Apply: groupstate.Effect{DropSlots: drop}}, nil
	})
	if err == nil {
		klog.V(2).InfoS("Decreased node group target", "provider", ProviderName, "nodeGroup", g.id, "by", -delta, "target", g.Target())
	}
	return err
}

// deletionID returns n's providerID, or "" for a slot already gone, as CA
// repeats deletions. Another group's slot or a malformed one is refused.
func (g *nodeGroup) deletionID(n *corev1.Node) (string, error) {
	pid := n.Spec.ProviderID
	name := cloudprovider.NodeName(n.Name, pid)
	rest, slot := strings.CutPrefix(pid, placeholderPrefix)
	if !slot {
		if _, err := cloudprovider.ParseProviderID(ProviderIDPrefix, pid); err != nil {
			return "", fmt.Errorf("node group %s: node %s: %w", g.id, name, err)
		}
		return pid, nil
	}
	groupID, last, _ := strings.Cut(rest, "/")
	if groupID != g.id {
		return "", cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: node %s belongs to node group %s", g.id, name, groupID)
	}
	num, err := strconv.Atoi(strings.TrimPrefix(last, failedSlotPrefix))
	if err != nil || !strings.HasPrefix(last, failedSlotPrefix) {
		return "", cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: malformed placeholder %s", g.id, pid)
	}
	if !g.SlotFailed(num) {
		return "", nil
	}
	return pid, nil
}

// DeleteNodes implements cloudprovider.NodeGroup with one evict call at most.
func (g *nodeGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	if len(nodes) == 0 {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: no nodes to delete", g.id)
	}
	var ids []string
	for _, n := range nodes {
		if n != nil {
			if id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, n.Spec.ProviderID); err == nil {
				ids = append(ids, id)
			}
		}
	}
	// The index also holds members found by lookups since the last refresh.
	owners := g.m.ownerOf(ids)
	member := func(pid string) bool {
		id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, pid)
		return err == nil && owners[id] == g.id
	}
	return g.Transact(ctx, g.readPool, func(tx *groupstate.Txn) error {
		d, err := groupstate.Prepare(tx, func() (groupstate.Deletion, error) { return g.PlanDeletion(nodes, g.deletionID, member) })
		if err != nil {
			return err
		}
		if d.Empty() {
			klog.V(4).InfoS("Nodes already being deleted", "provider", ProviderName, "nodeGroup", g.id, "nodes", len(nodes))
			return nil
		}
		if len(d.Instances) == 0 {
			err := tx.Step(func() (groupstate.Plan, error) {
				return groupstate.Plan{Apply: groupstate.Effect{DropSlots: d.Slots}}, nil
			})
			if err == nil {
				klog.V(2).InfoS("Gave up failed slots", "provider", ProviderName, "nodeGroup", g.id, "slots", len(d.Slots))
			}
			return err
		}
		// An eviction lowers the pool's size by the number of members named.
		return tx.Step(func() (groupstate.Plan, error) {
			from := g.Read().Target
			return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) {
				return g.evictMembers(ctx, from, d.Instances, d.Slots)
			}}, nil
		})
	})
}

// evictMembers evicts pids from a pool of size from and gives up slots drop.
func (g *nodeGroup) evictMembers(ctx context.Context, from int, pids []string, drop []int) (groupstate.Effect, error) {
	ids := make([]string, len(pids))
	for i, pid := range pids {
		ids[i], _ = cloudprovider.ParseProviderID(ProviderIDPrefix, pid)
	}
	op, err := g.evict(ctx, ids)
	if err == nil {
		err = failedImmediately(op)
	}
	if err != nil && !(cloudprovider.SizeUnstated(err) && errors.Is(err, cloudprovider.ErrMalformedResponse)) {
		return groupstate.Effect{}, fmt.Errorf("evict %d members from node group %s: %w", len(ids), g.id, err)
	}
	if err != nil {
		// Applied, but no operation to follow: mark it done, or settling
		// reads it as failed and restores the members.
		op = exoapi.Operation{ID: op.ID, State: exoapi.OperationSuccess}
		err = fmt.Errorf("evict %d members from node group %s: %w", len(ids), g.id, err)
	}
	klog.V(2).InfoS("Evicted node group members", "provider", ProviderName, "nodeGroup", g.id, "instances", strings.Join(ids, ","), "operation", op.ID)
	e := pendingEffect(op, submittedOp{op: op, kind: opEvict, from: from, to: from - len(ids)})
	e.Deleting, e.DropSlots = pids, drop
	return e, err
}

// TemplateNodeInfo implements cloudprovider.NodeGroup.
func (g *nodeGroup) TemplateNodeInfo(context.Context) (*corev1.Node, error) {
	rec := g.record()
	t, ok := g.m.instanceType(rec.typeID)
	if !ok || rec.typeID == "" {
		return nil, cloudprovider.Errorf(cloudprovider.ErrNotImplemented, "node group %s: instance type %q not known yet", g.id, rec.typeID)
	}
	return buildTemplate(g.id, rec, t, g.m.cfg.Zone), nil
}

// GetOptions implements cloudprovider.NodeGroup from the group's labels.
func (g *nodeGroup) GetOptions(_ context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	return g.record().settings.GetOptions(defaults)
}
