// Package cluster starts a provider's fake cloud API seeded with a cluster of
// a chosen size, and builds the real provider (through the registry, exactly
// as main does) against it. The benchmark and the soak share it.
//
// simcloud.Chaos can inject faults at random through the fake kit's fault
// policy (fakecloud.API), so resets, slow answers and answers lost
// after the request was applied hit every cloud the same way, each answered
// in the cloud's own error shape.
package cluster

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

// Providers are the providers this package can seed, in table order.
var Providers = []string{"vultr", "volcengine", "exoscale"}

// Options describe the cluster to seed.
type Options struct {
	// Provider is "vultr", "volcengine" or "exoscale".
	Provider string
	// Nodes is the total number of instances, spread evenly over Groups.
	Nodes int
	// Groups is the number of autoscaled node groups.
	Groups int
	// MaxPerGroup is each group's max size (default: twice its share plus 10).
	MaxPerGroup int
	// MaxStaleness is the provider's --max-staleness (0: the default).
	MaxStaleness time.Duration
	// UnknownOutcomeWindow is the provider's --unknown-outcome-window, as
	// BuildOptions.Guard takes it (0: the default).
	UnknownOutcomeWindow time.Duration
	// MinPerGroup is each group's min size (default 1).
	MinPerGroup int
	// Clock drives the fake's provisioning; nil seeds a fake whose new
	// instances are ready at once.
	Clock *fakecloud.ManualClock
	// Faults, when set, lets simcloud.Chaos inject faults into the fake's answers.
	Faults bool
	// Unmanaged is how many nodes belong to no group (a control plane, a
	// pool not flagged for autoscaling); the fake knows them where it can.
	Unmanaged int
	// Seed makes fault choices and fake ids reproducible.
	Seed int64
}

func (o *Options) defaults() error {
	if o.Groups <= 0 {
		return fmt.Errorf("cluster: need at least one group")
	}
	if o.Nodes < 0 {
		return fmt.Errorf("cluster: negative node count")
	}
	if o.MinPerGroup <= 0 {
		o.MinPerGroup = 1
	}
	if o.MaxPerGroup <= 0 {
		o.MaxPerGroup = 2*((o.Nodes+o.Groups-1)/o.Groups) + 10
	}
	return nil
}

// share is how many instances group i starts with.
func (o Options) share(i int) int {
	n := o.Nodes / o.Groups
	if i < o.Nodes%o.Groups {
		n++
	}
	return n
}

// Fake is a running fake cloud plus what a provider needs to reach it.
type Fake struct {
	// Provider is the provider name.
	Provider string
	// URL is where the provider reaches the cloud.
	URL string
	// CloudConfig is the --cloud-config file ("" when the provider reads env).
	CloudConfig string
	// Env are environment variables the provider reads.
	Env map[string]string
	// Flags are further command-line flags (discovery specs).
	Flags []string
	// Credentials are the secrets in the configuration.
	Credentials []string
	// Unmanaged are the providerIDs of nodes in no group.
	Unmanaged []string
	// Chaos injects faults; nil unless Options.Faults.
	Chaos *simcloud.Chaos

	opts    Options
	api     *fakecloud.API
	dir     string
	state   func() []simcloud.Group
	settle  func()
	launch  func(groupID string) (string, error)
	closeFn []func()
	once    sync.Once
}

