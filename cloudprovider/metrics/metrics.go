// Package metrics holds the Prometheus metrics of the provider server and the
// instrumented RoundTripper every provider's cloud client goes through.
//
// Label values are bounded: gRPC methods are the 15 protocol methods, cloud
// operations come from each provider's OperationFunc with ids replaced (and
// are capped as a guard), node groups are the groups being served.
package metrics

import (
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

const namespace = "cluster_autoscaler_provider"

// maxOperations caps distinct cloud operation labels, in case an
// OperationFunc lets an id through.
const maxOperations = 200

// Metrics is the set of server metrics. A nil *Metrics records nothing, so
// tests and tools can run without a registry.
type Metrics struct {
	buildInfo     *prometheus.GaugeVec
	grpcRequests  *prometheus.CounterVec
	grpcDuration  *prometheus.HistogramVec
	cloudRequests *prometheus.CounterVec
	cloudDuration *prometheus.HistogramVec
	refreshErrors prometheus.Counter
	nodeGroupSize *prometheus.GaugeVec
	badSettings   *prometheus.GaugeVec
	caProtocol    map[ProtocolGeneration]prometheus.Counter
	unmatched     prometheus.Gauge
	noTemplate    *prometheus.CounterVec
	budgetWait    *prometheus.HistogramVec
	budgetRefused *prometheus.CounterVec
	groups        groupMetrics
	// Nodes CA asks about that the provider cannot or will not place.
	nodeLookupFailures *prometheus.CounterVec
	identityMismatch   *prometheus.CounterVec

	mu         sync.Mutex
	operations map[string]bool
}

// New creates the metrics and registers them with reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "build_info",
			Help: "Always 1 while the server runs; its labels are the release, the cloud provider served and the Go version it was built with.",
		}, []string{"version", "provider", "goversion"}),
		grpcRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "grpc_requests_total",
			Help: "gRPC requests served, by method and status code.",
		}, []string{"method", "code"}),
		grpcDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "grpc_request_duration_seconds",
			Help:    "Time to answer a gRPC request, by method.",
			Buckets: []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5},
		}, []string{"method"}),
		cloudRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "cloud_requests_total",
			Help: "Cloud API requests, by provider, operation and HTTP status code (\"error\" when no response).",
		}, []string{"provider", "operation", "code"}),
		cloudDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "cloud_request_duration_seconds",
			Help:    "Cloud API request latency, by provider and operation.",
			Buckets: prometheus.DefBuckets,
		}, []string{"provider", "operation"}),
		refreshErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "refresh_errors_total",
			Help: "Failed provider refreshes; the previous snapshot keeps being served.",
		}),
		nodeGroupSize: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "node_group_size",
			Help: "Node group sizes: kind is min, max or target.",
		}, []string{"node_group", "kind"}),
		badSettings: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "node_group_setting_errors",
			Help: "Per-group settings in the cloud's tags or labels (autoscaling options, template hints) that were ignored because they are malformed, by node group, at the last refresh.",
		}, []string{"node_group"}),
		unmatched: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "unmatched_node_group_specs",
			Help: "--nodes specs that matched no node group (or several, or one another spec names too) at the last listing.",
		}),
		noTemplate: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "template_unavailable_total",
			Help: "TemplateNodeInfo answers without a template (Unimplemented), by node group.",
		}, []string{"node_group"}),
		budgetWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "cloud_rate_limit_wait_seconds",
			Help:    "Time a cloud call waited for the client-side rate limit, by provider (calls that did not wait are not observed).",
			Buckets: []float64{0.001, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5},
		}, []string{"provider"}),
		budgetRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "cloud_rate_limit_refused_total",
			Help: "Cloud calls refused locally because waiting for the client-side rate limit would pass the caller's deadline, by provider.",
		}, []string{"provider"}),
		// Nodes CA asks about that the provider cannot or will not place.
		nodeLookupFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "node_lookup_failures_total",
			Help: "NodeGroupForNode answered \"no group\" because looking up a node missing from the snapshot failed (cloud error or deadline), by provider; each node is also logged once.",
		}, []string{"provider"}),
		identityMismatch: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "node_identity_mismatch_total",
			Help: "Nodes refused because a label naming their instance disagrees with their providerID, by node group.",
		}, []string{"node_group"}),
		operations: map[string]bool{},
	}
	caProtocol := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "ca_protocol_requests_total",
		Help: "Requests whose fields tell which Cluster Autoscaler generation sent them (GetOptions and pricing): legacy = CA 1.34.1 and older, current = CA 1.34.2 and newer.",
	}, []string{"generation"})
	m.buildInfo = register(reg, m.buildInfo)
	m.grpcRequests = register(reg, m.grpcRequests)
	m.grpcDuration = register(reg, m.grpcDuration)
	m.cloudRequests = register(reg, m.cloudRequests)
	m.cloudDuration = register(reg, m.cloudDuration)
	m.refreshErrors = register(reg, m.refreshErrors)
	m.nodeGroupSize = register(reg, m.nodeGroupSize)
	m.badSettings = register(reg, m.badSettings)
	m.unmatched = register(reg, m.unmatched)
	m.noTemplate = register(reg, m.noTemplate)
	m.budgetWait = register(reg, m.budgetWait)
	m.budgetRefused = register(reg, m.budgetRefused)
	caProtocol = register(reg, caProtocol)
	m.nodeLookupFailures = register(reg, m.nodeLookupFailures)
	m.identityMismatch = register(reg, m.identityMismatch)
	// Both series exist from the start, so a dashboard can tell "no legacy
	// CA" from "no data", and the label can take no other value.
	m.caProtocol = map[ProtocolGeneration]prometheus.Counter{
		GenerationLegacy:  caProtocol.WithLabelValues(string(GenerationLegacy)),
		GenerationCurrent: caProtocol.WithLabelValues(string(GenerationCurrent)),
	}
	m.groups = newGroupMetrics(reg)
	return m
}

