// Command cluster-autoscaler-provider serves Vultr, Volcengine and Exoscale
// node groups to the unmodified upstream Cluster Autoscaler through its
// externalgrpc cloud provider.
//
// The package is split by concern: main.go parses flags and maps errors to
// exit codes, serve.go wires the provider to the gRPC server, health.go holds
// readiness and the metrics endpoint, shutdown.go the drain on SIGTERM, and
// banner.go what --simulate prints for a first-time user.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
	_ "github.com/ca-providers/cluster-autoscaler-provider/router"
)

// version is what --version prints: the release (release.go) unless a
// build stamps another with -ldflags "-X main.version=...".
var version = release

// defaultMetricsAddress keeps /metrics on the loopback interface unless the
// operator opens it: the examples set --metrics-address=:8087 explicitly so
// Prometheus and the kubelet can reach it on the pod IP.
const defaultMetricsAddress = "127.0.0.1:8087"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

type config struct {
	provider             string
	cloudConfig          string
	nodes                stringList
	autoDiscovery        stringList
	address              string
	tlsCert              string
	tlsKey               string
	tlsClientCA          string
	metricsAddress       string
	cloudRateLimit       string
	maxStaleness         time.Duration
	insecure             bool
	simulate             bool
	simulateFaults       string
	simulateCloudAddress string
	checkConfig          bool
	showVersion          bool
	profiling            bool
	shutdownTimeout      time.Duration
	priceSheetPath       string
	// unknownOutcomeWindow is --unknown-outcome-window.
	unknownOutcomeWindow time.Duration
	// priceSheet is --price-sheet as loaded by validate.
	priceSheet *groupconfig.PriceSheet
}

func newFlagSet(cfg *config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cluster-autoscaler-provider", flag.ContinueOnError)
	fs.SetOutput(stderr)
	providers := registry.CloudProviders()
	fs.StringVar(&cfg.provider, "cloud-provider", defaultProvider(providers), fmt.Sprintf("cloud provider to serve, one of: %s", strings.Join(providers, ", ")))
	fs.StringVar(&cfg.cloudConfig, "cloud-config", "", "path to the provider's configuration file")
	fs.Var(&cfg.nodes, "nodes", "node group as min:max:<id or name>; repeatable")
	fs.Var(&cfg.autoDiscovery, "node-group-auto-discovery", "provider-specific node group discovery spec; repeatable")
	fs.StringVar(&cfg.address, "address", "127.0.0.1:8086", "gRPC listen address: host:port, unix:/path or unix:///path")
	fs.StringVar(&cfg.tlsCert, "tls-cert-file", "", "server certificate (PEM); enables TLS")
	fs.StringVar(&cfg.tlsKey, "tls-key-file", "", "server private key (PEM)")
	fs.StringVar(&cfg.tlsClientCA, "tls-client-ca-file", "", "CA bundle (PEM) for client certificates; enables mTLS (client certificates required)")
	fs.StringVar(&cfg.metricsAddress, "metrics-address", defaultMetricsAddress, "HTTP address for /metrics, /healthz and /readyz (loopback unless set, e.g. :8087 in a pod); empty disables")
	fs.StringVar(&cfg.cloudRateLimit, "cloud-api-rate-limit", "", "client-side limit on cloud API calls as RATE or RATE:BURST (requests per second); empty takes the cloud's default (Vultr's documented 30/s; 10/s for Volcengine and Exoscale, which publish no number), off disables it")
	fs.DurationVar(&cfg.maxStaleness, "max-staleness", refresh.DefaultMaxStaleness, "oldest data the server may serve: a refresh that finds nothing changed in the cloud's group list reuses earlier detailed reads (instance listings) only while they are younger than this; 10s to 1h")
	fs.BoolVar(&cfg.insecure, "insecure", false, "allow plaintext gRPC on a non-loopback TCP address")
	fs.BoolVar(&cfg.simulate, "simulate", false, "serve the provider against an embedded fake of its cloud seeded with a demo cluster (no account needed)")
	fs.StringVar(&cfg.simulateFaults, "simulate-faults", "", "with --simulate, make the simulated cloud misbehave: kind:rate entries (kinds: "+simcloud.FaultKinds()+") and hold=DURATION for the slow kinds (default 30s), e.g. 5xx:0.05,lost-answer:0.02,slow-applied:0.01 (see docs/inspect.md)")
	fs.StringVar(&cfg.simulateCloudAddress, "simulate-cloud-address", "", "with --simulate, serve the simulated cloud's HTTP API on this host:port instead of a free loopback port, so another client (an in-tree Cluster Autoscaler, see docs/intree.md) can be pointed at it")
	fs.BoolVar(&cfg.checkConfig, "check-config", false, "validate flags and provider configuration without contacting the cloud, then exit (the preflight command checks them against the cloud); with --simulate, start the simulated cloud and read its node groups once")
	fs.BoolVar(&cfg.showVersion, "version", false, "print the version and exit")
	fs.BoolVar(&cfg.profiling, "profiling", false, "serve Go's pprof profiles at /debug/pprof/ on --metrics-address (off by default: it shows goroutine stacks and costs CPU while profiling)")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 20*time.Second, "how long SIGTERM waits for in-flight RPCs")
	fs.StringVar(&cfg.priceSheetPath, "price-sheet", "", "file of hourly prices per instance type (see docs/pricing.md); enables NodePrice/PodPrice on Volcengine and Exoscale and replaces Vultr's API prices")
	fs.DurationVar(&cfg.unknownOutcomeWindow, "unknown-outcome-window", groupstate.DefaultUnknownOutcomeWindow,
		"after a resize or deletion whose outcome is unknown (timeout, 5xx, lost answer), how long the group takes no change because the cloud may still apply the lost request (see docs/architecture.md); 0 only re-reads the group first")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	klogFlags.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	return fs
}

