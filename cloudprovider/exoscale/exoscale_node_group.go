package exoscale

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// poolRecord is what the cloud says of a group beyond its served state
// (bounds, size and members, which the embedded groupstate.Group holds):
// which pool or nodepool it is, and its template and settings inputs.
type poolRecord struct {
	name                                string
	sks                                 bool
	clusterID, nodepoolID, nodepoolName string
	typeID                              string
	diskSizeGiB                         int
	labels                              map[string]string
	taints                              []exoapi.Taint
	// settings are read from the nodepool's labels (SKS) or the instance
	// pool's labels (plain pools) at each Refresh.
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

// pendingOp is a scale or evict the cloud accepted and has not been seen
// finishing yet.
type pendingOp struct {
	op exoapi.Operation
	// seq is the ledger's sequence once the cloud answered (Ledger.Seq),
	// taken inside the guarded call, before the guard records its end: a
	// listing that began while the call was in flight is not After it, one
	// that began after the cloud accepted the operation is.
	seq      uint64
	kind     string
	from, to int
	// evicted are the providerIDs an eviction names.
	evicted   []string
	submitted time.Time
	quotaHit  bool
	// polled is a success GET /operation showed after the pool list of
	// its refresh was taken; the next refresh settles it.
	polled *exoapi.Operation
}

// nodeGroup is one Exoscale instance pool (plain, or an SKS nodepool's).
// Objects persist across refreshes so that locks and bookkeeping do.
//
// Its served state is the shared groupstate.Group (Id, MinSize, MaxSize,
// TargetSize, Nodes, the guard and the ledger's rules): the target is the
// size the cloud was last asked for while operations are pending (the
// pool's size otherwise), members whose eviction the cloud accepted show
// Deleting, and the slots of scale-ups whose operation failed are outside
// the pool's size (groupstate.SlotsOutsideSize), shown as failed creations
// until CA deletes them. Members requested but not listed yet are not in
// Nodes: CA counts them as upcoming from TargetSize, and
// DecreaseTargetSize may cancel them. Beside it the group keeps only what
// Exoscale adds: the pool's record and the operations pending.
type nodeGroup struct {
	*groupstate.Group
	m  *manager
	id string

	// mu guards rec and pending, and orders what changes the served
	// state: a refresh's install and settling, a mutation's fresh read,
	// plan and recorded operation, and every change of the failed slots,
	// so that a plan sees the target and the slots agree. It is released
	// during cloud calls, and reads (TargetSize, Nodes, NodeGroups) never
	// take it: CA aborts its loop when TargetSize fails.
	mu      sync.Mutex
	rec     poolRecord
	pending []*pendingOp
}

// String identifies the group; it never prints the manager and its config.
func (g *nodeGroup) String() string { return "exoscale node group " + g.id }

// GoString never prints the manager and its config.
func (g *nodeGroup) GoString() string { return g.String() }

func newNodeGroup(m *manager, id string) *nodeGroup {
	return &nodeGroup{Group: m.ledger.Group(id, slotIDs(id), groupstate.SlotsOutsideSize), m: m, id: id}
}

// slotIDs builds the providerIDs of group's failed slots from their numbers
// ("exoscale://pending/<group>/failed-<n>").
func slotIDs(group string) func(n int) string {
	return func(n int) string { return fmt.Sprintf("%s%s/%s%d", placeholderPrefix, group, failedSlotPrefix, n) }
}

// record returns the pool's record as the last snapshot saw it.
func (g *nodeGroup) record() poolRecord {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rec
}

// live counts members that exist and are not being removed.
func (g *nodeGroup) live() int {
	deleting := g.Deleting()
	n := 0
	for _, in := range g.Read().Instances {
		if !deleting.Holds(in.Id) && !removing(in) {
			n++
		}
	}
	return n
}

// submittedOp is what a refresh needs of an operation submitted before it.
type submittedOp struct {
	id       string
	kind     string
	from, to int
	// settled is true when the outcome is known without a poll (the cloud
	// answered with a final state); applySnapshot settles those.
	settled bool
	polled  *exoapi.Operation
}

// submittedOperations returns the pending operations the cloud accepted
// before listing began, oldest first.
func (g *nodeGroup) submittedOperations(listing groupstate.Listing) []submittedOp {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ops []submittedOp
	for _, p := range g.pending {
		if listing.After(p.seq) {
			ops = append(ops, submittedOp{id: p.op.ID, kind: p.kind, from: p.from, to: p.to, settled: p.op.Done() || p.op.ID == "", polled: p.polled})
		}
	}
	return ops
}

// notePolled keeps a success seen by GET /operation for the next refresh.
func (g *nodeGroup) notePolled(id string, op exoapi.Operation) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.pending {
		if p.op.ID == id {
			p.polled = &op
		}
	}
}

