package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

// startupRefreshTimeout bounds the first snapshot taken before serving.
const startupRefreshTimeout = 30 * time.Second

// readiness is what /readyz and the gRPC health service report.
type readiness interface{ Ready() bool }

// metricsMux serves /metrics, /healthz (the process is up) and /readyz (a
// cloud snapshot has been taken); with profiling, Go's pprof under
// /debug/pprof/ as CA's --profiling does (without cmdline, which profiles
// do not need and which would echo the flags). The handlers go on this mux
// explicitly: importing net/http/pprof registers them on
// http.DefaultServeMux too, which nothing here serves. simState, under
// --simulate only, serves the simulated cloud's own state read-only at
// simcloud.StatePath, so a driver outside the process can check it.
func metricsMux(registry *prometheus.Registry, ready readiness, profiling bool, simState http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	if simState != nil {
		mux.Handle(simcloud.StatePath, simState)
	}
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Ready() {
			http.Error(w, "no successful refresh yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

// startMetricsServer listens on address ("" disables it and returns nil).
func startMetricsServer(address string, profiling bool, registry *prometheus.Registry, ready readiness, simState http.Handler, stdout io.Writer) (*http.Server, error) {
	if address == "" {
		return nil, nil
	}
	mlis, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("listen on --metrics-address %s: %w", address, err)
	}
	httpSrv := &http.Server{Handler: metricsMux(registry, ready, profiling, simState), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = httpSrv.Serve(mlis) }()
	klog.InfoS("Serving metrics", "address", mlis.Addr().String(), "profiling", profiling)
	fmt.Fprintf(stdout, "Metrics on http://%s/metrics\n", mlis.Addr())
	return httpSrv, nil
}

// setServing reports st for the whole server and for the CloudProvider service.
func setServing(hs *health.Server, st healthpb.HealthCheckResponse_ServingStatus) {
	hs.SetServingStatus("", st)
	hs.SetServingStatus(protos.CloudProvider_ServiceDesc.ServiceName, st)
}

// takeFirstSnapshot refreshes once before serving, because CA asks
// NodeGroups, NodeGroupForNode and GPULabel before its first Refresh. If the
// cloud is down, the server serves anyway (not ready) and keeps trying in
// the background until ctx ends. A configuration error (a --nodes spec
// matching nothing at the first listing) is returned at once, or sent to
// configErr when the first listing succeeds only later, so main exits 2.
func takeFirstSnapshot(ctx context.Context, srv *externalgrpc.Server, hs *health.Server, configErr chan<- error) error {
	startCtx, cancel := context.WithTimeout(ctx, startupRefreshTimeout)
	err := srv.RefreshOnce(startCtx)
	cancel()
	if errors.Is(err, cloudprovider.ErrConfig) {
		return err
	}
	if err == nil {
		setServing(hs, healthpb.HealthCheckResponse_SERVING)
		return nil
	}
	klog.ErrorS(err, "Initial refresh failed; serving not-ready and retrying")
	setServing(hs, healthpb.HealthCheckResponse_NOT_SERVING)
	go func() {
		if err := srv.RefreshUntilReady(ctx, nil); err != nil {
			configErr <- err
			return
		}
		if srv.Ready() {
			setServing(hs, healthpb.HealthCheckResponse_SERVING)
		}
	}()
	return nil
}