// parseFlags parses args without printing: the flag package would print the
// whole usage after any mistake and bury the error line. --help still prints
// the full usage (fs.Usage).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return 0, false
	case err != nil:
		fmt.Fprintf(stderr, "error: %s (see --help)\n", err)
		return 2, false
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "error: unexpected arguments: %s (commands come first: see --help)\n", strings.Join(fs.Args(), " "))
		return 2, false
	}
	return 0, true
}

// defaultProvider is the only compiled-in provider, if there is exactly one.
func defaultProvider(providers []string) string {
	if len(providers) == 1 {
		return providers[0]
	}
	return ""
}

// validate checks everything that can be checked without building the provider.
func (c *config) validate() (registry.Registration, externalgrpc.Address, error) {
	providers := registry.CloudProviders()
	if c.provider == "" {
		return registry.Registration{}, externalgrpc.Address{}, fmt.Errorf("--cloud-provider is required: choose one of %s", strings.Join(providers, ", "))
	}
	reg, ok := registry.Lookup(c.provider)
	if !ok {
		return reg, externalgrpc.Address{}, fmt.Errorf("--cloud-provider %q is not compiled in: choose one of %s", c.provider, strings.Join(providers, ", "))
	}
	if _, err := groupconfig.ParseNodeGroupSpecs(c.nodes); err != nil {
		return reg, externalgrpc.Address{}, err
	}
	if c.maxStaleness < 10*time.Second || c.maxStaleness > time.Hour {
		return reg, externalgrpc.Address{}, fmt.Errorf("--max-staleness %s: want between 10s and 1h", c.maxStaleness)
	}
	if _, _, err := cloudhttp.ParseRateLimit(c.cloudRateLimit); err != nil {
		return reg, externalgrpc.Address{}, fmt.Errorf("--cloud-api-rate-limit: %w", err)
	}
	addr, err := externalgrpc.ParseAddress(c.address)
	if err != nil {
		return reg, addr, err
	}
	if c.tlsCert == "" && !addr.Local() && !c.insecure {
		return reg, addr, fmt.Errorf("--address %s is reachable from other hosts: give --tls-cert-file/--tls-key-file (and --tls-client-ca-file), or --insecure to serve plaintext", c.address)
	}
	if c.profiling && c.metricsAddress == "" {
		return reg, addr, errors.New("--profiling serves on --metrics-address, which is empty: give an address (e.g. 127.0.0.1:8087)")
	}
	if c.unknownOutcomeWindow < 0 {
		return reg, addr, fmt.Errorf("--unknown-outcome-window %s is negative", c.unknownOutcomeWindow)
	}
	if c.simulate && reg.Simulate == nil {
		return reg, addr, fmt.Errorf("--simulate: provider %q has no simulator", c.provider)
	}
	if c.simulateFaults != "" && !c.simulate {
		return reg, addr, errors.New("--simulate-faults makes the simulated cloud misbehave: it needs --simulate")
	}
	if c.simulateCloudAddress != "" {
		if !c.simulate {
			return reg, addr, errors.New("--simulate-cloud-address is where the simulated cloud listens: it needs --simulate")
		}
		if _, _, err := net.SplitHostPort(c.simulateCloudAddress); err != nil {
			return reg, addr, fmt.Errorf("--simulate-cloud-address %q: want host:port, e.g. 127.0.0.1:8089", c.simulateCloudAddress)
		}
	}
	if _, err := simcloud.ParseFaultMix(c.simulateFaults, 0); err != nil {
		return reg, addr, fmt.Errorf("--simulate-faults %q: %w", c.simulateFaults, err)
	}
	if c.priceSheetPath != "" {
		if c.priceSheet, err = groupconfig.LoadPriceSheet(c.priceSheetPath); err != nil {
			return reg, addr, err
		}
	}
	return reg, addr, nil
}

