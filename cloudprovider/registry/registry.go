package registry

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
)

// BuildOptions is what a provider builder receives from main.
type BuildOptions struct {
	// CloudConfig is the path given with --cloud-config ("" when unset).
	CloudConfig string
	// NodeGroupSpecs are the raw --nodes values ("min:max:id").
	NodeGroupSpecs []string
	// NodeGroupAutoDiscoverySpecs are the raw --node-group-auto-discovery values.
	NodeGroupAutoDiscoverySpecs []string
	// UserAgent is sent with every cloud request.
	UserAgent string
	// InstrumentTransport, when set, wraps the provider's transport so cloud
	// calls are counted and timed; operation maps a request to a bounded label.
	InstrumentTransport func(base http.RoundTripper, operation cloudhttp.OperationFunc) http.RoundTripper
	// MaxStaleness bounds how old the data the server serves may be
	// (--max-staleness; zero: DefaultMaxStaleness).
	MaxStaleness time.Duration
	// RateLimit is the client-side budget for calls to the cloud (zero: none).
	// main fills it from --cloud-api-rate-limit or Registration.RateLimit.
	RateLimit cloudhttp.RateLimit
	// ObserveRateLimit, when set, is told how long each call waited for the
	// budget, and each call refused locally because the wait would pass the
	// caller's deadline.
	ObserveRateLimit func(waited time.Duration, refused bool)
	// RateLimitNow and RateLimitSleep, when set, are the rate limiter's clock
	// and sleep instead of the wall clock, so the conformance kit drives the
	// budget on a manual clock; main leaves them nil.
	RateLimitNow   func() time.Time
	RateLimitSleep func(ctx context.Context, d time.Duration) error
	// Guard sets the quarantine after a mutation of unknown outcome: main
	// sets the window from --unknown-outcome-window; tests and the kit give
	// a manual clock. Providers pass it to their groupstate.NewLedger.
	Guard groupstate.GuardOptions
	// PriceSheet is the validated --price-sheet, nil without one. When set,
	// it is every provider's only price source.
	PriceSheet *groupconfig.PriceSheet
	// ReportUnmatchedSpecs, when set, receives after every listing how many
	// --nodes specs name no node group (see SpecWatch).
	ReportUnmatchedSpecs func(n int)
	// NodeLookupFailed, when set, counts a NodeGroupForNode answered "no
	// group" because looking up a node the snapshot lacks failed (see
	// UnknownNodeLookup).
	NodeLookupFailed func()
	// NodeIdentityMismatch, when set, counts a node of groupID refused
	// because its label naming an instance disagrees with its providerID.
	NodeIdentityMismatch func(groupID string)
	// SimulateFaults is the validated --simulate-faults (a simcloud fault
	// mix); only a Simulator reads it, to inject those faults into its fake
	// cloud.
	SimulateFaults string
	// SimulateCloudAddress is --simulate-cloud-address: where a Simulator
	// serves its fake cloud's HTTP API ("": a free loopback port).
	SimulateCloudAddress string
	// Dial and Proxy, when set, replace the cloud HTTP client's dialer and
	// proxy rule (cloudhttp.ClientOptions); main leaves them nil.
	Dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	Proxy func(*http.Request) (*url.URL, error)
	// Getenv, when set, is the environment a provider reads its settings
	// from (Env) instead of the process's; the in-tree build passes CA's,
	// tests a map of their own, so they run in parallel.
	Getenv func(string) string
	// Now and RetrySleep, when set, are the provider's clock (the age of
	// its reads, its graces) and its retries' sleep instead of the wall
	// clock, so a test drives them as RateLimitNow drives the budget; main
	// leaves them nil.
	Now        func() time.Time
	RetrySleep func(ctx context.Context, d time.Duration) error
}

// Env returns the environment a provider reads its settings from:
// opts.Getenv, or the process's.
func (opts BuildOptions) Env() func(string) string {
	if opts.Getenv != nil {
		return opts.Getenv
	}
	return os.Getenv
}

// Simulation is a provider wired to an in-process fake of its cloud.
type Simulation struct {
	// Provider talks to the fake cloud.
	Provider cloudprovider.CloudProvider
	// URL is where the fake cloud listens.
	URL string
	// Description says in one line what is simulated.
	Description string
	// GroupNames maps each demo node group's id to the name the cloud's
	// console shows, so the banner can show both. Optional.
	GroupNames map[string]string
	// Close stops the fake cloud.
	Close func()
	// Deliberate lists what the demo data does wrong on purpose (a
	// malformed per-group setting), each logged once at start-up, so the
	// warnings they cause are known to be expected. Optional.
	Deliberate []string
	// State serves the fake cloud's own state and the faults injected so far
	// (simcloud.State), read-only; main serves it on --metrics-address.
	// Optional.
	State http.Handler
}

