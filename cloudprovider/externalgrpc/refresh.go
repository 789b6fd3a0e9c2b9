package externalgrpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// refresher runs provider refreshes in the background, one at a time, each
// bounded by its own timeout rather than by CA's per-RPC deadline, so a slow
// cloud never fails CA's loop and a refresh is never abandoned half-way.
type refresher struct {
	// provider is the server's provider wrapped by reporting.Wrap, so each
	// Refresh is reported.
	provider cloudprovider.CloudProvider
	timeout  time.Duration
	now      func() time.Time

	mu      sync.Mutex
	current *refreshRun
	ready   atomic.Bool
}

type refreshRun struct {
	done chan struct{}
	err  error
}

// Ready reports whether a refresh has succeeded at least once.
func (r *refresher) Ready() bool { return r.ready.Load() }

// The two log messages of a failed refresh; which one applies depends on
// whether a refresh ever succeeded, since that decides what is served
// meanwhile.
const (
	msgRefreshFailedLastGood   = "Refresh failed, serving the last good snapshot"
	msgRefreshFailedNoSnapshot = "Refresh failed and none has succeeded yet: no snapshot to serve; until one succeeds, the Refresh RPC answers this error, NodeGroups answers no node groups and the server reports not ready"
)

// failedMessage is the log message of a refresh that just failed.
func (r *refresher) failedMessage() string {
	if r.Ready() {
		return msgRefreshFailedLastGood
	}
	return msgRefreshFailedNoSnapshot
}

// triggerRefresh starts a provider refresh unless one is running, and returns
// the run to wait for. Concurrent callers share one run, so back-to-back
// Refresh RPCs never stack cloud calls.
func (r *refresher) triggerRefresh() *refreshRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != nil {
		select {
		case <-r.current.done:
		default:
			return r.current
		}
	}
	run := &refreshRun{done: make(chan struct{})}
	r.current = run
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		defer cancel()
		start := r.now()
		err := r.provider.Refresh(ctx)
		if err != nil {
			klog.ErrorS(err, r.failedMessage(), "provider", r.provider.Name())
		} else {
			r.ready.Store(true)
			klog.V(4).InfoS("Refreshed", "provider", r.provider.Name(), "duration", r.now().Sub(start))
		}
		run.err = err
		close(run.done)
	}()
	return run
}

// RefreshOnce runs a refresh and waits for it (or ctx); main uses it at start-up.
func (r *refresher) RefreshOnce(ctx context.Context) error {
	run := r.triggerRefresh()
	select {
	case <-run.done:
		return run.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RefreshUntilReady refreshes at start-up, retrying with backoff until the
// first success or until ctx ends, so reads are served before CA's first
// Refresh (CA asks NodeGroups, NodeGroupForNode and GPULabel before it). A
// configuration error (cloudprovider.ErrConfig) stops the retries and is
// returned, so main can exit 2.
func (r *refresher) RefreshUntilReady(ctx context.Context, sleep func(context.Context, time.Duration) error) error {
	if sleep == nil {
		sleep = cloudhttp.SleepContext
	}
	backoff := time.Second
	for !r.Ready() {
		err := r.RefreshOnce(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, cloudprovider.ErrConfig) {
			return err
		}
		if sleep(ctx, backoff) != nil {
			return nil
		}
		if backoff < 30*time.Second {
			backoff *= 2
		}
	}
	return nil
}

// Refresh implements the Refresh RPC. The provider refresh runs in the
// background; the RPC waits for it until shortly before CA's deadline. If it
// is still running then, the RPC answers OK and the last snapshot is still
// served, because a Refresh error aborts CA's whole loop.
func (s *Server) Refresh(ctx context.Context, _ *protos.RefreshRequest) (*protos.RefreshResponse, error) {
	run := s.triggerRefresh()
	wait := 4500 * time.Millisecond
	if deadline, ok := ctx.Deadline(); ok {
		wait = deadline.Sub(s.opts.Now()) - s.opts.RefreshMargin
	}
	if wait <= 0 {
		wait = time.Millisecond
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-run.done:
		if run.err != nil {
			return nil, toStatus(fmt.Errorf("refresh %s: %w", s.provider.Name(), run.err), false)
		}
		return &protos.RefreshResponse{}, nil
	case <-timer.C:
		klog.InfoS("Refresh still running at CA's deadline, answering from the last snapshot", "provider", s.provider.Name())
		return &protos.RefreshResponse{}, nil
	case <-ctx.Done():
		return nil, toStatus(ctx.Err(), false)
	}
}
