// Command cluster-autoscaler-provider serves Vultr, Volcengine and Exoscale
// node groups to the unmodified upstream Cluster Autoscaler through its
// externalgrpc cloud provider.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/inspect"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	_ "github.com/ca-providers/cluster-autoscaler-provider/router"
)

// startupRefreshTimeout bounds the first snapshot taken before serving.
const startupRefreshTimeout = 30 * time.Second

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

type config struct {
	provider        string
	cloudConfig     string
	nodes           stringList
	autoDiscovery   stringList
	address         string
	tlsCert         string
	tlsKey          string
	tlsClientCA     string
	metricsAddress  string
	insecure        bool
	simulate        bool
	checkConfig     bool
	showVersion     bool
	shutdownTimeout time.Duration
	priceSheetPath  string
	// priceSheet is --price-sheet as loaded by validate.
	priceSheet *cloudprovider.PriceSheet
}

func newFlagSet(cfg *config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cluster-autoscaler-provider", flag.ContinueOnError)
	fs.SetOutput(stderr)
	providers := cloudprovider.CloudProviders()
	fs.StringVar(&cfg.provider, "cloud-provider", defaultProvider(providers), fmt.Sprintf("cloud provider to serve, one of: %s", strings.Join(providers, ", ")))
	fs.StringVar(&cfg.cloudConfig, "cloud-config", "", "path to the provider's configuration file")
	fs.Var(&cfg.nodes, "nodes", "node group as min:max:<id or name>; repeatable")
	fs.Var(&cfg.autoDiscovery, "node-group-auto-discovery", "provider-specific node group discovery spec; repeatable")
	fs.StringVar(&cfg.address, "address", "127.0.0.1:8086", "gRPC listen address: host:port, unix:/path or unix:///path")
	fs.StringVar(&cfg.tlsCert, "tls-cert-file", "", "server certificate (PEM); enables TLS")
	fs.StringVar(&cfg.tlsKey, "tls-key-file", "", "server private key (PEM)")
	fs.StringVar(&cfg.tlsClientCA, "tls-client-ca-file", "", "CA bundle (PEM) for client certificates; enables mTLS (client certificates required)")
	fs.StringVar(&cfg.metricsAddress, "metrics-address", ":8087", "HTTP address for /metrics, /healthz and /readyz; empty disables")
	fs.BoolVar(&cfg.insecure, "insecure", false, "allow plaintext gRPC on a non-loopback TCP address")
	fs.BoolVar(&cfg.simulate, "simulate", false, "serve the provider against an embedded fake of its cloud seeded with a demo cluster (no account needed)")
	fs.BoolVar(&cfg.checkConfig, "check-config", false, "validate flags and provider configuration without contacting the cloud, then exit")
	fs.BoolVar(&cfg.showVersion, "version", false, "print the version and exit")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 20*time.Second, "how long SIGTERM waits for in-flight RPCs")
	fs.StringVar(&cfg.priceSheetPath, "price-sheet", "", "file of hourly prices per instance type (see docs/pricing.md); enables NodePrice/PodPrice on Volcengine and Exoscale and replaces Vultr's API prices")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	klogFlags.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	return fs
}

// defaultProvider is the only compiled-in provider, if there is exactly one.
func defaultProvider(providers []string) string {
	if len(providers) == 1 {
		return providers[0]
	}
	return ""
}

// validate checks everything that can be checked without building the provider.
func (c *config) validate() (cloudprovider.Registration, externalgrpc.Address, error) {
	providers := cloudprovider.CloudProviders()
	if c.provider == "" {
		return cloudprovider.Registration{}, externalgrpc.Address{}, fmt.Errorf("--cloud-provider is required: choose one of %s", strings.Join(providers, ", "))
	}
	reg, ok := cloudprovider.Lookup(c.provider)
	if !ok {
		return reg, externalgrpc.Address{}, fmt.Errorf("--cloud-provider %q is not compiled in: choose one of %s", c.provider, strings.Join(providers, ", "))
	}
	if _, err := cloudprovider.ParseNodeGroupSpecs(c.nodes); err != nil {
		return reg, externalgrpc.Address{}, err
	}
	addr, err := externalgrpc.ParseAddress(c.address)
	if err != nil {
		return reg, addr, err
	}
	if c.tlsCert == "" && !addr.Local() && !c.insecure {
		return reg, addr, fmt.Errorf("--address %s is reachable from other hosts: give --tls-cert-file/--tls-key-file (and --tls-client-ca-file), or --insecure to serve plaintext", c.address)
	}
	if c.simulate && reg.Simulate == nil {
		return reg, addr, fmt.Errorf("--simulate: provider %q has no simulator", c.provider)
	}
	if c.priceSheetPath != "" {
		if c.priceSheet, err = cloudprovider.LoadPriceSheet(c.priceSheetPath); err != nil {
			return reg, addr, err
		}
	}
	return reg, addr, nil
}

