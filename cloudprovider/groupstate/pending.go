package groupstate

import (
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// OperationResult is what the cloud did with a pending operation: not
// Done leaves it pending; Failed undoes it, and a failed increase with
// Info leaves failed slots for CA to see. Detail is logged.
type OperationResult struct {
	Done   bool
	Failed bool
	Info   *cloudprovider.InstanceErrorInfo
	Detail []any
}

// Settling is how Install settles pending operations; the zero value
// settles nothing. Result runs under the group's lock and must not call
// the Group. After MaxAge an operation is dropped and the cloud's size
// trusted again; failed slots older than it end too.
type Settling struct {
	Result func(op Operation) OperationResult
	MaxAge time.Duration
}

// Settleable returns the pending operations a listing may settle: none
// when a change overtook it, else those answered before it began.
func (g *Group) Settleable(listing Listing) []Operation {
	if g.ledger.overtaken(listing, g.id) {
		return nil
	}
	var ops []Operation
	for _, op := range g.ledger.pendingOf(g.id) {
		if listing.after(op.Seq) {
			ops = append(ops, op)
		}
	}
	return ops
}

// settle settles pending operations and returns the target to serve:
// while some stay pending, served less the failed changes. Callers hold
// g.mu.
func (g *Group) settle(listing Listing, v View, s Settling, kept bool, served int) int {
	var left []Operation
	undo := 0
	for _, op := range g.ledger.pendingOf(g.id) {
		var r OperationResult
		if !kept && listing.after(op.Seq) {
			r = s.Result(op)
		}
		switch {
		case !r.Done && listing.At.Sub(op.Submitted) > s.MaxAge:
			klog.InfoS("Dropping an operation still pending; the cloud's size is served again", "nodeGroup", g.id, "operation", op.ID, "pendingFor", listing.At.Sub(op.Submitted))
		case !r.Done:
			left = append(left, op)
		case r.Failed:
			klog.InfoS("Operation failed; undoing its effect", append([]any{"nodeGroup", g.id, "operation", op.ID, "targetChange", -op.Change, "noLongerDeleting", len(op.Deleting)}, r.Detail...)...)
			undo += op.Change
			g.deleting().forget(op.Deleting...)
			if op.Change > 0 && r.Info != nil {
				g.failed().add(op.Change, r.Info)
			}
		}
	}
	g.ledger.setPending(g.id, left)
	g.failed().prune(s.MaxAge)
	if len(left) > 0 && !kept {
		return served - undo
	}
	return v.Target
}
