package fakeapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vultr/govultr/v3"
	"golang.org/x/oauth2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

const (
	tok = "fake-test-token"
	cid = "c1"
)

func newFake(t *testing.T, opts fakeapi.Options) (*fakeapi.Server, *fakecloud.ManualClock) {
	t.Helper()
	clock := fakecloud.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.Token, opts.Now = tok, clock.Now
	s := fakeapi.New(opts)
	s.Start()
	t.Cleanup(s.Close)
	s.AddCluster(fakeapi.ClusterSpec{ID: cid, Region: "ewr", Label: "k"})
	s.AddPlans(fakeapi.StandardPlans()...)
	s.AddMetalPlans(fakeapi.StandardMetalPlans()...)
	return s, clock
}

func do(t *testing.T, s *fakeapi.Server, method, path, auth string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestWireShape(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, fakeapi.Options{})
	p, err := s.AddPool(cid, fakeapi.PoolSpec{ID: "p1", Label: "web", Plan: "vc2-1c-2gb", Quantity: 2, Min: 1, Max: 3, AutoScaler: true})
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Bearer " + tok
	tests := []struct {
		name, method, path, auth, body string
		status                         int
		contentType                    string
		bodyHas                        string
	}{
		{name: "no auth", method: "GET", path: "/v2/plans", status: 401, contentType: "application/json", bodyHas: `"status":401`},
		{name: "wrong token", method: "GET", path: "/v2/plans", auth: "Bearer nope", status: 401, bodyHas: `"error":"Invalid API token."`},
		{name: "plans", method: "GET", path: "/v2/plans", auth: bearer, status: 200, contentType: "application/json", bodyHas: `"gpu_type":"NVIDIA_A16"`},
		{name: "plans by type", method: "GET", path: "/v2/plans?type=vhf", auth: bearer, status: 200, bodyHas: `"total":1`},
		{name: "metal plans", method: "GET", path: "/v2/plans-metal", auth: bearer, status: 200, bodyHas: `"plans_metal":[{"id":"vbm-8c-132gb"`},
		{name: "cluster", method: "GET", path: "/v2/kubernetes/clusters/c1", auth: bearer, status: 200, bodyHas: `"region":"ewr"`},
		{name: "unknown cluster", method: "GET", path: "/v2/kubernetes/clusters/nope", auth: bearer, status: 404, bodyHas: `"status":404`},
		{name: "pools", method: "GET", path: "/v2/kubernetes/clusters/c1/node-pools", auth: bearer, status: 200, bodyHas: `"auto_scaler":true`},
		{name: "pool", method: "GET", path: "/v2/kubernetes/clusters/c1/node-pools/p1", auth: bearer, status: 200, bodyHas: `"node_pool":{"id":"p1"`},
		{name: "pool nodes", method: "GET", path: "/v2/kubernetes/clusters/c1/node-pools/p1/nodes", auth: bearer, status: 200, bodyHas: `"worker_nodes":[`},
		{name: "labels", method: "GET", path: "/v2/kubernetes/clusters/c1/node-pools/p1/labels", auth: bearer, status: 200, bodyHas: `"labels":[]`},
		{name: "taints", method: "GET", path: "/v2/kubernetes/clusters/c1/node-pools/p1/taints", auth: bearer, status: 200, bodyHas: `"taints":[]`},
		{name: "patch zero", method: "PATCH", path: "/v2/kubernetes/clusters/c1/node-pools/p1", auth: bearer, body: `{"node_quantity":0}`,
			status: 400, bodyHas: "`node_quantity` must be a positive integer."},
		{name: "patch absent", method: "PATCH", path: "/v2/kubernetes/clusters/c1/node-pools/p1", auth: bearer, body: `{"tag":"x"}`,
			status: 202, bodyHas: `"node_quantity":2`},
		{name: "patch", method: "PATCH", path: "/v2/kubernetes/clusters/c1/node-pools/p1", auth: bearer, body: `{"node_quantity":3}`,
			status: 202, contentType: "application/json", bodyHas: `"node_quantity":3`},
		{name: "delete unknown node", method: "DELETE", path: "/v2/kubernetes/clusters/c1/node-pools/p1/nodes/nope", auth: bearer, status: 404},
		{name: "delete node", method: "DELETE", path: "/v2/kubernetes/clusters/c1/node-pools/p1/nodes/" + p.Nodes[0].ID, auth: bearer, status: 204},
		{name: "bad cursor", method: "GET", path: "/v2/plans?cursor=zzz", auth: bearer, status: 400},
	}
	for _, tc := range tests {
		// Not parallel: the steps share one environment and run in order.
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, s, tc.method, tc.path, tc.auth, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.contentType != "" && resp.Header.Get("Content-Type") != tc.contentType {
				t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
			}
			if tc.status == 204 && len(body) != 0 {
				t.Fatalf("204 with body %q", body)
			}
			if tc.status >= 400 {
				var eb struct {
					Error  string `json:"error"`
					Status int    `json:"status"`
				}
				if err := json.Unmarshal(body, &eb); err != nil || eb.Status != tc.status || eb.Error == "" {
					t.Fatalf("error body %q not {error,status}", body)
				}
			}
			if !bytes.Contains(body, []byte(tc.bodyHas)) {
				t.Fatalf("body %s lacks %s", body, tc.bodyHas)
			}
		})
	}
	if got := len(s.Requests()); got != len(tests) {
		t.Fatalf("request log has %d entries, want %d", got, len(tests))
	}
	last := s.Requests()[len(tests)-1]
	if last.Status != 400 || last.Method != "GET" || last.Query.Get("cursor") != "zzz" {
		t.Fatalf("request log entry %+v", last)
	}
}

