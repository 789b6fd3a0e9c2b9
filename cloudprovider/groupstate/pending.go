package groupstate

import (
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// OperationResult is what the provider found the cloud did with a pending
// operation (Effect.Pending).
type OperationResult struct {
	// Done says the cloud finished it; false leaves it pending.
	Done bool
	// Failed says the cloud did not apply it: settling undoes its effect.
	Failed bool
	// Info is why it failed, shown on the failed slots of an increase the
	// cloud did not carry out; nil adds no slot.
	Info *cloudprovider.InstanceErrorInfo
	// Detail are key-value pairs logged with the failure (the cloud's
	// state and reason).
	Detail []any
}

// Settling is how a listing settles the group's pending operations.
type Settling struct {
	// Result says what the cloud did with op. It is asked only of the
	// operations the listing may settle, under the group's lock, so it
	// must not call the Group.
	Result func(op Operation) OperationResult
	// MaxAge is how long an operation may stay pending: one older when
	// the listing began is dropped and the cloud's size trusted again.
	// Failed slots older than it end too, should CA never delete them.
	MaxAge time.Duration
}

// InstallSettling is Install for a cloud whose changes finish later
// (Effect.Pending): with the listing, under the group's lock, it settles
// the pending operations the cloud answered before the listing began
// (Listing.After). A finished one is dropped; a failed one has its effect
// undone (the target moved back by its change, its instances no longer
// Deleting, and the slots of a failed increase added as failed slots,
// with s.Result's Info); one pending longer than s.MaxAge is dropped.
// While some stay pending the target served is the one asked for, less
// the failed changes; once none do, the listed size is served. A listing
// a mutation overtook (Ledger.Reconcile) keeps the size served now and
// settles only the operations gone stale: the size they would leave is
// the older one.
func (g *Group) InstallSettling(listing Listing, v View, s Settling) (kept bool) {
	g.retired.Store(false)
	g.mu.Lock()
	defer g.mu.Unlock()
	served := g.target()
	kept = g.ledger.Reconcile(listing, g.id, g.listing(v)).KeepSize
	var left []Operation
	undo := 0
	for _, op := range g.ledger.pendingOf(g.id) {
		var r OperationResult
		if !kept && listing.After(op.Seq) {
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
			g.Deleting().Forget(op.Deleting...)
			if op.Change > 0 && r.Info != nil {
				g.Failed().Add(op.Change, r.Info)
			}
		}
	}
	switch {
	case kept:
		v.Target = g.view.Target
	case len(left) > 0:
		v.Target = served - undo
	}
	g.view = v
	g.ledger.setPending(g.id, left)
	g.Failed().Prune(s.MaxAge)
	return kept
}
