package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// PreflightCommand is the subcommand that checks the configuration against
// the real cloud with read calls only, before the server is deployed.
const PreflightCommand = "preflight"

// preflightTimeout bounds the whole check: the cloud client's own retries
// and request lifetime decide how long one call may take, this only makes
// sure a stuck cloud cannot keep an operator waiting forever.
const preflightTimeout = 3 * time.Minute

// preflightMain runs "preflight" with the server's own flags and environment.
// It builds the provider, takes one snapshot (authentication, group listing,
// --nodes and discovery resolution), then reads each group's instances,
// template and price, and prints one summary. Exit codes are the server's:
// 2 for bad configuration, 1 when the cloud cannot be read, 0 otherwise.
func preflightMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return preflightWith(ctx, args, stdout, stderr, preflightHooks{timeout: preflightTimeout})
}

// preflightHooks is what tests replace: the cloud client's dialer and
// proxy rule (a network failing the way a real one fails, without the
// network) and the whole check's deadline.
type preflightHooks struct {
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	proxy   func(*http.Request) (*url.URL, error)
	timeout time.Duration
}

func preflightWith(ctx context.Context, args []string, stdout, stderr io.Writer, hooks preflightHooks) int {
	var cfg config
	fs := newFlagSet(&cfg, stderr)
	fs.Init(PreflightCommand, flag.ContinueOnError)
	fs.Usage = func() { printCommandUsage(fs.Output(), PreflightCommand, fs) }
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	reg, _, err := cfg.validate()
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
		return 2
	}
	// The offline checks come first, in --check-config's words: a
	// configuration error is the one line printed, before any header.
	var warnings []string
	if !cfg.simulate {
		if warnings, err = offlineCheck(ctx, &cfg, reg); err != nil {
			fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
			return 2
		}
	}
	ctx, cancel := context.WithTimeout(ctx, hooks.timeout)
	defer cancel()
	report, code := preflight(ctx, &cfg, reg, hooks)
	report.warnings = append(warnings, report.warnings...)
	report.write(stdout, stderr)
	return code
}

// preflightReport is what preflight found, printed at the end.
type preflightReport struct {
	provider string
	simulate bool
	groups   []preflightGroup
	specs    []string
	calls    *callRecorder
	warnings []string
	// location is the zone or region the configuration names, if the
	// provider says (Registration.Location).
	location registry.Location
	// endpoint is where the calls go (Registration.Endpoint).
	endpoint registry.Endpoint
	// proxy is the proxy rule the cloud client used.
	proxy cloudhttp.ProxyFunc
	// problem is the one-line cause of a failed check ("" when it passed),
	// code its exit code.
	problem string
	code    int
}

type preflightGroup struct {
	id, debug              string
	managed                cloudprovider.Management
	min, max, target       int
	instances              map[cloudprovider.InstanceState]int
	template, price, notes string
}