func TestProvisioningLagAndRemoval(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, fakeapi.Options{AppearAfter: 10 * time.Second, ActiveAfter: 60 * time.Second, CloseLinger: 30 * time.Second, Seed: 7})
	if _, err := s.AddPool(cid, fakeapi.PoolSpec{ID: "p1", Label: "web", Plan: "vc2-1c-2gb", Quantity: 2, Min: 1, Max: 9, AutoScaler: true}); err != nil {
		t.Fatal(err)
	}
	patch := func(n int) {
		t.Helper()
		resp, body := do(t, s, "PATCH", "/v2/kubernetes/clusters/c1/node-pools/p1", "Bearer "+tok, `{"node_quantity":`+itoa(n)+`}`)
		if resp.StatusCode != 202 {
			t.Fatalf("PATCH: %d %s", resp.StatusCode, body)
		}
	}
	statuses := func() (int, map[string]int) {
		p, _ := s.Pool(cid, "p1")
		m := map[string]int{}
		for _, n := range p.Nodes {
			m[n.Status]++
		}
		return p.Quantity, m
	}
	patch(4)
	steps := []struct {
		name    string
		advance time.Duration
		q       int
		want    map[string]int
	}{
		{name: "quantity at once, nodes not yet", advance: 0, q: 4, want: map[string]int{"active": 2}},
		{name: "appear pending", advance: 10 * time.Second, q: 4, want: map[string]int{"active": 2, "pending": 2}},
		{name: "turn active", advance: 50 * time.Second, q: 4, want: map[string]int{"active": 4}},
	}
	for _, st := range steps {
		// Not parallel: the steps share one environment and run in order.
		t.Run(st.name, func(t *testing.T) {
			clock.Advance(st.advance)
			q, got := statuses()
			if q != st.q || len(got) != len(st.want) {
				t.Fatalf("quantity %d statuses %v, want %d %v", q, got, st.q, st.want)
			}
			for k, v := range st.want {
				if got[k] != v {
					t.Fatalf("statuses %v, want %v", got, st.want)
				}
			}
		})
	}
	patch(2)
	q, got := statuses()
	if q != 2 || got["active"] != 2 || got["closed"] != 2 {
		t.Fatalf("after shrink: quantity %d statuses %v", q, got)
	}
	clock.Advance(30 * time.Second)
	after, _ := s.Pool(cid, "p1")
	if len(after.Nodes) != 2 {
		t.Fatalf("closed nodes still listed after linger: %+v", after.Nodes)
	}
	// Random removal: over several seeds, the survivors are not always the oldest nodes.
	oldestKept := 0
	for seed := int64(0); seed < 8; seed++ {
		s2, _ := newFake(t, fakeapi.Options{Seed: seed})
		p, _ := s2.AddPool(cid, fakeapi.PoolSpec{ID: "p", Label: "x", Plan: "vc2-1c-2gb", Quantity: 4, Min: 1, Max: 9, AutoScaler: true})
		resp, _ := do(t, s2, "PATCH", "/v2/kubernetes/clusters/c1/node-pools/p", "Bearer "+tok, `{"node_quantity":2}`)
		if resp.StatusCode != 202 {
			t.Fatal(resp.Status)
		}
		v, _ := s2.Pool(cid, "p")
		if len(v.Nodes) != 2 {
			t.Fatalf("seed %d: %d nodes after shrink to 2", seed, len(v.Nodes))
		}
		if v.Nodes[0].ID == p.Nodes[0].ID && v.Nodes[1].ID == p.Nodes[1].ID {
			oldestKept++
		}
	}
	if oldestKept == 8 {
		t.Fatal("shrinking always kept the oldest nodes; VKE removes random ones")
	}
}