// applySnapshot installs a new snapshot of the group, taken by the refresh
// whose listing began at listing, and settles the operations that finished
// before it was taken. The ledger's rules (groupstate.Group.Install) decide
// what the listing may overwrite: a listing older than a mutation of ours
// (or than a mutation's fresh read) keeps the size served now, and it ends
// the Deleting state of members it no longer holds. Failed slots are not in
// the listing (the pool's size never counted them): a failed scale-up adds
// them here, and they end when CA deletes them or after staleOperation.
func (g *nodeGroup) applySnapshot(rec poolRecord, v groupstate.View, results map[string]exoapi.Operation, listing groupstate.Listing) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rec = rec
	// Under mu: a fresh read (readPool) and an operation's recording
	// change the served state under mu too, so none lands between the
	// settling planned here and the install.
	s := g.settle(results, listing, false, g.Read().Target)
	if len(s.pending) > 0 {
		v.Target = s.target
	}
	// The slots and Deleting changes land with the view, under the
	// group's lock (groupstate.Group.InstallWith): no read sees the target
	// without a failed operation's slots.
	g.InstallWith(listing, v, func(kept bool) {
		if kept {
			// The listing may predate a mutation of ours or a fresh read:
			// its size is not served, and it settles no operation, since
			// the size served once they settle would be the older one
			// kept. The next refresh settles them.
			s = g.settle(nil, listing, true, 0)
		}
		g.pending = s.pending
		for _, p := range s.stale {
			klog.InfoS("Dropping operation still pending after an hour", "provider", ProviderName, "nodeGroup", g.id, "operation", p.op.ID)
		}
		for _, f := range s.failed {
			// The cloud did not apply it: the target planned above no
			// longer expects it.
			p, res := f.p, f.res
			klog.InfoS("Operation failed", "provider", ProviderName, "nodeGroup", g.id, "operation", res.ID, "kind", p.kind, "state", res.State, "reason", res.Reason, "message", res.Message)
			switch p.kind {
			case opScale:
				// A scale-down that failed leaves no slot (Add ignores n <= 0).
				g.Failed().Add(p.to-p.from, operationErrorInfo(res, p.quotaHit))
			case opEvict:
				g.Deleting().Forget(p.evicted...)
			}
		}
		// CA deletes a failed slot within its --max-node-provision-time;
		// one it never deletes ends with the operations it came from.
		g.Failed().Prune(staleOperation)
	})
}

// settlement is what a listing settles of a group's pending operations.
type settlement struct {
	// pending are the operations still pending, stale those dropped after
	// staleOperation, failed those the cloud did not apply.
	pending, stale []*pendingOp
	failed         []failedOp
	// target is the size the cloud was asked for, once the failed
	// operations no longer count.
	target int
}

type failedOp struct {
	p   *pendingOp
	res exoapi.Operation
}

// settle plans what a listing that began at listing settles, given the
// results this refresh found (results), and changes nothing: an overtaken
// listing (kept) settles only operations gone stale, and no target.
// served is the target served now. Callers hold mu.
func (g *nodeGroup) settle(results map[string]exoapi.Operation, listing groupstate.Listing, kept bool, served int) settlement {
	s := settlement{target: served}
	for _, p := range g.pending {
		res, done := results[p.op.ID]
		if !done && !kept && listing.After(p.seq) && (p.op.Done() || p.op.ID == "") {
			res, done = p.op, true
		}
		switch {
		case !done && listing.At.Sub(p.submitted) > staleOperation:
			s.stale = append(s.stale, p)
		case !done:
			s.pending = append(s.pending, p)
		case res.State != exoapi.OperationSuccess:
			s.failed = append(s.failed, failedOp{p: p, res: res})
			switch p.kind {
			case opScale:
				s.target -= p.to - p.from
			case opEvict:
				s.target += len(p.evicted)
			}
		}
	}
	return s
}