func (c *config) buildOptions(m *metrics.Metrics) cloudprovider.BuildOptions {
	return cloudprovider.BuildOptions{
		CloudConfig:                 c.cloudConfig,
		NodeGroupSpecs:              c.nodes,
		NodeGroupAutoDiscoverySpecs: c.autoDiscovery,
		UserAgent:                   "cluster-autoscaler-provider/" + version,
		InstrumentTransport:         m.InstrumentTransport(c.provider),
		PriceSheet:                  c.priceSheet,
		ReportUnmatchedSpecs:        m.SetUnmatchedSpecs,
	}
}

// run is main without the exit, so tests can drive it. Errors are one line on
// stderr; the exit code is 2 for bad flags and configuration, 1 at run time.
// "inspect" as the first argument runs the client subcommand instead.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == inspect.Command {
		return inspect.Main(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == inspect.ProbeCommand {
		return inspect.ProbeMain(ctx, args[1:], stdout, stderr)
	}
	var cfg config
	fs := newFlagSet(&cfg, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "error: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	if cfg.showVersion {
		fmt.Fprintf(stdout, "cluster-autoscaler-provider %s (providers: %s)\n", version, strings.Join(cloudprovider.CloudProviders(), ","))
		return 0
	}
	reg, addr, err := cfg.validate()
	if err == nil {
		_, err = externalgrpc.ServerTLSConfig(cfg.tlsCert, cfg.tlsKey, cfg.tlsClientCA)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
		return 2
	}
	if cfg.checkConfig {
		if cfg.simulate {
			fmt.Fprintf(stdout, "configuration OK (simulated %s)\n", cfg.provider)
			return 0
		}
		check := reg.CheckConfig
		if check == nil {
			check = func(opts cloudprovider.BuildOptions) error {
				// Builders never contact the cloud, so building is a config check.
				p, err := reg.Build(ctx, opts)
				if err == nil {
					_ = p.Cleanup(ctx)
				}
				return err
			}
		}
		if err := check(cfg.buildOptions(nil)); err != nil {
			fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
			return 2
		}
		fmt.Fprintf(stdout, "configuration OK for %s\n", cfg.provider)
		return 0
	}
	if err := serve(ctx, &cfg, reg, addr, stdout); err != nil {
		fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
		if errors.Is(err, cloudprovider.ErrConfig) {
			return 2
		}
		return 1
	}
	return 0
}

// oneLine folds an error (possibly several joined with errors.Join) into one
// line, keeping the joined messages apart.
func oneLine(err error) string {
	parts := strings.Split(err.Error(), "\n")
	for i, p := range parts {
		parts[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(parts, "; ")
}

func serve(ctx context.Context, cfg *config, reg cloudprovider.Registration, addr externalgrpc.Address, stdout io.Writer) error {
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(registry)
	opts := cfg.buildOptions(m)

	var provider cloudprovider.CloudProvider
	if cfg.simulate {
		sim, err := reg.Simulate(ctx, opts)
		if err != nil {
			return fmt.Errorf("start simulation: %w", err)
		}
		defer sim.Close()
		provider = sim.Provider
		klog.InfoS("Simulated cloud started", "provider", cfg.provider, "url", sim.URL, "description", sim.Description)
		fmt.Fprintf(stdout, "Simulating %s: %s\nFake cloud API: %s\n", cfg.provider, sim.Description, sim.URL)
	} else {
		p, err := reg.Build(ctx, opts)
		if err != nil {
			return fmt.Errorf("build provider %s: %w", cfg.provider, err)
		}
		provider = p
	}

	tlsCfg, err := externalgrpc.ServerTLSConfig(cfg.tlsCert, cfg.tlsKey, cfg.tlsClientCA)
	if err != nil {
		return err
	}
	lis, err := addr.Listen()
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.address, err)
	}
	srv := externalgrpc.NewServer(provider, externalgrpc.Options{Metrics: m})
	grpcOpts := []grpc.ServerOption{grpc.ChainUnaryInterceptor(externalgrpc.UnaryInterceptor(m))}
	if tlsCfg != nil {
		grpcOpts = append(grpcOpts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	gs := grpc.NewServer(grpcOpts...)
	protos.RegisterCloudProviderServer(gs, srv)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)

	var httpSrv *http.Server
	if cfg.metricsAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if !srv.Ready() {
				http.Error(w, "no successful refresh yet", http.StatusServiceUnavailable)
				return
			}
			_, _ = io.WriteString(w, "ok\n")
		})
		mlis, err := net.Listen("tcp", cfg.metricsAddress)
		if err != nil {
			lis.Close()
			return fmt.Errorf("listen on --metrics-address %s: %w", cfg.metricsAddress, err)
		}
		httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = httpSrv.Serve(mlis) }()
		klog.InfoS("Serving metrics", "address", mlis.Addr().String())
		fmt.Fprintf(stdout, "Metrics on http://%s/metrics\n", mlis.Addr())
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	setServing := func(st healthpb.HealthCheckResponse_ServingStatus) {
		hs.SetServingStatus("", st)
		hs.SetServingStatus(protos.CloudProvider_ServiceDesc.ServiceName, st)
	}
	// CA asks NodeGroups, NodeGroupForNode and GPULabel before its first
	// Refresh, so take the first snapshot before serving. If the cloud is down,
	// serve anyway (not ready) and keep trying in the background.
	serveErr := make(chan error, 2)
	startCtx, cancelStart := context.WithTimeout(ctx, startupRefreshTimeout)
	err = srv.RefreshOnce(startCtx)
	cancelStart()
	if errors.Is(err, cloudprovider.ErrConfig) {
		lis.Close()
		return err
	}
	if err != nil {
		klog.ErrorS(err, "Initial refresh failed; serving not-ready and retrying")
		setServing(healthpb.HealthCheckResponse_NOT_SERVING)
		go func() {
			if err := srv.RefreshUntilReady(ctx, nil); err != nil {
				serveErr <- err
				return
			}
			if srv.Ready() {
				setServing(healthpb.HealthCheckResponse_SERVING)
			}
		}()
	} else {
		setServing(healthpb.HealthCheckResponse_SERVING)
	}

	go func() { serveErr <- gs.Serve(lis) }()
	klog.InfoS("Serving externalgrpc", "provider", cfg.provider, "address", lis.Addr().String(), "tls", tlsCfg != nil, "mtls", cfg.tlsClientCA != "", "version", version)
	fmt.Fprintf(stdout, "Serving %s on %s%s\n", cfg.provider, displayAddress(addr, lis), tlsNote(tlsCfg != nil))
	if cfg.simulate {
		printBanner(ctx, stdout, selfCommand(os.Args[0]), cfg, provider, displayAddress(addr, lis), tlsCfg != nil)
	}

	select {
	case err := <-serveErr:
		if errors.Is(err, cloudprovider.ErrConfig) {
			gs.Stop()
			return err
		}
		return fmt.Errorf("gRPC server: %w", err)
	case <-ctx.Done():
	}
	klog.InfoS("Shutting down, draining in-flight RPCs", "timeout", cfg.shutdownTimeout)
	hs.Shutdown()
	drained := make(chan struct{})
	go func() { gs.GracefulStop(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(cfg.shutdownTimeout):
		gs.Stop()
	}
	if httpSrv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = httpSrv.Shutdown(sctx)
		cancel()
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := provider.Cleanup(cctx); err != nil {
		klog.ErrorS(err, "Provider cleanup failed")
	}
	klog.Flush()
	return nil
}