// Start seeds the fake for opts and starts it on loopback.
func Start(opts Options) (*Fake, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cap-cluster-")
	if err != nil {
		return nil, fmt.Errorf("cluster: temp dir: %w", err)
	}
	f := &Fake{Provider: opts.Provider, opts: opts, dir: dir, Env: map[string]string{}}
	f.closeFn = append(f.closeFn, func() { _ = os.RemoveAll(dir) })
	var start func(*Fake) error
	switch opts.Provider {
	case "vultr":
		start = startVultr
	case "volcengine":
		start = startVolcengine
	case "exoscale":
		start = startExoscale
	default:
		f.Close()
		return nil, fmt.Errorf("cluster: unknown provider %q (want one of %s)", opts.Provider, strings.Join(Providers, ", "))
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// serve starts the fake (with Chaos as its fault policy when asked) and
// returns the URL the provider should use.
func (f *Fake) serve(api *fakecloud.API) string {
	if f.opts.Faults {
		f.Chaos = simcloud.NewChaos(f.opts.Seed)
		api.SetFaultPolicy(f.Chaos.Pick)
	}
	f.api = api
	f.closeFn = append(f.closeFn, api.Close)
	return api.Start()
}

// BuildOptions returns what main would pass to the provider's builder.
func (f *Fake) BuildOptions(m *metrics.Metrics) registry.BuildOptions {
	opts := registry.BuildOptions{
		CloudConfig: f.CloudConfig, UserAgent: "cap-bench", MaxStaleness: f.opts.MaxStaleness,
		Guard: groupstate.GuardOptions{UnknownOutcomeWindow: f.opts.UnknownOutcomeWindow},
	}
	for i := 0; i+1 < len(f.Flags); i += 2 {
		if f.Flags[i] == "--node-group-auto-discovery" {
			opts.NodeGroupAutoDiscoverySpecs = append(opts.NodeGroupAutoDiscoverySpecs, f.Flags[i+1])
		}
		if f.Flags[i] == "--nodes" {
			opts.NodeGroupSpecs = append(opts.NodeGroupSpecs, f.Flags[i+1])
		}
	}
	if m != nil {
		opts.InstrumentTransport = m.InstrumentTransport(f.Provider)
	}
	return opts
}

// Build sets the provider's environment in this process and builds the
// provider through the registry, instrumented with m (which may be nil).
func (f *Fake) Build(ctx context.Context, m *metrics.Metrics) (cloudprovider.CloudProvider, error) {
	for k, v := range f.Env {
		if err := os.Setenv(k, v); err != nil {
			return nil, fmt.Errorf("cluster: set %s: %w", k, err)
		}
	}
	reg, ok := registry.Lookup(f.Provider)
	if !ok {
		return nil, fmt.Errorf("cluster: provider %q is not compiled in", f.Provider)
	}
	p, err := reg.Build(ctx, f.BuildOptions(m))
	if err != nil {
		return nil, fmt.Errorf("cluster: build %s: %w", f.Provider, err)
	}
	return p, nil
}

// NewMetrics returns server metrics on a fresh registry.
func NewMetrics() (*metrics.Metrics, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return metrics.New(reg), reg
}

// EnvList renders Env as KEY=value pairs, sorted, for a child process.
func (f *Fake) EnvList() []string {
	out := make([]string, 0, len(f.Env))
	for k, v := range f.Env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// State returns the fake's current groups.
func (f *Fake) State() []simcloud.Group { return f.state() }

// Settle finishes every pending provisioning and removal in the fake now.
func (f *Fake) Settle() { f.settle() }

// WaitIdle blocks until every request the fake received has been served,
// including requests a slow fault holds after their caller gave up (they may
// still change the cloud).
func (f *Fake) WaitIdle() {
	if f.api != nil {
		f.api.WaitIdle()
	}
}

// Launch makes the cloud start one running instance in the group behind the
// provider's back (as another actor scaling it would) and returns its
// providerID: a change the provider must notice on its own.
func (f *Fake) Launch(groupID string) (string, error) { return f.launch(groupID) }

// Close stops the fake and removes the config files.
func (f *Fake) Close() {
	f.once.Do(func() {
		for i := len(f.closeFn) - 1; i >= 0; i-- {
			f.closeFn[i]()
		}
	})
}

func (f *Fake) writeFile(name, content string) (string, error) {
	path := f.dir + "/" + name
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return "", fmt.Errorf("cluster: write %s: %w", name, err)
	}
	return path, nil
}
