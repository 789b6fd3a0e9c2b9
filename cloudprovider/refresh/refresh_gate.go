package refresh

import (
	"context"
	"sync"
)

// Gate serialises a provider's refreshes. A node lookup that is a
// refresh skips while one runs: that refresh brings the node anyway, and
// waiting could outlast CA's deadline.
type Gate struct {
	mu sync.Mutex
}

// Run runs refresh after any refresh already running.
func (g *Gate) Run(ctx context.Context, refresh func(context.Context) error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return refresh(ctx)
}

// RunUnlessBusy runs refresh unless one is running; then it returns nil.
func (g *Gate) RunUnlessBusy(ctx context.Context, refresh func(context.Context) error) error {
	if !g.mu.TryLock() {
		return nil
	}
	defer g.mu.Unlock()
	return refresh(ctx)
}
