package cloudprovider

import (
	"context"
	"sync"
	"time"
)

// LookupMargin is how long before the caller's deadline a lookup for an
// unknown node gives up, so NodeGroupForNode answers (with an error CA logs)
// while CA still listens instead of running into its deadline when the API
// is slow (found by hack/soak on Exoscale).
const LookupMargin = 500 * time.Millisecond

// UnknownNodeLookup is the one rule for a NodeGroupForNode whose providerID
// belongs to this cloud but is not in the snapshot (a node launched since the
// last Refresh, by us or by another actor): the provider looks it up in the
// cloud at once, so the node heals without waiting a refresh cycle, but at
// most once per key per Refresh, so a node that belongs to no group (or a
// failing API) never costs a call per RPC. The key is the instance id where
// the cloud can be asked about one instance, or one constant where a single
// listing answers for every node (the lookup then runs once per Refresh).
type UnknownNodeLookup struct {
	mu   sync.Mutex
	done map[string]*lookupCall
}

type lookupCall struct {
	finished chan struct{}
	err      error
}

// Refreshed starts a new round: every key may be looked up once more. The
// provider calls it at the end of each successful Refresh.
func (u *UnknownNodeLookup) Refreshed() {
	u.mu.Lock()
	u.done = nil
	u.mu.Unlock()
}

// Do runs lookup for key unless it already ran (or is running) since the
// last Refreshed, in which case it returns that run's error (waiting for a
// running one, or for ctx). lookup gets a context that ends LookupMargin
// before ctx's deadline; it records what it found in the provider's index,
// where the caller reads it afterwards. ran tells whether this call made the
// lookup.
func (u *UnknownNodeLookup) Do(ctx context.Context, key string, lookup func(ctx context.Context) error) (ran bool, err error) {
	u.mu.Lock()
	if c, ok := u.done[key]; ok {
		u.mu.Unlock()
		select {
		case <-c.finished:
			return false, c.err
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if u.done == nil {
		u.done = map[string]*lookupCall{}
	}
	c := &lookupCall{finished: make(chan struct{})}
	u.done[key] = c
	u.mu.Unlock()

	lctx, cancel := lookupContext(ctx)
	c.err = lookup(lctx)
	cancel()
	close(c.finished)
	return true, c.err
}

func lookupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, dl.Add(-LookupMargin))
	}
	return context.WithCancel(ctx)
}
