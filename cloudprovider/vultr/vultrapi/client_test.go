package vultrapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

const (
	token     = "client-test-SECRET"
	clusterID = "cluster-1"
)

type fixture struct {
	fake   *fakeapi.Server
	client *vultrapi.Client
	mu     sync.Mutex
	sleeps []time.Duration
}

func (f *fixture) slept() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// newFixture starts a fake with pools of the given sizes and a client whose
// retry waits are recorded instead of slept.
func newFixture(t *testing.T, opts fakeapi.Options, poolSizes ...int) *fixture {
	t.Helper()
	if opts.Token == "" {
		opts.Token = token
	}
	f := &fixture{fake: fakeapi.New(opts)}
	watchSpec(t, f.fake)
	f.fake.Start()
	t.Cleanup(f.fake.Close)
	f.fake.AddCluster(fakeapi.ClusterSpec{ID: clusterID, Region: "fra"})
	f.fake.AddPlans(fakeapi.StandardPlans()...)
	f.fake.AddMetalPlans(fakeapi.StandardMetalPlans()...)
	for i, n := range poolSizes {
		if _, err := f.fake.AddPool(clusterID, fakeapi.PoolSpec{ID: fmt.Sprintf("pool-%d", i), Label: fmt.Sprintf("p%d", i),
			Plan: "vc2-1c-2gb", Quantity: n, Min: 1, Max: 10, AutoScaler: true}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := vultrapi.New(vultrapi.Options{
		BaseURL: f.fake.URL(),
		Token:   oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}),
		Retry: cloudhttp.RetryOptions{Sleep: func(ctx context.Context, d time.Duration) error {
			f.mu.Lock()
			f.sleeps = append(f.sleeps, d)
			f.mu.Unlock()
			return ctx.Err()
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.client = c
	return f
}

func ctx5s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "x"})
	tests := []struct {
		name string
		opts vultrapi.Options
		ok   bool
	}{
		{name: "defaults", opts: vultrapi.Options{Token: ts}, ok: true},
		{name: "no token", opts: vultrapi.Options{}},
		{name: "relative url", opts: vultrapi.Options{Token: ts, BaseURL: "api.vultr.com"}},
		{name: "bad scheme", opts: vultrapi.Options{Token: ts, BaseURL: "ftp://api.vultr.com"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := vultrapi.New(tc.opts); (err == nil) != tc.ok {
				t.Fatalf("New() error = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestListNodePoolsFollowsPagination(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeapi.Options{MaxPerPage: 2}, 1, 2, 3, 4, 5)
	pools, err := f.client.ListNodePools(ctx5s(t), clusterID)
	if err != nil {
		t.Fatal(err)
	}
	if len(pools) != 5 {
		t.Fatalf("got %d pools, want 5", len(pools))
	}
	for i, p := range pools {
		if p.ID != fmt.Sprintf("pool-%d", i) || len(p.Nodes) != i+1 || p.NodeQuantity != i+1 || !p.AutoScaler || p.MaxNodes != 10 {
			t.Fatalf("pool %d decoded wrong: %+v", i, p)
		}
	}
	reqs := f.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests for 5 pools at 2 per page, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.Query.Get("per_page") != "500" {
			t.Fatalf("request %d per_page=%q, want 500", i, r.Query.Get("per_page"))
		}
		if (i == 0) != (r.Query.Get("cursor") == "") {
			t.Fatalf("request %d cursor=%q", i, r.Query.Get("cursor"))
		}
		if got := r.Header.Get("Authorization"); got != "Bearer "+token {
			t.Fatalf("Authorization %q", got)
		}
	}
}

func TestListPlans(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeapi.Options{MaxPerPage: 3})
	plans, err := f.client.ListPlans(ctx5s(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != len(fakeapi.StandardPlans()) {
		t.Fatalf("%d plans", len(plans))
	}
	var gpu *vultrapi.Plan
	for i := range plans {
		if plans[i].GPUType != "" {
			gpu = &plans[i]
		}
	}
	if gpu == nil || gpu.GPUVRAMGB != 16 || gpu.MonthlyCost != 501.22 {
		t.Fatalf("GPU plan decoded wrong: %+v", gpu)
	}
	metal, err := f.client.ListMetalPlans(ctx5s(t))
	if err != nil || len(metal) != 1 || metal[0].CPUThreads != 16 || metal[0].RAM != 131072 {
		t.Fatalf("metal plans %+v, %v", metal, err)
	}
	c, err := f.client.GetCluster(ctx5s(t), clusterID)
	if err != nil || c.Region != "fra" {
		t.Fatalf("cluster %+v, %v", c, err)
	}
}

func TestSetNodePoolQuantity(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeapi.Options{}, 2)
	np, err := f.client.SetNodePoolQuantity(ctx5s(t), clusterID, "pool-0", 5)
	if err != nil {
		t.Fatal(err)
	}
	if np.NodeQuantity != 5 {
		t.Fatalf("node_quantity %d", np.NodeQuantity)
	}
	reqs := f.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPatch || r.Path != "/v2/kubernetes/clusters/cluster-1/node-pools/pool-0" {
		t.Fatalf("%s %s", r.Method, r.Path)
	}
	if string(r.Body) != `{"node_quantity":5}` || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("body %q content type %q", r.Body, r.Header.Get("Content-Type"))
	}
	// A zero would be refused by Vultr; it is refused before any call.
	if _, err := f.client.SetNodePoolQuantity(ctx5s(t), clusterID, "pool-0", 0); !errors.Is(err, cloudprovider.ErrInvalidArgument) {
		t.Fatalf("quantity 0: %v", err)
	}
	if n := f.fake.RequestCount(); n != 1 {
		t.Fatalf("quantity 0 made a call")
	}
}

func TestDeleteNode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeapi.Options{}, 2)
	pool, _ := f.fake.Pool(clusterID, "pool-0")
	if err := f.client.DeleteNode(ctx5s(t), clusterID, "pool-0", pool.Nodes[0].ID); err != nil {
		t.Fatal(err)
	}
	after, _ := f.fake.Pool(clusterID, "pool-0")
	if after.Quantity != 1 || len(after.Nodes) != 1 {
		t.Fatalf("after delete: %+v", after)
	}
	err := f.client.DeleteNode(ctx5s(t), clusterID, "pool-0", pool.Nodes[0].ID)
	if !errors.Is(err, cloudprovider.ErrNotFound) || !vultrapi.IsNotFound(err) {
		t.Fatalf("second delete: %v, want not found", err)
	}
}

// TestErrorsAndRetries covers the retry policy: 429 honours Retry-After when
// it fits the deadline, 5xx is retried with backoff (also for the absolute
// PATCH), other 4xx never.
func TestErrorsAndRetries(t *testing.T) {
	t.Parallel()
	body := func(s string) *string { return &s }
	tests := []struct {
		name      string
		faults    []fakecloud.Fault
		call      string // list, patch, delete
		token     string // accepted token, "" = the client's
		wantErr   error
		wantCalls int
		wantSleep []time.Duration
	}{
		{name: "429 then ok honours Retry-After", faults: []fakecloud.Fault{{Status: 429, RetryAfter: "2"}},
			call: "list", wantCalls: 2, wantSleep: []time.Duration{2 * time.Second}},
		{name: "429 past the deadline returns at once", faults: []fakecloud.Fault{{Status: 429, RetryAfter: "30"}},
			call: "list", wantErr: cloudprovider.ErrRateLimited, wantCalls: 1},
		{name: "503 twice then ok", faults: []fakecloud.Fault{{Status: 503, Times: 2}},
			call: "list", wantCalls: 3, wantSleep: []time.Duration{200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "500 forever gives up", faults: []fakecloud.Fault{{Status: 500, Times: 10}},
			call: "list", wantErr: cloudprovider.ErrUnavailable, wantCalls: 4,
			wantSleep: []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}},
		{name: "404 not retried", faults: []fakecloud.Fault{{Status: 404}}, call: "list", wantErr: cloudprovider.ErrNotFound,
			wantCalls: 1, wantSleep: []time.Duration{}},
		{name: "PATCH 502 retried", faults: []fakecloud.Fault{{Status: 502}}, call: "patch", wantCalls: 2},
		{name: "DELETE 500 retried", faults: []fakecloud.Fault{{Status: 500}}, call: "delete", wantCalls: 2},
		{name: "400 not retried", faults: []fakecloud.Fault{{Status: 400}}, call: "patch", wantErr: cloudprovider.ErrFailedPrecondition, wantCalls: 1},
		{name: "403 not retried", faults: []fakecloud.Fault{{Status: 403}}, call: "list", wantErr: cloudprovider.ErrPermissionDenied, wantCalls: 1},
		{name: "401 on a wrong token", token: "rotated", call: "list", wantErr: cloudprovider.ErrUnauthenticated, wantCalls: 1},
		{name: "404 unknown pool", call: "patch-unknown", wantErr: cloudprovider.ErrNotFound, wantCalls: 1},
		{name: "malformed JSON", faults: []fakecloud.Fault{{Status: 200, Body: body(`{"node_pools": [`)}},
			call: "list", wantErr: cloudprovider.ErrMalformedResponse, wantCalls: 1},
		{name: "JSON labelled text/html is read", faults: []fakecloud.Fault{{Status: 200, Body: body(`{"node_pools": []}`), ContentType: "text/html"}},
			call: "list", wantCalls: 1},
		{name: "PATCH answer without node_pool", faults: []fakecloud.Fault{{Status: 202, Body: body(`{}`), AfterApply: true}},
			call: "patch", wantErr: cloudprovider.ErrMalformedResponse, wantCalls: 1},
		{name: "PATCH answer with empty body", faults: []fakecloud.Fault{{Status: 202, Body: body(``), AfterApply: true}},
			call: "patch", wantErr: cloudprovider.ErrMalformedResponse, wantCalls: 1},
		{name: "non-JSON error body kept", faults: []fakecloud.Fault{{Status: 404, Body: body("<html>gone</html>"), ContentType: "text/html"}},
			call: "list", wantErr: cloudprovider.ErrNotFound, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fakeapi.Options{}, 2)
			for _, fl := range tc.faults {
				f.fake.AddFault(fl)
			}
			if tc.token != "" {
				f.fake.SetToken(tc.token)
			}
			ctx := ctx5s(t)
			var err error
			switch tc.call {
			case "list":
				_, err = f.client.ListNodePools(ctx, clusterID)
			case "patch":
				_, err = f.client.SetNodePoolQuantity(ctx, clusterID, "pool-0", 3)
			case "patch-unknown":
				_, err = f.client.SetNodePoolQuantity(ctx, clusterID, "nope", 3)
			case "delete":
				p, _ := f.fake.Pool(clusterID, "pool-0")
				err = f.client.DeleteNode(ctx, clusterID, "pool-0", p.Nodes[0].ID)
			}
			if tc.wantErr == nil && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Fatalf("error leaks the token: %v", err)
			}
			if got := f.fake.RequestCount(); got != tc.wantCalls {
				t.Fatalf("%d calls, want %d", got, tc.wantCalls)
			}
			if got := f.slept(); tc.wantSleep != nil && fmt.Sprint(got) != fmt.Sprint(tc.wantSleep) && len(got)+len(tc.wantSleep) > 0 {
				t.Fatalf("retry waits %v, want %v", got, tc.wantSleep)
			}
		})
	}
}

