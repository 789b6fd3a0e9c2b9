package groupstate

import (
	"time"
)

// Effect is what a change did to a group, applied only when the cloud
// applied the change.
type Effect struct {
	// Target is the new target, used when SetTarget.
	Target    int
	SetTarget bool
	// Deleting are the providerIDs of instances the cloud now removes.
	Deleting []string
	// DropSlots are the failed slots given up.
	DropSlots []int
	// Read, when set, installs the cloud's answer like Group.Fresh first.
	Read func(served View) View
	// Pending is an operation the cloud finishes later.
	Pending *Operation
}

// Resize is the Effect of a change that sets the target to n.
func Resize(n int) Effect { return Effect{Target: n, SetTarget: true} }

// Operation is a change the cloud carries out later (an Exoscale
// operation). The provider fills ID and Data, its own record.
type Operation struct {
	ID   string
	Data any
	// Seq orders the answer against listings; Submitted is when it came.
	Seq       uint64
	Submitted time.Time
	// Change and Deleting are what settling undoes if the operation failed.
	Change   int
	Deleting []string
}

// apply applies e while the call still counts as in flight.
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
	// Under the lock, so the target and Deleting change together.
	g.deleting().add(e.Deleting...)
	g.failed().drop(e.DropSlots...)
	if op != nil {
		g.ledger.addPending(g.id, *op)
	}
}
