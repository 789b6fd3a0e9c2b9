package refresh

import (
	"context"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// lookupMargin is how long before the caller's deadline a lookup gives
// up, so NodeGroupForNode still answers in time when the API is slow.
const lookupMargin = 500 * time.Millisecond

// UnknownNodeLookup answers NodeGroupForNode for a node of this cloud the
// provider's index lacks (new since the last Refresh, or in no group):
//
//   - one listing (Lookup) answers for every such node, at most once per
//     Refresh, shared by all callers;
//   - an id the listing places in no group is answered "no group" without
//     a call for Remember: CA asks about every node in every loop and
//     caches no such answer;
//   - a failed lookup answers "no group", never an error, since CA aborts
//     its loop on an error here; the failure is counted and logged once
//     per node.
//
// Set the exported fields before first use; each zero value works.
type UnknownNodeLookup struct {
	Provider string
	// Lookup lists the cloud and adds what it finds to the provider's
	// index. Its context ends lookupMargin before the caller's deadline.
	Lookup func(ctx context.Context) error
	// Remember is how long an id in no group is answered without a lookup
	// (--max-staleness; zero means DefaultMaxStaleness).
	Remember time.Duration
	// Now is the clock (nil means time.Now).
	Now func() time.Time
	// Failed, when set, counts each "no group" answer a failed lookup
	// causes.
	Failed func()

	mu sync.Mutex
	// round is this Refresh's lookup, nil until one ran.
	round *lookupCall
	// memory is made on first use, with Remember and Now as set then.
	memory sync.Once
	// absent holds the ids the last lookups placed in no group.
	absent *TTLCache[string, struct{}]
	// logged holds the ids whose failed lookup was logged.
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

// memo returns the absent and logged memories.
func (u *UnknownNodeLookup) memo() (absent, logged *TTLCache[string, struct{}]) {
	u.memory.Do(func() {
		u.absent = NewTTLCache[string, struct{}](u.remember(), u.now)
		u.logged = NewTTLCache[string, struct{}](u.remember(), u.now)
	})
	return u.absent, u.logged
}

// Refreshed allows one more lookup; the provider calls it after each
// successful Refresh.
func (u *UnknownNodeLookup) Refreshed() {
	u.mu.Lock()
	u.round = nil
	u.mu.Unlock()
	absent, logged := u.memo()
	absent.prune()
	logged.prune()
}

// resolveUnknownNode answers NodeGroupForNode for id. index reads the
// provider's index: the id's group, or the zero G with known set when the
// snapshot holds the id in no group. The zero G means "no group".
func resolveUnknownNode[G comparable](ctx context.Context, u *UnknownNodeLookup, id string, index func(id string) (g G, known bool)) G {
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

// ResolveNodeGroup answers NodeGroupForNode for id, an instance id of
// this cloud, by the rules of u. index reads the provider's index: the
// id's group, or nil with known set when the snapshot holds the id in no
// group. "No group" is a nil NodeGroup, never a nil *G in an interface.
func ResolveNodeGroup[G interface {
	comparable
	cloudprovider.NodeGroup
}](ctx context.Context, u *UnknownNodeLookup, id string, index func(id string) (g G, known bool)) cloudprovider.NodeGroup {
	var none G
	if g := resolveUnknownNode(ctx, u, id, index); g != none {
		return g
	}
	return nil
}

// isAbsent reports whether a lookup placed id in no group within Remember.
func (u *UnknownNodeLookup) isAbsent(id string) bool {
	absent, _ := u.memo()
	_, ok := absent.get(id)
	return ok
}

func (u *UnknownNodeLookup) markAbsent(id string) {
	absent, logged := u.memo()
	absent.put(id, struct{}{})
	logged.drop(id)
}

func (u *UnknownNodeLookup) forget(id string) {
	absent, logged := u.memo()
	absent.drop(id)
	logged.drop(id)
}

// lookupFailed counts a "no group" answer a failed lookup causes, and
// logs the first per node.
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

// lookupOnce runs Lookup unless it ran since the last Refreshed; then it
// returns that run's error, waiting for it if it still runs.
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
		return context.WithDeadline(ctx, dl.Add(-lookupMargin))
	}
	return context.WithCancel(ctx)
}