// preflight runs the checks; the report is printed whatever the outcome.
func preflight(ctx context.Context, cfg *config, reg registry.Registration, hooks preflightHooks) (*preflightReport, int) {
	r := &preflightReport{provider: cfg.provider, simulate: cfg.simulate, calls: &callRecorder{}}
	opts := cfg.buildOptions(nil)
	opts.InstrumentTransport = r.calls.wrap
	opts.Dial, opts.Proxy = hooks.dial, hooks.proxy
	if hooks.proxy != nil {
		r.proxy = func(u *url.URL) (*url.URL, error) { return hooks.proxy(&http.Request{URL: u}) }
	}
	if reg.Location != nil {
		r.location = reg.Location(opts)
	}
	if reg.Endpoint != nil {
		r.endpoint = reg.Endpoint(opts)
	}

	var p cloudprovider.CloudProvider
	if cfg.simulate {
		sim, err := reg.Simulate(ctx, opts)
		if err != nil {
			return r.fail(2, providerError(cfg.provider, err))
		}
		defer sim.Close()
		p = sim.Provider
	} else {
		built, err := reg.Build(ctx, opts)
		if err != nil {
			// Builders never contact the cloud: this is the configuration.
			return r.fail(2, providerError(cfg.provider, err))
		}
		p = built
	}
	defer func() { _ = p.Cleanup(context.WithoutCancel(ctx)) }()

	if err := p.Refresh(ctx); err != nil {
		cause := r.cause(err)
		if errors.Is(err, cloudprovider.ErrConfig) && r.location.Name != "" {
			// The specs were resolved against what the cloud holds in this
			// zone or region: a misspelt one holds nothing.
			cause = fmt.Errorf("%w (looked in %s)", cause, r.where())
		}
		return r.fail(preflightCode(err), cause)
	}
	groups, err := p.NodeGroups(ctx)
	if err != nil {
		return r.fail(1, r.cause(err))
	}
	pricing, pricingErr := p.Pricing(ctx)
	for _, g := range groups {
		r.groups = append(r.groups, checkGroup(ctx, g, pricing, pricingErr))
	}
	sort.Slice(r.groups, func(i, j int) bool { return r.groups[i].id < r.groups[j].id })
	r.specs = resolveSpecsForReport(cfg, r.groups)
	for _, c := range r.calls.refused() {
		if slices.Contains(reg.OptionalOperations, c.operation) {
			r.warnings = append(r.warnings, fmt.Sprintf("the cloud refused the optional read %s (HTTP %d): templates use defaults instead of what it would tell; grant it for exact templates", c.operation, c.status))
			continue
		}
		r.warnings = append(r.warnings, fmt.Sprintf("the cloud refused %s (HTTP %d)", c.operation, c.status))
	}
	if len(groups) == 0 {
		// A warning, not a failure: a cluster whose groups are not created
		// or tagged yet is a valid configuration the server serves as is.
		if r.location.Name != "" {
			r.warnings = append(r.warnings, fmt.Sprintf("no node groups are served in %s with these --nodes/--node-group-auto-discovery flags: CA would do nothing; check %s and the flags", r.where(), r.location.Setting))
		} else {
			r.warnings = append(r.warnings, "no node groups are served with these --nodes/--node-group-auto-discovery flags: CA would do nothing")
		}
	}
	return r, 0
}

// where names the configured zone or region and its setting:
// `region "cn-beijing" (REGION_ID)`.
func (r *preflightReport) where() string {
	return fmt.Sprintf("%s %q (%s)", r.location.Kind, r.location.Name, r.location.Setting)
}

func (r *preflightReport) fail(code int, err error) (*preflightReport, int) {
	r.problem, r.code = oneLine(err), code
	return r, code
}

// checkGroup reads one group the way CA does before its first scale-up.
func checkGroup(ctx context.Context, g cloudprovider.NodeGroup, pricing cloudprovider.PricingModel, pricingErr error) preflightGroup {
	pg := preflightGroup{id: g.Id(ctx), debug: g.Debug(ctx), managed: g.Status(ctx).Managed, min: g.MinSize(ctx), max: g.MaxSize(ctx), instances: map[cloudprovider.InstanceState]int{}}
	var notes []string
	if t, err := g.TargetSize(ctx); err == nil {
		pg.target = t
	} else {
		notes = append(notes, "target: "+oneLine(err))
	}
	if ins, err := g.Nodes(ctx); err == nil {
		for _, in := range ins {
			state := cloudprovider.InstanceRunning
			if in.Status != nil && in.Status.State != 0 {
				state = in.Status.State
			}
			pg.instances[state]++
		}
	} else {
		notes = append(notes, "instances: "+oneLine(err))
	}
	node, err := g.TemplateNodeInfo(ctx)
	switch {
	case err != nil:
		pg.template = "none (cannot scale up from zero): " + oneLine(err)
	case node == nil:
		pg.template = "none (cannot scale up from zero)"
	default:
		c := node.Status.Capacity
		pg.template = fmt.Sprintf("cpu %s, memory %s", c.Cpu().String(), c.Memory().String())
		if gpu, ok := c["nvidia.com/gpu"]; ok && !gpu.IsZero() {
			pg.template += ", nvidia.com/gpu " + gpu.String()
		}
	}
	switch {
	case pricingErr != nil:
		pg.price = "none (" + oneLine(pricingErr) + ")"
	case node == nil:
		pg.price = "none (no template to price)"
	default:
		now := time.Now()
		if v, err := pricing.NodePrice(ctx, node, now, now.Add(time.Hour)); err != nil {
			pg.price = "none (" + oneLine(err) + ")"
		} else {
			pg.price = fmt.Sprintf("%g per hour", v)
		}
	}
	pg.notes = strings.Join(notes, "; ")
	return pg
}