// buildOptions is what the provider is built from, as the flags set it.
func (c *config) buildOptions(m *metrics.Metrics) registry.BuildOptions {
	window := c.unknownOutcomeWindow
	if window == 0 {
		// The flag's 0 turns the quarantine off; the option's zero means
		// the default.
		window = groupstate.NoUnknownOutcomeWindow
	}
	return registry.BuildOptions{
		CloudConfig:                 c.cloudConfig,
		NodeGroupSpecs:              c.nodes,
		NodeGroupAutoDiscoverySpecs: c.autoDiscovery,
		UserAgent:                   "cluster-autoscaler-provider/" + version,
		InstrumentTransport:         m.InstrumentTransport(c.provider),
		PriceSheet:                  c.priceSheet,
		ReportUnmatchedSpecs:        m.SetUnmatchedSpecs,
		RateLimit:                   c.rateLimit(),
		MaxStaleness:                c.maxStaleness,
		ObserveRateLimit:            m.ObserveRateLimit(c.provider),
		NodeLookupFailed:            m.NodeLookupFailed(c.provider),
		NodeIdentityMismatch:        m.NodeIdentityMismatch,
		SimulateFaults:              c.simulateFaults,
		SimulateCloudAddress:        c.simulateCloudAddress,
		Guard:                       groupstate.GuardOptions{UnknownOutcomeWindow: window},
	}
}

// rateLimit is --cloud-api-rate-limit, or the provider's documented default
// when it is empty; validate has refused a malformed value already.
func (c *config) rateLimit() cloudhttp.RateLimit {
	limit, useDefault, err := cloudhttp.ParseRateLimit(c.cloudRateLimit)
	if err != nil || !useDefault {
		return limit
	}
	reg, _ := registry.Lookup(c.provider)
	return reg.RateLimit
}

// configError marks an error found in flags or provider configuration: the
// process exits 2 for it, whether found by --check-config or when serving.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }

// exitCode is 2 for configuration errors and 1 for failures at run time.
func exitCode(err error) int {
	var ce configError
	if errors.As(err, &ce) || errors.Is(err, cloudprovider.ErrConfig) {
		return 2
	}
	return 1
}