// ProtocolGeneration is the generation of externalgrpc fields a CA request
// used. Five messages changed in CA 1.35 (Kubernetes-typed fields replaced by
// bytes and google.protobuf types); only the requests among them tell the two
// apart.
type ProtocolGeneration string

const (
	// GenerationLegacy is CA 1.34.1 and older: only the Kubernetes-typed fields.
	GenerationLegacy ProtocolGeneration = "legacy"
	// GenerationCurrent is CA 1.35 and later, and 1.34.2-1.34.x, which fill
	// both generations and read the current one first.
	GenerationCurrent ProtocolGeneration = "current"
)

// ObserveProtocolGeneration counts one request of generation g; other values
// are ignored so the label stays bounded.
func (m *Metrics) ObserveProtocolGeneration(g ProtocolGeneration) {
	if m == nil {
		return
	}
	if c, ok := m.caProtocol[g]; ok {
		c.Inc()
	}
}

// SetBuildInfo publishes the build_info series: the binary's version and
// the provider it serves. Alerts read its absence as "the provider is
// down", so the server sets it at start, before the first refresh.
func (m *Metrics) SetBuildInfo(version, provider string) {
	if m == nil {
		return
	}
	m.buildInfo.Reset()
	m.buildInfo.WithLabelValues(version, provider, runtime.Version()).Set(1)
}

// ObserveRPC records one answered gRPC request.
func (m *Metrics) ObserveRPC(method, code string, d time.Duration) {
	if m == nil {
		return
	}
	m.grpcRequests.WithLabelValues(method, code).Inc()
	m.grpcDuration.WithLabelValues(method).Observe(d.Seconds())
}

// RefreshFailed counts a failed refresh.
func (m *Metrics) RefreshFailed() {
	if m == nil {
		return
	}
	m.refreshErrors.Inc()
}

// SetUnmatchedSpecs records how many --nodes specs matched no node group at
// the last listing (registry.BuildOptions.ReportUnmatchedSpecs).
func (m *Metrics) SetUnmatchedSpecs(n int) {
	if m == nil {
		return
	}
	m.unmatched.Set(float64(n))
}

// ObserveRateLimit returns the observer for provider's client-side rate
// limiter (registry.BuildOptions.ObserveRateLimit); nil on nil Metrics.
func (m *Metrics) ObserveRateLimit(provider string) func(waited time.Duration, refused bool) {
	if m == nil {
		return nil
	}
	wait := m.budgetWait.WithLabelValues(provider)
	refusedCalls := m.budgetRefused.WithLabelValues(provider)
	return func(waited time.Duration, refused bool) {
		if refused {
			refusedCalls.Inc()
		}
		if waited > 0 {
			wait.Observe(waited.Seconds())
		}
	}
}

// NodeLookupFailed returns the counter of provider's NodeGroupForNode
// answers of "no group" given because a lookup failed
// (registry.BuildOptions.NodeLookupFailed); nil on nil Metrics.
func (m *Metrics) NodeLookupFailed(provider string) func() {
	if m == nil {
		return nil
	}
	return m.nodeLookupFailures.WithLabelValues(provider).Inc
}

// NodeIdentityMismatch counts a node of groupID refused because its label
// and providerID name different instances
// (registry.BuildOptions.NodeIdentityMismatch).
func (m *Metrics) NodeIdentityMismatch(groupID string) {
	if m == nil {
		return
	}
	m.identityMismatch.WithLabelValues(groupID).Inc()
}

// TemplateUnavailable counts a TemplateNodeInfo answered without a template.
func (m *Metrics) TemplateUnavailable(groupID string) {
	if m == nil {
		return
	}
	m.noTemplate.WithLabelValues(groupID).Inc()
}

// GroupSize is one group's bounds and target.
type GroupSize struct {
	ID               string
	Min, Max, Target int
}

// SetGroupSizes replaces every node_group_size series, so groups that
// disappeared stop being reported.
func (m *Metrics) SetGroupSizes(sizes []GroupSize) {
	if m == nil {
		return
	}
	m.nodeGroupSize.Reset()
	for _, s := range sizes {
		m.SetGroupSize(s)
	}
}

