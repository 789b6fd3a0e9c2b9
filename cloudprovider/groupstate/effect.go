package groupstate

import (
	"time"
)

// Effect is what a change did to a group once the cloud applied it. A
// plan's call returns it and the guard applies it, under the group's lock,
// only when the call's outcome is applied (a nil error, or one stating
// MutationApplied). A refused call changes nothing; after an unknown one
// the guard re-reads the group before the next change. No provider writes
// the served state inside a call.
type Effect struct {
	// Target is the group's target after the change, used when SetTarget.
	Target    int
	SetTarget bool
	// Deleting are the providerIDs of instances the cloud now removes.
	Deleting []string
	// DropSlots are the numbers of the failed slots the change gave up.
	DropSlots []int
	// Read, when not nil, is what the cloud's answer says of the whole
	// group, installed like a fresh read (Group.FreshFrom); the fields
	// above apply after it.
	Read func(served View) View
	// Pending is an operation the cloud accepted and finishes later. The
	// ledger keeps it with the sequence and time it was answered, until the
	// provider settles it.
	Pending *Operation
}

// Resize is the Effect of a change that sets the target to n.
func Resize(n int) Effect { return Effect{Target: n, SetTarget: true} }

// Operation is a change the cloud accepted and carries out later (an
// Exoscale operation). The provider fills ID and Data; the ledger sets
// Seq and Submitted when it applies the Effect that carries it.
type Operation struct {
	ID string
	// Data is the provider's own record of the operation.
	Data any
	// Seq is the ledger's sequence once the cloud answered (see
	// Listing.After), Submitted the ledger's time then.
	Seq       uint64
	Submitted time.Time
	// Change is how far the Effect that carried it moved the target, and
	// Deleting the instances it made Deleting: what settling undoes when
	// the cloud reports the operation failed (Group.InstallSettling).
	Change   int
	Deleting []string
}

// apply applies e to the served state. The guard calls it while the call
// is still counted in flight, so a listing that raced with the call keeps
// the effect (Ledger.Reconcile).
func (g *Group) apply(e Effect) {
	if e.Read != nil {
		g.FreshFrom(e.Read)
	}
	var op *Operation
	if e.Pending != nil {
		o := *e.Pending
		o.Seq, o.Submitted = g.ledger.Seq(), g.ledger.now()
		o.Deleting = append([]string(nil), e.Deleting...)
		op = &o
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if e.SetTarget {
		if op != nil {
			op.Change = e.Target - g.target()
		}
		g.view.Target = e.Target
	}
	// Under the group's lock: Nodes shows the instances Deleting together
	// with the target that no longer counts them.
	g.Deleting().Add(e.Deleting...)
	g.Failed().Drop(e.DropSlots...)
	if op != nil {
		g.ledger.addPending(g.id, *op)
	}
}

// applyLocal applies e, the Effect of a plan that needs no cloud call (a
// failed slot outside the cloud's size given up): nothing was sent, so
// the ledger records no call and no listing is overtaken.
func (tx *Txn) applyLocal(e Effect) {
	if g := tx.g.served(); g != nil {
		g.apply(e)
	}
}