// providerError prefixes err with the provider's name unless it already
// starts with it, as providers' configuration errors do. It cuts a trailing
// error class (": invalid argument").
func providerError(provider string, err error) error {
	// The class sentinel's text says nothing an operator can act on.
	err = cloudprovider.WithoutClass(err)
	if strings.HasPrefix(strings.ToLower(err.Error()), strings.ToLower(provider)) {
		return err
	}
	return fmt.Errorf("%s: %w", provider, err)
}

// run is main without the exit, so tests can drive it. Errors are one line on
// stderr; the exit code is 2 for bad flags and configuration, 1 at run time.
// A command as the first argument (inspect, probe, preflight, help) runs it
// instead of the server.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if cmd, ok := commandByName(args[0]); ok {
			return cmd.main(ctx, args[1:], stdout, stderr)
		}
	}
	var cfg config
	fs := newFlagSet(&cfg, stderr)
	fs.Usage = func() { printServerUsage(fs.Output()) }
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if cfg.showVersion {
		fmt.Fprintf(stdout, "cluster-autoscaler-provider %s (providers: %s)\n", version, strings.Join(registry.CloudProviders(), ","))
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
		msg, warnings, err := checkConfig(ctx, &cfg, reg)
		for _, w := range warnings {
			fmt.Fprintf(stderr, "warning: %s\n", w)
		}
		if err != nil {
			fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
			return 2
		}
		fmt.Fprintln(stdout, msg)
		return 0
	}
	if err := serve(ctx, &cfg, reg, addr, stdout); err != nil {
		fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
		return exitCode(err)
	}
	return 0
}

// checkConfig validates the provider configuration without contacting the
// cloud. Under --simulate there is no real configuration to read, so it starts
// the in-process fake cloud, reads its node groups once through the provider
// (which checks --nodes and auto-discovery against the simulated groups), and
// stops it again. Warnings (an unknown zone, an odd id) leave the exit code 0
// and are counted in the OK line.
func checkConfig(ctx context.Context, cfg *config, reg registry.Registration) (string, []string, error) {
	opts := cfg.buildOptions(nil)
	if cfg.simulate {
		sim, err := reg.Simulate(ctx, opts)
		if err != nil {
			return "", nil, providerError(cfg.provider, err)
		}
		defer sim.Close()
		defer func() { _ = sim.Provider.Cleanup(ctx) }()
		if err := sim.Provider.Refresh(ctx); err != nil {
			return "", nil, providerError(cfg.provider, err)
		}
		groups, err := sim.Provider.NodeGroups(ctx)
		if err != nil {
			return "", nil, providerError(cfg.provider, err)
		}
		if len(groups) == 0 {
			return "", nil, fmt.Errorf("simulated %s serves no node groups with these --nodes/--node-group-auto-discovery flags", cfg.provider)
		}
		return fmt.Sprintf("configuration OK for simulated %s: %s", cfg.provider, count(len(groups), "node group")), nil, nil
	}
	warnings, err := offlineCheck(ctx, cfg, reg)
	if err != nil {
		return "", warnings, err
	}
	msg := "configuration OK for " + cfg.provider
	if len(warnings) > 0 {
		msg += fmt.Sprintf(" (%s above)", count(len(warnings), "warning"))
	}
	return msg, warnings, nil
}

// offlineCheck runs the checks --check-config and preflight share, without
// the network: the provider's configuration (an error, exit 2), then its
// warnings (Registration.ConfigWarnings).
func offlineCheck(ctx context.Context, cfg *config, reg registry.Registration) ([]string, error) {
	opts := cfg.buildOptions(nil)
	check := reg.CheckConfig
	if check == nil {
		check = func(opts registry.BuildOptions) error {
			// Builders never contact the cloud, so building is a config check.
			p, err := reg.Build(ctx, opts)
			if err == nil {
				_ = p.Cleanup(ctx)
			}
			return err
		}
	}
	if err := check(opts); err != nil {
		return nil, providerError(cfg.provider, err)
	}
	return reg.ConfigWarnings(cfg.provider, opts), nil
}

// count says "1 node group", "3 node groups".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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