// Debug implements cloudprovider.NodeGroup.
func (g *nodeGroup) Debug(context.Context) string {
	g.mu.Lock()
	rec, pending := g.rec, len(g.pending)
	g.mu.Unlock()
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

// scale sends an absolute size to the nodepool or pool. Callers hold the
// mutation lock but not mu, so reads never wait behind the call.
func (g *nodeGroup) scale(ctx context.Context, size int) (exoapi.Operation, error) {
	rec := g.record()
	if rec.sks {
		return g.m.client.ScaleSKSNodepool(ctx, rec.clusterID, rec.nodepoolID, size)
	}
	return g.m.client.ScaleInstancePool(ctx, g.id, size)
}

// evict is scale for an eviction.
func (g *nodeGroup) evict(ctx context.Context, ids []string) (exoapi.Operation, error) {
	rec := g.record()
	if rec.sks {
		return g.m.client.EvictSKSNodepoolMembers(ctx, rec.clusterID, rec.nodepoolID, ids)
	}
	return g.m.client.EvictInstancePoolMembers(ctx, g.id, ids)
}

// readPool re-reads the instance pool before a mutation (after an
// unconfirmed change, and before a shrink by absolute size): its size is
// the cloud's target, and members it lists that the snapshot lacks are
// counted as starting. Callers hold the mutation lock but not mu.
func (g *nodeGroup) readPool(ctx context.Context) error {
	p, err := g.m.client.GetInstancePool(ctx, g.id)
	if err != nil {
		return fmt.Errorf("read instance pool %s: %w", g.id, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.FreshFrom(func(v groupstate.View) groupstate.View {
		v.Target = p.Size
		// The pool answer may leave members out; the snapshot's stand.
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

// failedImmediately turns an operation that was final on submission and did
// not succeed into the cloud's answer as an error. A failure is a refusal:
// the cloud did nothing, so the group is not quarantined. A timeout or a
// partial failure may have changed the pool, though nothing is left in
// flight: it states MutationApplied, so the guard reads the pool at once
// (and before the next change if that read fails), again without a
// quarantine.
func failedImmediately(op exoapi.Operation) error {
	if op.State != exoapi.OperationFailure && op.State != exoapi.OperationTimeout {
		return nil
	}
	code := op.State
	if op.Reason != "" {
		code += "/" + op.Reason
	}
	// A failure states the request failed (refused); a timeout or a partial
	// failure is a success answer that does not state the size (applied).
	failed := op.State != exoapi.OperationTimeout && op.Reason != exoapi.OperationReasonPartial
	return cloudhttp.AnswerError("exoscale", "operation "+op.ID, cloudhttp.ErrorAnswer{Status: http.StatusOK,
		Code: code, Message: op.Message, CloudError: failed, Class: operationFailureClass(op.Reason)})
}

// operationFailureClass maps a failed operation's documented reason to the
// class CA sees.
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

// IncreaseSize implements cloudprovider.NodeGroup: it submits an absolute
// scale under the shared mutation discipline and returns; the new members
// are tracked through Nodes and Refresh.
func (g *nodeGroup) IncreaseSize(ctx context.Context, delta int) error {
	if err := g.CheckManaged(); err != nil {
		return err
	}
	return g.Guard().Do(ctx, groupstate.Mutation{
		Plan: func() (groupstate.Plan, error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			v := g.Read()
			if err := groupstate.CheckIncrease(g.id, delta, g.Target(), v.Max); err != nil {
				return groupstate.Plan{}, err
			}
			from := v.Target
			return groupstate.Plan{Call: func(ctx context.Context) error { return g.scaleUp(ctx, from, from+delta) }}, nil
		},
		Read: g.readPool,
	})
}

// scaleUp submits the absolute size to and records the pending operation;
// callers hold the mutation lock but not mu.
func (g *nodeGroup) scaleUp(ctx context.Context, from, to int) error {
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
			// Exoscale refuses a scale past the quota with a bare 400, or
			// (undocumented either way) with an operation that fails; the
			// quota read at Refresh says why, so CA sees ResourceExhausted
			// (one class, not two: FailedPrecondition would win).
			err = cloudhttp.Reclassify(err, cloudprovider.ErrQuotaExceeded)
			return fmt.Errorf("scale node group %s from %d to %d (instance quota %d/%d): %w", g.id, from, to, quota.Usage, quota.Limit, err)
		}
		return fmt.Errorf("scale node group %s from %d to %d: %w", g.id, from, to, err)
	}
	g.accepted(&pendingOp{op: op, kind: opScale, from: from, to: to, quotaHit: quotaHit})
	klog.V(2).InfoS("Scaled up node group", "provider", ProviderName, "nodeGroup", g.id, "from", from, "to", to, "operation", op.ID)
	return nil
}

// DecreaseTargetSize implements cloudprovider.NodeGroup. Only members not yet
// created can be cancelled: failed slots are dropped locally, requested but
// unlisted members by a smaller absolute size (Exoscale removes the newest
// members first), after a fresh read of the pool so that a member launched
// since the snapshot is counted. Anything more is an error, never
// upstream's silent no-op.
func (g *nodeGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	if err := g.CheckManaged(); err != nil {
		return err
	}
	return g.Guard().Do(ctx, groupstate.Mutation{
		Plan: func() (groupstate.Plan, error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			target := g.Target()
			if err := groupstate.CheckDecrease(g.id, delta, target, g.live()); err != nil {
				return groupstate.Plan{}, err
			}
			d := decrease{target: target, delta: delta, from: g.Read().Target}
			for _, f := range g.Failed().List() {
				if len(d.dropFailed) == -delta {
					break
				}
				d.dropFailed = append(d.dropFailed, f.N)
			}
			d.scaleDown = -delta - len(d.dropFailed)
			// Cancelling requested members is a smaller absolute size.
			return groupstate.Plan{Shrinks: d.scaleDown > 0, Call: func(ctx context.Context) error { return g.decrease(ctx, d) }}, nil
		},
		Read: g.readPool,
	})
}

// decrease is a DecreaseTargetSize as planned from the snapshot: failed
// slots dropped first (the oldest, by number), then requested members
// cancelled by a smaller size.
type decrease struct {
	target, delta, from int
	dropFailed          []int
	scaleDown           int
}

// decrease carries out d; callers hold the mutation lock but not mu.
func (g *nodeGroup) decrease(ctx context.Context, d decrease) error {
	if d.scaleDown > 0 {
		to := d.from - d.scaleDown
		op, err := g.scale(ctx, to)
		if err == nil {
			err = failedImmediately(op)
		}
		if err != nil {
			return fmt.Errorf("decrease target of node group %s from %d to %d: %w", g.id, d.from, to, err)
		}
		g.accepted(&pendingOp{op: op, kind: opScale, from: d.from, to: to})
	}
	// By number: a slot a Refresh pruned during the cloud call already
	// lowered the target, and no other takes its place.
	g.dropFailedSlots(d.dropFailed)
	klog.V(2).InfoS("Decreased node group target", "provider", ProviderName, "nodeGroup", g.id, "from", d.target, "to", d.target+d.delta, "droppedFailed", len(d.dropFailed))
	return nil
}

// accepted notes an operation the cloud accepted as pending, and serves
// the size it asks for; for an eviction, the members it names show Deleting
// with that size. It takes the ledger's sequence now, inside the guarded
// call (pendingOp.seq).
func (g *nodeGroup) accepted(p *pendingOp) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p.seq, p.submitted = g.m.ledger.Seq(), g.m.now()
	g.pending = append(g.pending, p)
	g.Update(func(v *groupstate.View) {
		v.Target = p.to
		// Under the group's lock: Nodes shows them Deleting together
		// with the target that no longer counts them.
		g.Deleting().Add(p.evicted...)
	})
}

// deleteRequest is a DeleteNodes call sorted by what each node is.
type deleteRequest struct {
	evict       []string
	failedSlots []int
	counted     []*corev1.Node
}

// classify checks every node belongs to this group; already-removed
// instances are skipped so CA's repeated deletions stay harmless. Callers
// hold mu.
func (g *nodeGroup) classify(nodes []*corev1.Node, owners map[string]string) (deleteRequest, error) {
	var req deleteRequest
	seen := map[string]bool{}
	members := map[string]cloudprovider.Instance{}
	for _, in := range g.Read().Instances {
		members[in.Id] = in
	}
	deleting := g.Deleting()
	for _, n := range nodes {
		if n == nil {
			return req, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: nil node", g.id)
		}
		pid := n.Spec.ProviderID
		name := cloudprovider.NodeName(n.Name, pid)
		if seen[pid] {
			return req, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: node %s listed twice", g.id, name)
		}
		seen[pid] = true
		if rest, ok := strings.CutPrefix(pid, placeholderPrefix); ok {
			groupID, slot, _ := strings.Cut(rest, "/")
			if groupID != g.id {
				return req, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: node %s belongs to node group %s", g.id, name, groupID)
			}
			num, err := strconv.Atoi(strings.TrimPrefix(slot, failedSlotPrefix))
			if err != nil || !strings.HasPrefix(slot, failedSlotPrefix) {
				return req, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: malformed placeholder %s", g.id, pid)
			}
			if g.Failed().Holds(num) {
				req.failedSlots = append(req.failedSlots, num)
				req.counted = append(req.counted, n)
			}
			continue
		}
		id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, pid)
		if err != nil {
			return req, fmt.Errorf("node group %s: node %s: %w", g.id, name, err)
		}
		in, member := members[pid]
		if !member && owners[id] != g.id {
			return req, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: node %s is not a member of this instance pool", g.id, name)
		}
		if deleting.Holds(pid) || (member && removing(in)) {
			continue
		}
		req.evict = append(req.evict, id)
		req.counted = append(req.counted, n)
	}
	return req, nil
}

// DeleteNodes implements cloudprovider.NodeGroup: ownership and min checks
// first, then one evict call; it returns once Exoscale accepted the eviction.
func (g *nodeGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	if err := g.CheckManaged(); err != nil {
		return err
	}
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
	owners := g.m.ownerOf(ids)
	return g.Guard().Transact(ctx, g.readPool, func(tx *groupstate.Txn) error {
		req, err := groupstate.Prepare(tx, func() (deleteRequest, error) { return g.planDeletion(nodes, owners) })
		if err != nil || len(req.counted) == 0 {
			return err
		}
		if len(req.evict) > 0 {
			// An eviction names its members: the cloud lowers the size by
			// as many, no absolute size is sent.
			if err := tx.Step(func() (groupstate.Plan, error) {
				return groupstate.Plan{Call: func(ctx context.Context) error { return g.evictMembers(ctx, req.evict) }}, nil
			}); err != nil {
				return err
			}
		}
		g.dropFailedSlots(req.failedSlots)
		return nil
	})
}

// planDeletion sorts a DeleteNodes request against the snapshot and applies
// the min rule to what it would remove.
func (g *nodeGroup) planDeletion(nodes []*corev1.Node, owners map[string]string) (deleteRequest, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	req, err := g.classify(nodes, owners)
	if err != nil {
		return req, err
	}
	if len(req.counted) == 0 {
		klog.V(4).InfoS("Nodes already being deleted", "provider", ProviderName, "nodeGroup", g.id, "nodes", len(nodes))
		return req, nil
	}
	return req, groupstate.CheckDeleteMin(g.id, g.Target(), g.Read().Min, req.counted)
}

// evictMembers evicts ids and records the pending operation; callers hold
// the mutation lock but not mu, so reads never wait behind the call. An
// eviction the cloud took without a usable answer, or that timed out or
// finished partly, states MutationApplied and the guard reads the pool; only
// after an unusable answer are the members known to leave, as below.
func (g *nodeGroup) evictMembers(ctx context.Context, ids []string) error {
	from := g.Read().Target
	op, err := g.evict(ctx, ids)
	if err == nil {
		err = failedImmediately(op)
	}
	if err != nil && !(cloudprovider.SizeUnstated(err) && errors.Is(err, cloudprovider.ErrMalformedResponse)) {
		return fmt.Errorf("evict %d members from node group %s: %w", len(ids), g.id, err)
	}
	if err != nil {
		// Applied, but the answer names no operation to follow: record it as
		// done, or settling would read the empty operation as a failure and
		// give the evicted members back to the target.
		op = exoapi.Operation{ID: op.ID, State: exoapi.OperationSuccess}
	}
	evicted := make([]string, len(ids))
	for i, id := range ids {
		evicted[i] = cloudprovider.BuildProviderID(ProviderIDPrefix, id)
	}
	g.accepted(&pendingOp{op: op, kind: opEvict, from: from, to: from - len(ids), evicted: evicted})
	klog.V(2).InfoS("Evicted node group members", "provider", ProviderName, "nodeGroup", g.id, "instances", strings.Join(ids, ","), "operation", op.ID)
	if err != nil {
		return fmt.Errorf("evict %d members from node group %s: %w", len(ids), g.id, err)
	}
	return nil
}

// dropFailedSlots ends the failed slots CA deleted: they never reached the
// cloud's size, so no cloud call is needed.
func (g *nodeGroup) dropFailedSlots(nums []int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Failed().Drop(nums...)
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

// GetOptions implements cloudprovider.NodeGroup: the overrides in the
// group's labels on top of defaults, or ErrNotImplemented without any
// (returning options would zero the ones the protocol cannot carry).
func (g *nodeGroup) GetOptions(_ context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	return g.record().settings.GetOptions(defaults)
}
