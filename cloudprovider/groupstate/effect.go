package groupstate

import (
	"time"
)

// Effect is what a change did to a group. The guard applies it under the
// group's lock only when the cloud applied the change; after an unknown
// outcome it re-reads the group instead.
type Effect struct {
	// Target is the group's target after the change, used when SetTarget.
	Target    int
	SetTarget bool
	// Deleting are the providerIDs of instances the cloud now removes.
	Deleting []string
	// DropSlots are the numbers of the failed slots the change gave up.
	DropSlots []int
	// Read, when set, builds the group's view from the cloud's answer,
	// installed like Group.Fresh before the fields above apply.
	Read func(served View) View
	// Pending is an operation the cloud accepted and finishes later; the
	// group keeps it until a listing settles it (Settling).
	Pending *Operation
}

// Resize is the Effect of a change that sets the target to n.
func Resize(n int) Effect { return Effect{Target: n, SetTarget: true} }

// Operation is a change the cloud carries out later (an Exoscale
// operation). The provider fills ID and Data; the group fills the rest.
type Operation struct {
	ID string
	// Data is the provider's own record of the operation.
	Data any
	// Seq orders the cloud's answer against listings (Group.Settleable);
	// Submitted is when it came, on the ledger's clock.
	Seq       uint64
	Submitted time.Time
	// Change is how far the operation moved the target, and Deleting the
	// instances it marked: what settling undoes if the operation failed.
	Change   int
	Deleting []string
}

// apply applies e to the served state. The guard calls it while the call
// still counts as in flight, so a listing that raced with the call keeps
// the effect.
func (g *Group) apply(e Effect) {
	if e.Read != nil {
		g.Fresh(e.Read)
	}
	var op *Operation
	if e.Pending != nil {
		o := *e.Pending
		o.Seq, o.Submitted = g.ledger.seqNow(), g.ledger.now()
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
	// Under the lock, so Nodes shows the new Deleting instances together
	// with the target that no longer counts them.
	g.deleting().add(e.Deleting...)
	g.failed().drop(e.DropSlots...)
	if op != nil {
		g.ledger.addPending(g.id, *op)
	}
}
