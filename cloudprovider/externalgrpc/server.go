package externalgrpc

import (
	"context"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/reporting"
)

// This file builds the server and holds what every handler shares; the
// handlers are in reads.go, pricing.go and mutations.go, the refresh runner
// in refresh.go.

// Options tunes a Server.
type Options struct {
	// Metrics receives request and size metrics; nil records nothing.
	Metrics *metrics.Metrics
	// RefreshTimeout bounds one provider refresh running in the background
	// (default 2m). It is independent of CA's per-RPC deadline.
	RefreshTimeout time.Duration
	// RefreshMargin is how long before CA's deadline a Refresh RPC stops waiting
	// for a slow refresh and answers from the last snapshot (default 500ms).
	RefreshMargin time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxStaleness is the oldest data the provider serves (--max-staleness);
	// NodeGroups answers carry it in the MaxStalenessHeader header, so
	// inspect can show it. Zero sends nothing.
	MaxStaleness time.Duration
}

// MaxStalenessHeader is the response header of NodeGroups that carries the
// server's --max-staleness, as a Go duration.
const MaxStalenessHeader = "x-cap-max-staleness"

// Server adapts a cloudprovider.CloudProvider to the externalgrpc service.
type Server struct {
	protos.UnimplementedCloudProviderServer
	// refresher runs the provider's refreshes; it gives the server Ready,
	// RefreshOnce and RefreshUntilReady.
	refresher

	// provider is the provider wrapped by reporting.Wrap. Handlers and the
	// refresh runner go through it, so every refresh and mutation is
	// reported.
	provider *reporting.Provider
	opts     Options

	// seenLegacy and seenCurrent record whether a CA of that protocol
	// generation has been logged (once each).
	seenLegacy, seenCurrent atomic.Bool
}

// NewServer returns a server for provider.
func NewServer(provider cloudprovider.CloudProvider, opts Options) *Server {
	if opts.RefreshTimeout <= 0 {
		opts.RefreshTimeout = 2 * time.Minute
	}
	if opts.RefreshMargin <= 0 {
		opts.RefreshMargin = 500 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	reported := reporting.Wrap(provider, opts.Metrics)
	return &Server{
		refresher: refresher{provider: reported, timeout: opts.RefreshTimeout, now: opts.Now},
		provider:  reported,
		opts:      opts,
	}
}

// group resolves a request's group id against the current snapshot.
func (s *Server) group(ctx context.Context, id string) (cloudprovider.NodeGroup, error) {
	if id == "" {
		return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group id is empty")
	}
	return s.provider.NodeGroup(ctx, id)
}

func pbGroup(ctx context.Context, g cloudprovider.NodeGroup) *protos.NodeGroup {
	debug := cloudprovider.WithManaged(g.Debug(ctx), g.Status(ctx).Managed)
	return &protos.NodeGroup{Id: g.Id(ctx), MinSize: int32(g.MinSize(ctx)), MaxSize: int32(g.MaxSize(ctx)), Debug: debug}
}

// apiNode rebuilds the four Node fields the client forwards.
func apiNode(n *protos.ExternalGrpcNode) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.GetName(), Labels: n.GetLabels(), Annotations: n.GetAnnotations()},
		Spec:       corev1.NodeSpec{ProviderID: n.GetProviderID()},
	}
}

func checkNode(n *protos.ExternalGrpcNode) error {
	if n == nil {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node is missing")
	}
	if n.GetProviderID() == "" && n.GetName() == "" {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node has neither providerID nor name")
	}
	return nil
}