func TestAPIErrorDetails(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeapi.Options{}, 1)
	f.fake.AddFault(fakecloud.Fault{Status: 429, RetryAfter: "30"})
	_, err := f.client.ListNodePools(ctx5s(t), clusterID)
	var apiErr *cloudhttp.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 429 || apiErr.Message != "Too Many Requests" {
		t.Fatalf("APIError not recoverable from %v", err)
	}
	if cloudhttp.RetryAfterOf(err) != 30*time.Second {
		t.Fatalf("Retry-After not recoverable from %v", err)
	}
	if !strings.Contains(err.Error(), "GET /v2/kubernetes/clusters/cluster-1/node-pools: HTTP 429") {
		t.Fatalf("message lacks method, path, status: %v", err)
	}
}

func TestDeadlineHonoured(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeapi.Options{}, 1)
	f.fake.AddFault(fakecloud.Fault{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := f.client.ListNodePools(ctx, clusterID)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hung request: %v, want DeadlineExceeded", err)
	}
}

func TestOperation(t *testing.T) {
	t.Parallel()
	tests := []struct{ method, path, want string }{
		{"GET", "/v2/kubernetes/clusters/abc/node-pools", "GET /v2/kubernetes/clusters/{id}/node-pools"},
		{"PATCH", "/v2/kubernetes/clusters/abc/node-pools/def", "PATCH /v2/kubernetes/clusters/{id}/node-pools/{id}"},
		{"DELETE", "/v2/kubernetes/clusters/abc/node-pools/def/nodes/ghi", "DELETE /v2/kubernetes/clusters/{id}/node-pools/{id}/nodes/{id}"},
		{"GET", "/v2/plans", "GET /v2/plans"},
		{"GET", "/v2/plans-metal", "GET /v2/plans-metal"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			req := &http.Request{Method: tc.method, URL: &url.URL{Path: tc.path, RawQuery: "cursor=xyz"}}
			if got := vultrapi.Operation(req); got != tc.want {
				t.Fatalf("Operation = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestInstrumentationSeesEveryAttempt checks that the client is built on the
// shared HTTP client: the instrumentation hook sees each try with its
// operation label, and the User-Agent is ours.
func TestInstrumentationSeesEveryAttempt(t *testing.T) {
	t.Parallel()
	fake := fakeapi.New(fakeapi.Options{Token: token})
	watchSpec(t, fake)
	fake.Start()
	defer fake.Close()
	fake.AddCluster(fakeapi.ClusterSpec{ID: clusterID})
	var mu sync.Mutex
	var ops []string
	build := registry.BuildOptions{
		UserAgent: "ca-provider-test/1.0",
		InstrumentTransport: func(base http.RoundTripper, op cloudhttp.OperationFunc) http.RoundTripper {
			return rtFunc(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				ops = append(ops, op(r))
				mu.Unlock()
				return base.RoundTrip(r)
			})
		},
	}
	c, err := vultrapi.New(vultrapi.Options{BaseURL: fake.URL(), Build: build,
		Token: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}),
		Retry: cloudhttp.RetryOptions{Sleep: func(ctx context.Context, d time.Duration) error { return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	fake.AddFault(fakecloud.Fault{Status: 503})
	if _, err := c.ListNodePools(ctx5s(t), clusterID); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[0] != "GET /v2/kubernetes/clusters/{id}/node-pools" {
		t.Fatalf("instrumented operations %v", ops)
	}
	if ua := fake.Requests()[0].Header.Get("User-Agent"); !strings.HasPrefix(ua, "ca-provider-test/1.0") {
		t.Fatalf("User-Agent %q", ua)
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestJSONLabelledTextPlainIsAccepted: a gateway may relabel Vultr's JSON;
// the body decides, not the label.
func TestJSONLabelledTextPlainIsAccepted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeapi.Options{}, 2)
	p, _ := f.fake.Pool(clusterID, "pool-0")
	f.fake.AddFault(fakecloud.Fault{Method: http.MethodPatch, Status: 200, ContentType: "text/plain; charset=utf-8", AfterApply: true,
		Body: strPtr(`{"node_pool":{"id":"pool-0","node_quantity":3,"nodes":[]}}`)})
	np, err := f.client.SetNodePoolQuantity(ctx5s(t), clusterID, "pool-0", 3)
	if err != nil || np.NodeQuantity != 3 || np.ID != p.ID {
		t.Fatalf("JSON answer labelled text/plain: %+v, %v; want it read", np, err)
	}
}

// TestUnparsableAnswerNamesCloudOperationStatus: a success body that does
// not parse is an error naming cloud, operation and status; for a mutation
// it is an applied change (the guard reads the pool), never a refusal.
func TestUnparsableAnswerNamesCloudOperationStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeapi.Options{}, 2)
	f.fake.AddFault(fakecloud.Fault{Method: http.MethodPatch, Status: 201, ContentType: "text/html", AfterApply: true,
		Body: strPtr(`<html>upstream says ok</html>`)})
	_, err := f.client.SetNodePoolQuantity(ctx5s(t), clusterID, "pool-0", 3)
	if !errors.Is(err, cloudprovider.ErrMalformedResponse) || cloudprovider.OutcomeOf(err) != cloudprovider.MutationApplied {
		t.Fatalf("unparsable 201: %v (outcome %s), want malformed and applied", err, cloudprovider.OutcomeOf(err))
	}
	for _, want := range []string{"vultr", "PATCH /v2/kubernetes/clusters/cluster-1/node-pools/pool-0", "HTTP 201"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
}

// TestMutationOutcomes: the client states each answer's outcome.
func TestMutationOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault fakecloud.Fault
		want  cloudprovider.MutationOutcome
	}{
		{"400", fakecloud.Fault{Status: 400}, cloudprovider.MutationRefused},
		{"429", fakecloud.Fault{Status: 429, RetryAfter: "30"}, cloudprovider.MutationRefused},
		{"500 every attempt", fakecloud.Fault{Status: 500, Times: 10}, cloudprovider.MutationUnknown},
		{"reset", fakecloud.Fault{Reset: true, Times: 10}, cloudprovider.MutationUnknown},
		{"502 then 409", fakecloud.Fault{Status: 502}, cloudprovider.MutationUnknown},
		{"2xx without node_pool", fakecloud.Fault{Status: 200, Body: strPtr(`{}`), AfterApply: true}, cloudprovider.MutationApplied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fakeapi.Options{}, 2)
			tc.fault.Method = http.MethodPatch
			f.fake.AddFault(tc.fault)
			if tc.name == "502 then 409" {
				f.fake.AddFault(fakecloud.Fault{Method: http.MethodPatch, Status: 409})
			}
			_, err := f.client.SetNodePoolQuantity(ctx5s(t), clusterID, "pool-0", 3)
			if err == nil || cloudprovider.OutcomeOf(err) != tc.want {
				t.Fatalf("%v: outcome %s, want %s", err, cloudprovider.OutcomeOf(err), tc.want)
			}
		})
	}
}

func strPtr(s string) *string { return &s }
