package main

import (
	"context"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// Bounds for the steps after the gRPC drain, which have their own
// --shutdown-timeout.
const (
	metricsShutdownTimeout = 2 * time.Second
	cleanupTimeout         = 5 * time.Second
)

// shutdown marks the server not serving, lets in-flight RPCs finish for up to
// drainTimeout (then cuts them), stops the metrics endpoint and releases the
// provider.
func shutdown(gs *grpc.Server, hs *health.Server, httpSrv *http.Server, provider cloudprovider.CloudProvider, drainTimeout time.Duration) {
	klog.InfoS("Shutting down, draining in-flight RPCs", "timeout", drainTimeout)
	hs.Shutdown()
	drained := make(chan struct{})
	go func() { gs.GracefulStop(); close(drained) }()
	timer := time.NewTimer(drainTimeout)
	select {
	case <-drained:
		timer.Stop()
	case <-timer.C:
		gs.Stop()
	}
	if httpSrv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), metricsShutdownTimeout)
		_ = httpSrv.Shutdown(sctx)
		cancel()
	}
	cctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := provider.Cleanup(cctx); err != nil {
		klog.ErrorS(err, "Provider cleanup failed")
	}
	klog.Flush()
}
