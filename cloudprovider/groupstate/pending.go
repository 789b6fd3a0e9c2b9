package groupstate

import (
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// OperationResult is what the cloud did with a pending operation.
type OperationResult struct {
	// Done says the cloud finished it; false leaves it pending.
	Done bool
	// Failed says the cloud did not apply it: settling undoes its effect.
	Failed bool
	// Info is why it failed; a failed increase with Info leaves failed
	// slots for CA to see.
	Info *cloudprovider.InstanceErrorInfo
	// Detail are key-value pairs logged with the failure.
	Detail []any
}

// Settling is how Install settles the group's pending operations. The zero
// value settles nothing.
type Settling struct {
	// Result says what the cloud did with op. It runs under the group's
	// lock, so it must not call the Group.
	Result func(op Operation) OperationResult
	// MaxAge is how long an operation may stay pending before the cloud's
	// size is trusted again. Failed slots older than it end too.
	MaxAge time.Duration
}

// Settleable returns the pending operations a listing that began at
// listing may settle: none when a change overtook it, else those the
// cloud answered before it began. The provider polls only these.
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

// settle settles the pending operations the cloud answered before the
// listing began, and returns the target to serve; served is the target
// before the listing. A finished one is
// dropped; a failed one is undone (target, Deleting, failed slots); one
// pending longer than MaxAge is dropped. While some stay pending the
// served target stays, less the failed changes. An overtaken listing
// settles only the stale ones. Callers hold g.mu.
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
