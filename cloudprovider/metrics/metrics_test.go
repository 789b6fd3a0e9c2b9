package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

func TestInstrumentedTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	m := New(prometheus.NewRegistry())
	rt := m.InstrumentTransport("vultr")(http.DefaultTransport, func(r *http.Request) string {
		return r.Method + " /pools/{id}"
	})
	c := &http.Client{Transport: rt}
	for _, p := range []string{"/pools/1", "/pools/2", "/pools/missing"} {
		resp, err := c.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := testutil.ToFloat64(m.cloudRequests.WithLabelValues("vultr", "GET /pools/{id}", "200")); got != 2 {
		t.Fatalf("200 count %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.cloudRequests.WithLabelValues("vultr", "GET /pools/{id}", "404")); got != 1 {
		t.Fatalf("404 count %v, want 1", got)
	}
	if _, err := (&http.Client{Transport: rt}).Get("http://127.0.0.1:1/pools/x"); err == nil {
		t.Fatal("want a connection error")
	}
	if got := testutil.ToFloat64(m.cloudRequests.WithLabelValues("vultr", "GET /pools/{id}", "error")); got != 1 {
		t.Fatalf("error count %v, want 1", got)
	}
}

func TestOperationCardinalityIsCapped(t *testing.T) {
	m := New(prometheus.NewRegistry())
	for i := 0; i < maxOperations+50; i++ {
		m.boundedOperation(fmt.Sprintf("GET /leaky/%d", i))
	}
	if got := m.boundedOperation("GET /leaky/new"); got != "other" {
		t.Fatalf("operation past the cap = %q, want other", got)
	}
	if got := m.boundedOperation("GET /leaky/3"); got != "GET /leaky/3" {
		t.Fatalf("known operation = %q", got)
	}
}

func TestGroupSizesReplaceSeries(t *testing.T) {
	m := New(prometheus.NewRegistry())
	m.SetGroupSizes([]GroupSize{{ID: "a", Min: 1, Max: 5, Target: 3}, {ID: "b", Min: 0, Max: 2, Target: 1}})
	m.SetGroupSizes([]GroupSize{{ID: "a", Min: 1, Max: 5, Target: 4}})
	if got := testutil.ToFloat64(m.nodeGroupSize.WithLabelValues("a", "target")); got != 4 {
		t.Fatalf("target %v", got)
	}
	if n := testutil.CollectAndCount(m.nodeGroupSize); n != 3 {
		t.Fatalf("%d series after group b vanished, want 3", n)
	}
}

func TestUnmatchedSpecs(t *testing.T) {
	m := New(prometheus.NewRegistry())
	m.SetUnmatchedSpecs(2)
	if got := testutil.ToFloat64(m.unmatched); got != 2 {
		t.Fatalf("unmatched %v, want 2", got)
	}
}

func TestNodeCounters(t *testing.T) {
	m := New(prometheus.NewRegistry())
	failed := m.NodeLookupFailed("exoscale")
	failed()
	failed()
	m.NodeIdentityMismatch("pool-a")
	if got := testutil.ToFloat64(m.nodeLookupFailures.WithLabelValues("exoscale")); got != 2 {
		t.Fatalf("node lookup failures %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.identityMismatch.WithLabelValues("pool-a")); got != 1 {
		t.Fatalf("identity mismatches %v, want 1", got)
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	if m.NodeLookupFailed("x") != nil {
		t.Fatal("nil metrics must give no lookup-failure counter")
	}
	m.NodeIdentityMismatch("a")
	m.SetUnmatchedSpecs(1)
	m.ObserveRPC("NodeGroups", "OK", time.Millisecond)
	m.RefreshFailed()
	m.SetGroupSizes([]GroupSize{{ID: "a"}})
	if rt := m.InstrumentTransport("x")(http.DefaultTransport, nil); rt != http.DefaultTransport {
		t.Fatal("nil metrics must not wrap the transport")
	}
}

func TestProtocolGenerationIsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	m.ObserveProtocolGeneration(GenerationLegacy)
	m.ObserveProtocolGeneration(GenerationLegacy)
	m.ObserveProtocolGeneration(GenerationCurrent)
	m.ObserveProtocolGeneration("1.33")
	want := `
# HELP cluster_autoscaler_provider_ca_protocol_requests_total Requests whose fields tell which Cluster Autoscaler generation sent them (GetOptions and pricing): legacy = CA 1.34.1 and older, current = CA 1.34.2 and newer.
# TYPE cluster_autoscaler_provider_ca_protocol_requests_total counter
cluster_autoscaler_provider_ca_protocol_requests_total{generation="current"} 1
cluster_autoscaler_provider_ca_protocol_requests_total{generation="legacy"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "cluster_autoscaler_provider_ca_protocol_requests_total"); err != nil {
		t.Fatal(err)
	}
	var nilMetrics *Metrics
	nilMetrics.ObserveProtocolGeneration(GenerationLegacy)
}

func TestObserveRateLimit(t *testing.T) {
	m := New(prometheus.NewRegistry())
	observe := m.ObserveRateLimit("vultr")
	observe(0, false)
	observe(300*time.Millisecond, false)
	observe(0, true)
	var wait dto.Metric
	if err := m.budgetWait.WithLabelValues("vultr").(prometheus.Histogram).Write(&wait); err != nil {
		t.Fatal(err)
	}
	if n, sum := wait.GetHistogram().GetSampleCount(), wait.GetHistogram().GetSampleSum(); n != 1 || sum != 0.3 {
		t.Fatalf("waits observed %d summing to %vs, want the one 0.3s wait", n, sum)
	}
	if got := testutil.ToFloat64(m.budgetRefused.WithLabelValues("vultr")); got != 1 {
		t.Fatalf("refused %v, want 1", got)
	}
	var nilMetrics *Metrics
	if nilMetrics.ObserveRateLimit("vultr") != nil {
		t.Fatal("nil Metrics returned an observer")
	}
}

// TestBuildInfo: one series, value 1, carrying the last version and
// provider set and the Go version of the binary.
func TestBuildInfo(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := New(reg)
	if n := testutil.CollectAndCount(m.buildInfo); n != 0 {
		t.Fatalf("build_info has %d series before SetBuildInfo", n)
	}
	m.SetBuildInfo("v0.0.1", "vultr")
	m.SetBuildInfo("v0.0.2", "exoscale")
	want := `
# HELP cluster_autoscaler_provider_build_info Always 1 while the server runs; its labels are the release, the cloud provider served and the Go version it was built with.
# TYPE cluster_autoscaler_provider_build_info gauge
cluster_autoscaler_provider_build_info{goversion="` + runtime.Version() + `",provider="exoscale",version="v0.0.2"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "cluster_autoscaler_provider_build_info"); err != nil {
		t.Fatal(err)
	}
	var nilMetrics *Metrics
	nilMetrics.SetBuildInfo("v0.0.1", "vultr")
}

// TestNewTwiceOnOneRegistry: a second New on the registry of the first
// (a process building its provider again) does not panic and counts into
// the same series; a different metric under one of our names still does.
func TestNewTwiceOnOneRegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	first := New(reg)
	second := New(reg)
	first.NodeIdentityMismatch("pool-a")
	second.NodeIdentityMismatch("pool-a")
	second.ObserveMutation("pool-a", OperationDelete, "applied")
	if got := testutil.ToFloat64(first.identityMismatch.WithLabelValues("pool-a")); got != 2 {
		t.Fatalf("identity mismatches %v, want 2 (one from each)", got)
	}
	if got := testutil.ToFloat64(first.groups.mutations.WithLabelValues("pool-a", OperationDelete, "applied")); got != 1 {
		t.Fatalf("mutations %v seen through the first, want 1", got)
	}
	if n, err := testutil.GatherAndCount(reg, "cluster_autoscaler_provider_node_identity_mismatch_total"); err != nil || n != 1 {
		t.Fatalf("gathered %d series (%v), want 1", n, err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a conflicting collector under our name registered")
		}
	}()
	clash := prometheus.NewRegistry()
	clash.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "refresh_errors_total", Help: "not ours"}))
	New(clash)
}
