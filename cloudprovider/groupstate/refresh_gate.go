package groupstate

import (
	"context"
	"sync"
)

// RefreshGate serialises a provider's refreshes and gives its unknown-node
// lookup (where that lookup is a refresh, as on clouds that cannot say which
// group holds one instance) the rule that it skips when a refresh is already
// running: that refresh brings the node anyway, and waiting behind it could
// outlast CA's deadline for NodeGroupForNode.
type RefreshGate struct {
	mu sync.Mutex
}

// Run runs refresh after any refresh already running.
func (g *RefreshGate) Run(ctx context.Context, refresh func(context.Context) error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return refresh(ctx)
}

// RunUnlessBusy runs refresh only when no other refresh is running, and
// otherwise returns nil at once.
func (g *RefreshGate) RunUnlessBusy(ctx context.Context, refresh func(context.Context) error) error {
	if !g.mu.TryLock() {
		return nil
	}
	defer g.mu.Unlock()
	return refresh(ctx)
}