// printBanner tells a first-time user what is running and what to try next.
// The suggested scale-up names a real group with room to grow, so it can be
// pasted as is; make demo reads the same line.
func printBanner(ctx context.Context, w io.Writer, self string, cfg *config, p cloudprovider.CloudProvider, address string, tls bool) {
	conn := ""
	if address != inspect.DefaultAddress {
		conn = " --address " + address
	}
	if tls {
		conn += " --tls-ca-file <CA of the server certificate>"
		if cfg.tlsClientCA != "" {
			conn += " --tls-cert-file <client cert> --tls-key-file <client key>"
		}
	}
	fmt.Fprintf(w, "\nSimulated %s is ready: an in-process fake of the cloud API, no account or network needed. Node groups:\n", cfg.provider)
	groups, err := p.NodeGroups(ctx)
	if err != nil {
		groups = nil
	}
	// Suggest the group with the most room, so the scale-up is accepted.
	pick, room := "", 0
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, g := range groups {
		target, _ := g.TargetSize(ctx)
		fmt.Fprintf(tw, "  %s\tmin %d, max %d, target %d\n", g.Id(ctx), g.MinSize(ctx), g.MaxSize(ctx), target)
		if r := g.MaxSize(ctx) - target; r > room {
			pick, room = g.Id(ctx), r
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "Try next, in another terminal:")
	fmt.Fprintf(w, "  %s %s%s\n", self, inspect.Command, conn)
	if pick != "" {
		fmt.Fprintf(w, "  %s %s%s --scale-up %s=1\n", self, inspect.Command, conn, pick)
	}
	fmt.Fprintf(w, "Point a Cluster Autoscaler here with --cloud-provider=externalgrpc and a --cloud-config file holding \"address: %s\". Stop with Ctrl-C.\n", address)
}

// selfCommand is how the user started this binary: "go run ." from a go run
// build directory, the path they typed otherwise.
func selfCommand(arg0 string) string {
	if strings.Contains(arg0, string(filepath.Separator)+"go-build") {
		return "go run ."
	}
	return arg0
}

func displayAddress(a externalgrpc.Address, lis net.Listener) string {
	if a.Network == "unix" {
		return "unix://" + a.Addr
	}
	return lis.Addr().String()
}

func tlsNote(tls bool) string {
	if tls {
		return " (TLS)"
	}
	return " (plaintext)"
}
