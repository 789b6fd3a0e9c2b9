package groupstate

import (
	"context"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// LookupMargin is how long before the caller's deadline a lookup for an
// unknown node gives up, so NodeGroupForNode answers while CA still listens
// instead of running into its deadline when the API is slow.
const LookupMargin = 500 * time.Millisecond

// UnknownNodeLookup is the one rule for a NodeGroupForNode whose providerID
// belongs to this cloud but is not in the provider's index (a node launched
// since the last Refresh, by us or by another actor, or an instance that is
// in no node group or does not exist at all):
//
//   - The provider looks such a node up in the cloud at once, so a new node
//     heals without waiting a refresh cycle, with one listing (Lookup) that
//     answers for every such node. It runs at most once per Refresh, however
//     many unknown nodes CA asks about, and its answer (or error) is shared by
//     every caller until the next Refresh.
//   - An id that the listing does not place in a node group is remembered for
//     Remember (--max-staleness) and answered "no group" without a call until
//     then: CA asks about every node in every loop and never caches a "no
//     group" answer, so without this memory a thousand gone or foreign nodes
//     would cost a listing per loop. The provider's index is read first, so
//     a node a later Refresh finds in a group is served at once regardless.
//   - When the lookup fails (the cloud answers an error, or not in time),
//     the answer is "no group", never an error and never a guess: CA does not
//     read an error from NodeGroupForNode as "not autoscaled" but aborts or
//     skips whatever it was doing (docs/architecture.md), and a failing cloud
//     would then stop its whole loop. The failure is counted (Failed) and
//     logged once per node (again only once Remember has passed, so a cloud
//     down for long still says so); the node is looked up again after the
//     next Refresh.
//
// The exported fields are set before first use; the zero value of each is a
// usable default.
type UnknownNodeLookup struct {
	// Provider names the provider in logs.
	Provider string
	// Lookup takes the one listing that answers for every node the index
	// lacks and adds what it finds to the provider's index, where
	// ResolveUnknownNode reads it afterwards. It gets a context that ends
	// LookupMargin before the caller's deadline.
	Lookup func(ctx context.Context) error
	// Remember is how long an id the cloud places in no node group is
	// answered without a lookup (--max-staleness; zero: DefaultMaxStaleness).
	Remember time.Duration
	// Now is the clock Remember is measured with (nil: time.Now).
	Now func() time.Time
	// Failed counts one NodeGroupForNode answered "no group" because the
	// lookup failed (registry.BuildOptions.NodeLookupFailed); nil counts nothing.
	Failed func()

	mu sync.Mutex
	// round is this Refresh's lookup, nil until one ran.
	round *lookupCall
	// memory is made on first use, with Remember and Now as set then.
	memory sync.Once
	// absent holds the ids the last lookups placed in no group.
	absent *TTLCache[string, struct{}]
	// logged holds the ids whose failed lookup was logged, so a failing
	// cloud logs each node once, not once per loop.
	logged *TTLCache[string, struct{}]
}

type lookupCall struct {
	finished chan struct{}
	err      error
}

func (u *UnknownNodeLookup) now() time.Time {
	if u.Now != nil {
		return u.Now()
	}
	return time.Now()
}

func (u *UnknownNodeLookup) remember() time.Duration {
	if u.Remember > 0 {
		return u.Remember
	}
	return DefaultMaxStaleness
}

// memo returns the absent and logged memories, each keeping an id for
// Remember.
func (u *UnknownNodeLookup) memo() (absent, logged *TTLCache[string, struct{}]) {
	u.memory.Do(func() {
		u.absent = NewTTLCache[string, struct{}](u.remember(), u.now)
		u.logged = NewTTLCache[string, struct{}](u.remember(), u.now)
	})
	return u.absent, u.logged
}

// Refreshed starts a new round: the next unknown node may be looked up once
// more. Remembered ids older than Remember are dropped. The provider calls it
// at the end of each successful Refresh.
func (u *UnknownNodeLookup) Refreshed() {
	u.mu.Lock()
	u.round = nil
	u.mu.Unlock()
	absent, logged := u.memo()
	absent.Prune()
	logged.Prune()
}

// ResolveUnknownNode answers NodeGroupForNode for id, an instance id of this
// cloud, by the rule of UnknownNodeLookup. index reads the provider's index:
// the id's group, or the zero G with known set when the snapshot holds the id
// in no group (which costs no lookup). The zero G means "no group".
func ResolveUnknownNode[G comparable](ctx context.Context, u *UnknownNodeLookup, id string, index func(id string) (g G, known bool)) G {
	var none G
	if g, known := index(id); g != none || known {
		return g
	}
	if u.isAbsent(id) {
		return none
	}
	if err := u.lookupOnce(ctx); err != nil {
		u.lookupFailed(id, err)
		return none
	}
	g, known := index(id)
	switch {
	case g != none:
		u.forget(id)
	case !known:
		u.markAbsent(id)
	}
	return g
}

// ResolveNodeGroup is ResolveUnknownNode answered as NodeGroupForNode
// returns it: "no group" is a nil NodeGroup, never a nil *G inside a non-nil
// interface, which the server would take for a group and call.
func ResolveNodeGroup[G interface {
	comparable
	cloudprovider.NodeGroup
}](ctx context.Context, u *UnknownNodeLookup, id string, index func(id string) (g G, known bool)) cloudprovider.NodeGroup {
	var none G
	if g := ResolveUnknownNode(ctx, u, id, index); g != none {
		return g
	}
	return nil
}

// isAbsent reports whether a lookup placed id in no group less than Remember ago.
func (u *UnknownNodeLookup) isAbsent(id string) bool {
	absent, _ := u.memo()
	_, ok := absent.Get(id)
	return ok
}

func (u *UnknownNodeLookup) markAbsent(id string) {
	absent, logged := u.memo()
	absent.Put(id, struct{}{})
	logged.Delete(id)
}

func (u *UnknownNodeLookup) forget(id string) {
	absent, logged := u.memo()
	absent.Delete(id)
	logged.Delete(id)
}

// lookupFailed counts every "no group" answer a failed lookup causes, and
// logs the first one per node.
func (u *UnknownNodeLookup) lookupFailed(id string, err error) {
	if u.Failed != nil {
		u.Failed()
	}
	_, logged := u.memo()
	if logged.PutIfAbsent(id, struct{}{}) {
		klog.ErrorS(err, "Cannot look up a node missing from the snapshot; answering that it is in no node group until the next refresh",
			"provider", u.Provider, "node", id)
	}
}

// lookupOnce runs Lookup unless it already ran (or is running) since the last
// Refreshed, in which case it returns that run's error (waiting for a running
// one, or for ctx).
func (u *UnknownNodeLookup) lookupOnce(ctx context.Context) error {
	u.mu.Lock()
	if c := u.round; c != nil {
		u.mu.Unlock()
		select {
		case <-c.finished:
			return c.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c := &lookupCall{finished: make(chan struct{})}
	u.round = c
	u.mu.Unlock()

	lctx, cancel := lookupContext(ctx)
	if u.Lookup != nil {
		c.err = u.Lookup(lctx)
	}
	cancel()
	close(c.finished)
	return c.err
}

func lookupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, dl.Add(-LookupMargin))
	}
	return context.WithCancel(ctx)
}