// resolveSpecsForReport says which groups each --nodes spec and discovery
// rule chose, from why each group says it is managed; the provider has
// already refused a spec naming nothing (ErrConfig).
func resolveSpecsForReport(cfg *config, groups []preflightGroup) []string {
	specs, err := groupconfig.ParseNodeGroupSpecs(cfg.nodes)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range specs {
		var found []string
		for _, g := range groups {
			if g.managed == (cloudprovider.Management{By: cloudprovider.ManagedByNodes, Detail: s.String()}) {
				found = append(found, g.id)
			}
		}
		what := "no served group (the provider's log says why)"
		if len(found) > 0 {
			what = strings.Join(found, ", ")
		}
		out = append(out, fmt.Sprintf("--nodes %s -> %s", s, what))
	}
	for _, d := range cfg.autoDiscovery {
		var found []string
		for _, g := range groups {
			if g.managed == (cloudprovider.Management{By: cloudprovider.ManagedByDiscovery, Detail: d}) {
				found = append(found, g.id)
			}
		}
		what := "no served group: it matches none, or --nodes names the ones it matches"
		if len(found) > 0 {
			what = strings.Join(found, ", ")
		}
		out = append(out, fmt.Sprintf("--node-group-auto-discovery %s -> %s", d, what))
	}
	return out
}

// preflightCode is the exit code for a failed snapshot: 2 when the cloud's
// answer shows the configuration wrong (a spec naming nothing or twice), as
// serving exits; 1 for everything the cloud or the network did.
func preflightCode(err error) int {
	if errors.Is(err, cloudprovider.ErrConfig) {
		return 2
	}
	return 1
}

// cause names what went wrong in the operator's terms, one line: the
// step, the cause with its chained error, and the fix that fits the
// provider (cloudhttp.Diagnose, registry.Diagnosis); the provider's own
// error otherwise.
func (r *preflightReport) cause(err error) error {
	var api *cloudhttp.APIError
	hasAPI := errors.As(err, &api)
	switch {
	case errors.Is(err, cloudprovider.ErrConfig):
		return providerError(r.provider, err)
	case hasAPI && r.refusesLocation(api):
		return fmt.Errorf("%s: the API refused %s%s: check the spelling: %s", r.provider, r.where(), onOperation(api, true), err)
	}
	if msg, ok := registry.Diagnosis(r.provider, cloudhttp.Diagnose(err, r.proxy), r.location, r.endpoint); ok {
		return errors.New(msg)
	}
	return providerError(r.provider, err)
}

// refusesLocation reports whether a refusal is about the configured zone or
// region: a 4xx whose code or message names it. The clouds document no
// code for this (a Volcengine region travels only in the request's
// signature), so the test is by what the refusal talks about.
func (r *preflightReport) refusesLocation(api *cloudhttp.APIError) bool {
	switch {
	case r.location.Name == "", api.Status < 400, api.Status >= 500,
		// Credentials, permissions and throttling have their own lines.
		api.Status == http.StatusUnauthorized, api.Status == http.StatusForbidden, api.Status == http.StatusTooManyRequests:
		return false
	}
	text := strings.ToLower(api.Code + " " + api.Message)
	return strings.Contains(text, r.location.Kind) || strings.Contains(text, strings.ToLower(r.location.Name))
}

// permissionsPage is the documentation of provider's permissions
// (registry.PermissionsPage), where a refused call points too.
func permissionsPage(provider string) string { return registry.PermissionsPage(provider) }

func onOperation(api *cloudhttp.APIError, ok bool) string {
	if !ok {
		return ""
	}
	if api.Status == 0 {
		return " on " + api.Operation
	}
	return fmt.Sprintf(" on %s (HTTP %d)", api.Operation, api.Status)
}