func TestPaginationMeta(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, fakeapi.Options{MaxPerPage: 2})
	var cursor string
	seen := 0
	for page := 0; page < 5; page++ {
		path := "/v2/plans?per_page=100"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		resp, body := do(t, s, "GET", path, "Bearer "+tok, "")
		if resp.StatusCode != 200 {
			t.Fatal(string(body))
		}
		var out struct {
			Plans []fakeapi.Plan `json:"plans"`
			Meta  struct {
				Total int `json:"total"`
				Links struct{ Next, Prev string }
			} `json:"meta"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Plans) > 2 || out.Meta.Total != 4 || (page > 0) != (out.Meta.Links.Prev != "") {
			t.Fatalf("page %d: %d plans, meta %+v", page, len(out.Plans), out.Meta)
		}
		seen += len(out.Plans)
		if cursor = out.Meta.Links.Next; cursor == "" {
			break
		}
	}
	if seen != 4 {
		t.Fatalf("paged through %d plans, want 4", seen)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, fakeapi.Options{})
	s.AddFault(fakecloud.Fault{Method: "GET", PathContains: "/plans", Status: 429, RetryAfter: "3", Times: 2})
	for i := 0; i < 2; i++ {
		resp, body := do(t, s, "GET", "/v2/plans", "Bearer "+tok, "")
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
			t.Fatalf("try %d: %d %q", i, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		// Vultr's error shape: {"error": message, "status": code}.
		if !bytes.Contains(body, []byte(`"error":"Too Many Requests"`)) || !bytes.Contains(body, []byte(`"status":429`)) {
			t.Fatalf("try %d: fault body %s is not Vultr's error shape", i, body)
		}
	}
	if resp, _ := do(t, s, "GET", "/v2/plans", "Bearer "+tok, ""); resp.StatusCode != 200 {
		t.Fatalf("fault outlived Times: %d", resp.StatusCode)
	}
	s.FailNext(2)
	for i, want := range []int{500, 500, 200} {
		if resp, _ := do(t, s, "GET", "/v2/plans", "Bearer "+tok, ""); resp.StatusCode != want {
			t.Fatalf("FailNext request %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	// A lost PATCH answer still changes the pool.
	if _, err := s.AddPool(cid, fakeapi.PoolSpec{ID: "p", Label: "x", Plan: "vc2-1c-2gb", Quantity: 1, Min: 1, Max: 9}); err != nil {
		t.Fatal(err)
	}
	s.AddFault(fakecloud.Fault{Method: "PATCH", Status: 503, AfterApply: true})
	if resp, _ := do(t, s, "PATCH", "/v2/kubernetes/clusters/c1/node-pools/p", "Bearer "+tok, `{"node_quantity":3}`); resp.StatusCode != 503 {
		t.Fatal(resp.Status)
	}
	if p, _ := s.Pool(cid, "p"); p.Quantity != 3 {
		t.Fatalf("AfterApply fault did not apply: quantity %d", p.Quantity)
	}
	s.MisreportNextQuantity(7)
	_, body := do(t, s, "PATCH", "/v2/kubernetes/clusters/c1/node-pools/p", "Bearer "+tok, `{"node_quantity":4}`)
	if !bytes.Contains(body, []byte(`"node_quantity":7`)) {
		t.Fatalf("MisreportNextQuantity not reported: %s", body)
	}
	if p, _ := s.Pool(cid, "p"); p.Quantity != 4 {
		t.Fatalf("MisreportNextQuantity changed the real quantity: %d", p.Quantity)
	}
}

// TestOfficialSDKAgainstFake drives the fake with govultr v3 to show the fake
// speaks what Vultr's own SDK expects (paths, envelopes, content type, 202/204).
func TestOfficialSDKAgainstFake(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, fakeapi.Options{MaxPerPage: 2})
	for _, id := range []string{"p1", "p2", "p3"} {
		if _, err := s.AddPool(cid, fakeapi.PoolSpec{ID: id, Label: id, Plan: "vc2-1c-2gb", Quantity: 2, Min: 1, Max: 5, AutoScaler: true,
			Labels: map[string]string{"a": "b"}, Taints: []fakeapi.Taint{{Key: "k", Value: "v", Effect: "NoSchedule"}}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok}))
	c := govultr.NewClient(hc)
	if err := c.SetBaseURL(s.URL()); err != nil {
		t.Fatal(err)
	}
	c.SetRetryLimit(0)
	var pools []govultr.NodePool
	opts := &govultr.ListOptions{PerPage: 2}
	for {
		page, meta, _, err := c.Kubernetes.ListNodePools(ctx, cid, opts)
		if err != nil {
			t.Fatal(err)
		}
		pools = append(pools, page...)
		if meta == nil || meta.Links == nil || meta.Links.Next == "" {
			break
		}
		opts.Cursor = meta.Links.Next
	}
	if len(pools) != 3 || !pools[0].AutoScaler || pools[0].MaxNodes != 5 || len(pools[0].Nodes) != 2 ||
		pools[0].Labels["a"] != "b" || len(pools[0].Taints) != 1 {
		t.Fatalf("SDK decoded pools %+v", pools)
	}
	np, _, err := c.Kubernetes.UpdateNodePool(ctx, cid, "p1", &govultr.NodePoolReqUpdate{NodeQuantity: 4})
	if err != nil || np.NodeQuantity != 4 {
		t.Fatalf("SDK UpdateNodePool: %+v, %v", np, err)
	}
	if err := c.Kubernetes.DeleteNodePoolInstance(ctx, cid, "p2", pools[1].Nodes[0].ID); err != nil {
		t.Fatalf("SDK DeleteNodePoolInstance: %v", err)
	}
	plans, _, _, err := c.Plan.List(ctx, "", &govultr.ListOptions{PerPage: 10})
	if err != nil || len(plans) == 0 {
		t.Fatalf("SDK Plan.List: %d, %v", len(plans), err)
	}
	_, _, err = c.Kubernetes.GetNodePool(ctx, cid, "nope")
	if err == nil || !strings.Contains(err.Error(), "Invalid node pool ID.") {
		t.Fatalf("SDK error for unknown pool: %v", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestHoldRemovalKeepsListingUntilSettle(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, fakeapi.Options{CloseLinger: time.Second})
	p, err := s.AddPool(cid, fakeapi.PoolSpec{ID: "p1", Label: "web", Plan: "vc2-1c-2gb", Quantity: 3, Min: 1, Max: 9, AutoScaler: true})
	if err != nil {
		t.Fatal(err)
	}
	victim := p.Nodes[0].ID
	s.HoldRemoval(victim)
	if resp, body := do(t, s, "DELETE", "/v2/kubernetes/clusters/c1/node-pools/p1/nodes/"+victim, "Bearer "+tok, ""); resp.StatusCode != 204 {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	clock.Advance(time.Hour)
	v, _ := s.Pool(cid, "p1")
	if v.Quantity != 2 || len(v.Nodes) != 3 || v.Nodes[0].ID != victim || v.Nodes[0].Status != "active" {
		t.Fatalf("held removal: quantity %d nodes %+v, want 2 and the victim still listed active", v.Quantity, v.Nodes)
	}
	s.Settle()
	if v, _ = s.Pool(cid, "p1"); len(v.Nodes) != 2 {
		t.Fatalf("after Settle: %+v, want the victim gone", v.Nodes)
	}
}
