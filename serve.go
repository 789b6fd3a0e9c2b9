package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// serve wires the provider (real or simulated) to the gRPC server and the
// metrics endpoint, serves until ctx ends or SIGTERM/SIGINT arrives, then
// drains. Errors in the configuration come back as configError (exit 2).
func serve(ctx context.Context, cfg *config, reg registry.Registration, addr externalgrpc.Address, stdout io.Writer) error {
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(registry)
	m.SetBuildInfo(version, cfg.provider)

	provider, sim, err := startProvider(ctx, cfg, reg, m, stdout)
	if err != nil {
		return err
	}
	var groupNames map[string]string
	var simState http.Handler
	if sim != nil {
		defer sim.Close()
		groupNames, simState = sim.GroupNames, sim.State
	}

	tlsCfg, err := externalgrpc.ServerTLSConfig(cfg.tlsCert, cfg.tlsKey, cfg.tlsClientCA)
	if err != nil {
		return configError{err}
	}
	lis, err := addr.Listen()
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.address, err)
	}
	srv := externalgrpc.NewServer(provider, externalgrpc.Options{Metrics: m, MaxStaleness: cfg.maxStaleness})
	grpcOpts := []grpc.ServerOption{grpc.ChainUnaryInterceptor(externalgrpc.UnaryInterceptor(m))}
	if tlsCfg != nil {
		grpcOpts = append(grpcOpts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	gs := grpc.NewServer(grpcOpts...)
	protos.RegisterCloudProviderServer(gs, srv)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)

	httpSrv, err := startMetricsServer(cfg.metricsAddress, cfg.profiling, registry, srv, simState, stdout)
	if err != nil {
		lis.Close()
		return err
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	configErr := make(chan error, 1)
	if err := takeFirstSnapshot(ctx, srv, hs, configErr); err != nil {
		lis.Close()
		return err
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- gs.Serve(lis) }()
	startupSummary(ctx, cfg, provider, lis.Addr().String(), tlsCfg != nil, srv.Ready())
	fmt.Fprintf(stdout, "Serving %s on %s%s\n", cfg.provider, displayAddress(addr, lis), tlsNote(tlsCfg != nil))
	if cfg.simulate {
		printBanner(ctx, stdout, selfCommand(os.Args[0]), cfg, provider, groupNames, displayAddress(addr, lis), tlsCfg != nil)
	}

	select {
	case err := <-serveErr:
		return fmt.Errorf("gRPC server: %w", err)
	case err := <-configErr:
		gs.Stop()
		return err
	case <-ctx.Done():
	}
	shutdown(gs, hs, httpSrv, provider, cfg.shutdownTimeout)
	return nil
}

// startProvider builds the provider, or starts the simulated cloud and the
// provider bound to it. The simulation is nil for a real cloud; the caller
// closes it.
func startProvider(ctx context.Context, cfg *config, reg registry.Registration, m *metrics.Metrics, stdout io.Writer) (cloudprovider.CloudProvider, *registry.Simulation, error) {
	opts := cfg.buildOptions(m)
	if !cfg.simulate {
		p, err := reg.Build(ctx, opts)
		if err != nil {
			// Builders never contact the cloud: whatever fails here is the
			// configuration, as --check-config would have said.
			return nil, nil, configError{providerError(cfg.provider, err)}
		}
		// The same warnings --check-config and preflight print.
		for _, w := range reg.ConfigWarnings(cfg.provider, opts) {
			klog.InfoS("Warning: "+w, "provider", cfg.provider)
		}
		return p, nil, nil
	}
	sim, err := reg.Simulate(ctx, opts)
	if err != nil {
		return nil, nil, configError{fmt.Errorf("start simulation: %w", providerError(cfg.provider, err))}
	}
	// The description goes to stdout only; the log's start-up summary is
	// the "Serving externalgrpc" line.
	klog.V(2).InfoS("Simulated cloud started", "provider", cfg.provider, "url", sim.URL)
	fmt.Fprintf(stdout, "Simulating %s: %s\nFake cloud API: %s\n", cfg.provider, sim.Description, sim.URL)
	for _, note := range sim.Deliberate {
		klog.InfoS("Demo data: "+note, "provider", cfg.provider)
	}
	if cfg.simulateFaults != "" {
		klog.InfoS("Simulated cloud injects faults", "provider", cfg.provider, "faults", cfg.simulateFaults)
	}
	return sim.Provider, sim, nil
}

// startupSummary is the one log line that says what this process serves and
// how: an operator reading the log from the start sees the configuration
// that matters in one place.
func startupSummary(ctx context.Context, cfg *config, p cloudprovider.CloudProvider, address string, tls, ready bool) {
	groups, _ := p.NodeGroups(ctx)
	ids := make([]string, 0, len(groups))
	for _, g := range groups {
		ids = append(ids, g.Id(ctx))
	}
	limit := cfg.rateLimit()
	rate := "off"
	if limit.Rate > 0 {
		rate = fmt.Sprintf("%g/s burst %d", limit.Rate, limit.Burst)
	}
	klog.InfoS("Serving externalgrpc", "provider", cfg.provider, "version", version, "simulated", cfg.simulate,
		"address", address, "tls", tls, "mtls", cfg.tlsClientCA != "", "ready", ready, "nodeGroups", ids,
		"maxStaleness", cfg.maxStaleness, "unknownOutcomeWindow", cfg.unknownOutcomeWindow, "cloudRateLimit", rate,
		"priceSheet", cfg.priceSheetPath != "", "metricsAddress", cfg.metricsAddress)
}