// write prints the summary on stdout, then warnings and the problem (if
// any) one line each on stderr.
func (r *preflightReport) write(stdout, stderr io.Writer) {
	if r.code == 2 && r.calls.summary() == "" {
		// A configuration refused before any call: the line alone.
		for _, w := range r.warnings {
			fmt.Fprintf(stderr, "warning: %s\n", w)
		}
		fmt.Fprintf(stderr, "error: %s\n", r.problem)
		return
	}
	where := "the cloud"
	if r.simulate {
		where = "the simulated cloud"
	}
	fmt.Fprintf(stdout, "Preflight of %s against %s (read calls only)\n", r.provider, where)
	if len(r.groups) > 0 {
		fmt.Fprintln(stdout, "Node groups:")
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, g := range r.groups {
			fmt.Fprintf(tw, "  %s\tmin %d, max %d, target %d\t%s\n", g.id, g.min, g.max, g.target, instanceCounts(g.instances))
		}
		_ = tw.Flush()
		for _, g := range r.groups {
			fmt.Fprintf(stdout, "  %s: %s\n    template: %s\n    price: %s\n", g.id, cloudprovider.WithManaged(g.debug, g.managed), g.template, g.price)
			if g.notes != "" {
				fmt.Fprintf(stdout, "    could not read: %s\n", g.notes)
			}
		}
	}
	if len(r.specs) > 0 {
		fmt.Fprintln(stdout, "Node group selection:")
		for _, s := range r.specs {
			fmt.Fprintf(stdout, "  %s\n", s)
		}
	}
	if calls := r.calls.summary(); calls != "" {
		fmt.Fprintf(stdout, "Cloud calls made: %s\n", calls)
	}
	if r.problem == "" {
		fmt.Fprintf(stdout, "Not checked: write permissions (resize, delete). Read calls cannot prove them; the first scale-up or scale-down will. Grant them as %s lists.\n", permissionsPage(r.provider))
	}
	for _, w := range r.warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if r.problem != "" {
		fmt.Fprintf(stderr, "error: %s\n", r.problem)
		return
	}
	fmt.Fprintf(stdout, "preflight OK for %s: %s\n", r.provider, count(len(r.groups), "node group"))
}

func instanceCounts(m map[cloudprovider.InstanceState]int) string {
	total := 0
	var parts []string
	for _, s := range []cloudprovider.InstanceState{cloudprovider.InstanceRunning, cloudprovider.InstanceCreating, cloudprovider.InstanceDeleting} {
		if n := m[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
		total += m[s]
	}
	s := count(total, "instance")
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// callRecorder sees every cloud call the provider makes (through
// BuildOptions.InstrumentTransport), so the summary can say what was read
// and which optional reads the cloud refused.
type callRecorder struct {
	mu    sync.Mutex
	calls []recordedCall
}

type recordedCall struct {
	operation string
	status    int // 0: no answer
}

func (c *callRecorder) wrap(base http.RoundTripper, op cloudhttp.OperationFunc) http.RoundTripper {
	return recordingTransport{rec: c, base: base, op: op}
}

type recordingTransport struct {
	rec  *callRecorder
	base http.RoundTripper
	op   cloudhttp.OperationFunc
}

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := req.Method + " " + req.URL.Path
	if t.op != nil {
		op = t.op(req)
	}
	resp, err := t.base.RoundTrip(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	t.rec.mu.Lock()
	t.rec.calls = append(t.rec.calls, recordedCall{operation: op, status: status})
	t.rec.mu.Unlock()
	return resp, err
}

// refused lists the distinct operations answered 401 or 403.
func (c *callRecorder) refused() []recordedCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	var out []recordedCall
	for _, call := range c.calls {
		if (call.status == http.StatusUnauthorized || call.status == http.StatusForbidden) && !seen[call.operation] {
			seen[call.operation] = true
			out = append(out, call)
		}
	}
	return out
}

// summary renders "GET /x 200 x2, ..." sorted by operation.
func (c *callRecorder) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := map[string]int{}
	for _, call := range c.calls {
		code := "no answer"
		if call.status != 0 {
			code = fmt.Sprint(call.status)
		}
		counts[call.operation+" "+code]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s x%d", k, counts[k])
	}
	return strings.Join(keys, ", ")
}