// DeliberateMalformedSetting is the Simulation.Deliberate note of a demo
// group that carries a malformed value for option on purpose.
func DeliberateMalformedSetting(group, option, value string) string {
	return fmt.Sprintf("node group %s carries %s=%q on purpose, to show how a malformed per-group setting is reported: the warning about it is expected", group, option, value)
}

// Builder constructs a provider. It does not exit the process; its errors
// name the offending field.
type Builder func(ctx context.Context, opts BuildOptions) (cloudprovider.CloudProvider, error)

// Simulator starts a fake cloud seeded with a demo cluster and a provider bound to it.
type Simulator func(ctx context.Context, opts BuildOptions) (*Simulation, error)

// Location is the zone or region a configuration names.
type Location struct {
	// Name is the zone or region ("" when the configuration names none).
	Name string
	// Kind is what the cloud calls it: "zone" or "region".
	Kind string
	// Setting is where the operator sets it (EXOSCALE_ZONE, REGION_ID).
	Setting string
	// Published is the cloud's list of them as its SDK carries it; empty
	// when the SDK has none.
	Published []string
}

// Registration describes a provider to the registry.
type Registration struct {
	Build Builder
	// Simulate is optional; providers without it cannot run with --simulate.
	Simulate Simulator
	// CheckConfig validates configuration without contacting the cloud. Optional.
	CheckConfig func(opts BuildOptions) error
	// RateLimit is the default client-side budget, from the cloud's documented
	// limits (see docs/flags.md); --cloud-api-rate-limit overrides it.
	RateLimit cloudhttp.RateLimit
	// Location, when set, returns the zone or region the configuration
	// names. --check-config, preflight and the server warn, without a cloud
	// call, when it is not in the published list (Location.Warning);
	// preflight names it when the cloud refuses it or has no group there.
	// Optional.
	Location func(opts BuildOptions) Location
	// Warnings, when set, returns what the configuration holds that looks
	// wrong and is tried anyway (an id not shaped like the cloud's), one
	// line each: --check-config, preflight and the server warn without a
	// cloud call, and the first call's error says the rest. Optional.
	Warnings func(opts BuildOptions) []string
	// Endpoint, when set, says where the configuration sends calls and
	// what to check when one fails (Diagnosis). Optional.
	Endpoint func(opts BuildOptions) Endpoint
	// OptionalOperations are read operations (as the provider's
	// OperationFunc names them) that only add template details, so preflight
	// warns instead of failing when the cloud refuses them. Optional.
	OptionalOperations []string
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Registration{}
)

// RegisterCloudProvider registers a provider under name; call it from init().
// Registering a name twice, or without a builder, is a programming error and panics.
func RegisterCloudProvider(name string, reg Registration) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if name == "" || reg.Build == nil {
		panic("registry: RegisterCloudProvider needs a name and a builder")
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("registry: provider %q registered twice", name))
	}
	registry[name] = reg
}

// CloudProviders lists the registered provider names in sorted order.
func CloudProviders() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the registration for name.
func Lookup(name string) (Registration, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	r, ok := registry[name]
	return r, ok
}

// MaxStalenessOrDefault returns opts.MaxStaleness, or the default when unset.
func (opts BuildOptions) MaxStalenessOrDefault() time.Duration {
	if opts.MaxStaleness > 0 {
		return opts.MaxStaleness
	}
	return refresh.DefaultMaxStaleness
}

// WireLookups passes opts' staleness bound and metric hooks to a provider's
// unknown-node lookup and --nodes spec watch, so every provider remembers
// an absent node for as long and reports the same way.
func (opts BuildOptions) WireLookups(unknown *refresh.UnknownNodeLookup, specs *groupconfig.SpecWatch) {
	unknown.Remember = opts.MaxStalenessOrDefault()
	unknown.Failed = opts.NodeLookupFailed
	specs.Report = opts.ReportUnmatchedSpecs
}

// ClientOptions returns the options of the cloud HTTP client (NewHTTPClient)
// that opts carries.
func (opts BuildOptions) ClientOptions() cloudhttp.ClientOptions {
	return cloudhttp.ClientOptions{
		UserAgent:           opts.UserAgent,
		InstrumentTransport: opts.InstrumentTransport,
		RateLimit:           opts.RateLimit,
		ObserveRateLimit:    opts.ObserveRateLimit,
		RateLimitNow:        opts.RateLimitNow,
		RateLimitSleep:      opts.RateLimitSleep,
		Dial:                opts.Dial,
		Proxy:               opts.Proxy,
	}
}