// SetGroupSize updates one group's series after a mutation.
func (m *Metrics) SetGroupSize(s GroupSize) {
	if m == nil {
		return
	}
	m.nodeGroupSize.WithLabelValues(s.ID, "min").Set(float64(s.Min))
	m.nodeGroupSize.WithLabelValues(s.ID, "max").Set(float64(s.Max))
	m.nodeGroupSize.WithLabelValues(s.ID, "target").Set(float64(s.Target))
}

// SetSettingErrors replaces every node_group_setting_errors series with the
// count of ignored settings per group (groups without any report 0).
func (m *Metrics) SetSettingErrors(perGroup map[string]int) {
	if m == nil {
		return
	}
	m.badSettings.Reset()
	for id, n := range perGroup {
		m.badSettings.WithLabelValues(id).Set(float64(n))
	}
}

func (m *Metrics) boundedOperation(op string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.operations[op] {
		return op
	}
	if len(m.operations) >= maxOperations {
		return "other"
	}
	m.operations[op] = true
	return op
}

// InstrumentTransport returns the hook for registry.BuildOptions that
// counts and times every cloud call of provider.
func (m *Metrics) InstrumentTransport(provider string) func(http.RoundTripper, cloudhttp.OperationFunc) http.RoundTripper {
	return func(base http.RoundTripper, op cloudhttp.OperationFunc) http.RoundTripper {
		if m == nil {
			return base
		}
		return &instrumentedTransport{m: m, provider: provider, base: base, op: op}
	}
}

type instrumentedTransport struct {
	m        *Metrics
	provider string
	base     http.RoundTripper
	op       cloudhttp.OperationFunc
}

func (t *instrumentedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := req.Method + " " + req.URL.Path
	if t.op != nil {
		op = t.op(req)
	}
	op = t.m.boundedOperation(op)
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	t.m.cloudRequests.WithLabelValues(t.provider, op, code).Inc()
	t.m.cloudDuration.WithLabelValues(t.provider, op).Observe(time.Since(start).Seconds())
	return resp, err
}

// groupMetrics track the groups' changes: every mutation by outcome, the
// groups refusing changes after an unknown outcome, and the instances each
// group lists by state.
type groupMetrics struct {
	mutations   *prometheus.CounterVec
	quarantined prometheus.Gauge
	instances   *prometheus.GaugeVec
}

func newGroupMetrics(reg prometheus.Registerer) groupMetrics {
	g := groupMetrics{
		mutations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "mutations_total",
			Help: "Node group changes CA asked for, by node group, operation (increase, decrease, delete) and outcome (applied, refused, unknown).",
		}, []string{"node_group", "operation", "outcome"}),
		quarantined: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "quarantined_node_groups",
			Help: "Node groups whose changes are refused because an earlier change's outcome is unknown (--unknown-outcome-window).",
		}),
		instances: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "node_group_instances",
			Help: "Instances each node group lists, by state (running, creating, deleting, failed: creating with error info), at the last refresh.",
		}, []string{"node_group", "state"}),
	}
	g.mutations = register(reg, g.mutations)
	g.quarantined = register(reg, g.quarantined)
	g.instances = register(reg, g.instances)
	return g
}

// register registers c with reg and returns it. If reg already holds the
// collector from an earlier New (CA's in-process tests build the provider
// again against CA's one registry), that one is returned, so both count
// into the same series. Any other conflict panics, as MustRegister does.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(err)
}

// Mutation operations, the operation label of mutations_total.
const (
	OperationIncrease = "increase"
	OperationDecrease = "decrease"
	OperationDelete   = "delete"
)

// ObserveMutation counts one change of group; operation is one of the
// Operation constants, outcome a cloudprovider.MutationOutcome's name.
func (m *Metrics) ObserveMutation(group, operation, outcome string) {
	if m == nil {
		return
	}
	m.groups.mutations.WithLabelValues(group, operation, outcome).Inc()
}

// SetQuarantinedGroups records how many groups refuse changes now.
func (m *Metrics) SetQuarantinedGroups(n int) {
	if m == nil {
		return
	}
	m.groups.quarantined.Set(float64(n))
}

// InstanceCounts is one group's listed instances by state.
type InstanceCounts struct {
	Running, Creating, Deleting, Failed int
}

// SetGroupInstances replaces every node_group_instances series, so groups
// that disappeared stop being reported; each group reports all four states.
func (m *Metrics) SetGroupInstances(perGroup map[string]InstanceCounts) {
	if m == nil {
		return
	}
	m.groups.instances.Reset()
	for id, c := range perGroup {
		m.groups.instances.WithLabelValues(id, "running").Set(float64(c.Running))
		m.groups.instances.WithLabelValues(id, "creating").Set(float64(c.Creating))
		m.groups.instances.WithLabelValues(id, "deleting").Set(float64(c.Deleting))
		m.groups.instances.WithLabelValues(id, "failed").Set(float64(c.Failed))
	}
}
