package fakeapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// do sends an unsigned request (the fake verifies signatures only when keys are set).
func do(t *testing.T, base, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" && resp.StatusCode != 0 {
		t.Fatalf("%s %s: content type %q", method, path, ct)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, raw, err)
	}
	return resp.StatusCode, out
}

func newFake(t *testing.T, opts Options) (*Server, string, *fakecloud.ManualClock, string) {
	t.Helper()
	c := fakecloud.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.Now = c.Now
	s := New(opts)
	typ := s.AddInstanceType(exoapi.InstanceType{Family: "standard", Size: "tiny", CPUs: 1, MemoryBytes: 1 << 30})
	pool := s.AddInstancePool(PoolSeed{Name: "p", Size: 2, InstanceTypeID: typ})
	base := s.Start()
	t.Cleanup(s.Close)
	return s, base, c, pool
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	s, base, c, pool := newFake(t, Options{ProvisionDelay: time.Minute, RemovalDelay: 10 * time.Second, OperationDelay: 5 * time.Second})
	status, op := do(t, base, "PUT", "/instance-pool/"+pool+":scale", `{"size":4}`)
	if status != 200 || op["state"] != "pending" {
		t.Fatalf("scale: %d %v", status, op)
	}
	p, _ := s.Pool(pool)
	if p.Size != 4 || p.State != PoolScalingUp || len(p.Members) != 4 || p.Members[3].State != InstanceStarting {
		t.Fatalf("after scale: %+v", p)
	}
	c.Advance(5 * time.Second)
	if _, got := do(t, base, "GET", "/operation/"+op["id"].(string), ""); got["state"] != "success" {
		t.Fatalf("operation after its delay: %v", got)
	}
	c.Advance(time.Minute)
	if p, _ = s.Pool(pool); p.State != PoolRunning || p.Members[3].State != InstanceRunning {
		t.Fatalf("after provisioning: %+v", p)
	}
	victim := p.Members[0].ID
	status, _ = do(t, base, "PUT", "/instance-pool/"+pool+":evict", `{"instances":["`+victim+`"]}`)
	if p, _ = s.Pool(pool); status != 200 || p.Size != 3 || p.State != PoolScalingDown {
		t.Fatalf("after evict: %d %+v", status, p)
	}
	if status, _ := do(t, base, "PUT", "/instance-pool/"+pool+":evict", `{"instances":["`+victim+`"]}`); status != 400 {
		t.Fatalf("evicting a member twice: %d, want 400", status)
	}
	c.Advance(10 * time.Second)
	if p, _ = s.Pool(pool); len(p.Members) != 3 || p.State != PoolRunning {
		t.Fatalf("after removal: %+v", p)
	}
	if _, ok := s.Instance(victim); ok {
		t.Fatal("evicted instance still exists")
	}
	// Scaling down by size removes the newest members; scaling to zero is allowed.
	do(t, base, "PUT", "/instance-pool/"+pool+":scale", `{"size":0}`)
	s.Settle()
	if p, _ = s.Pool(pool); p.Size != 0 || len(p.Members) != 0 {
		t.Fatalf("after scale to 0: %+v", p)
	}
	if _, got := do(t, base, "GET", "/instance-pool/"+pool, ""); got["instances"] != nil {
		t.Fatalf("empty pool must omit instances: %v", got)
	}
}

func TestRejections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   Options
		prep   func(s *Server, base, pool string)
		path   string
		body   string
		status int
	}{
		{"negative size", Options{}, nil, ":scale", `{"size":-1}`, 400},
		{"missing size", Options{}, nil, ":scale", `{}`, 400},
		{"over quota", Options{QuotaLimit: 3}, nil, ":scale", `{"size":5}`, 400},
		{"unknown action", Options{}, nil, ":explode", `{}`, 404},
		{"busy pool refused", Options{Busy: BusyRefuse, ProvisionDelay: time.Minute}, func(s *Server, base, pool string) {
			req, _ := http.NewRequest("PUT", base+"/instance-pool/"+pool+":scale", bytes.NewBufferString(`{"size":3}`))
			resp, _ := http.DefaultClient.Do(req)
			resp.Body.Close()
		}, ":scale", `{"size":4}`, 409},
		{"foreign evict", Options{}, nil, ":evict", `{"instances":["nope"]}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, base, _, pool := newFake(t, tc.opts)
			if tc.prep != nil {
				tc.prep(s, base, pool)
			}
			before, _ := s.Pool(pool)
			status, body := do(t, base, "PUT", "/instance-pool/"+pool+tc.path, tc.body)
			if status != tc.status || body["message"] == "" {
				t.Fatalf("status %d body %v, want %d with a message", status, body, tc.status)
			}
			if after, _ := s.Pool(pool); after.Size != before.Size || len(after.Members) != len(before.Members) {
				t.Fatalf("rejected request changed the pool: %+v -> %+v", before, after)
			}
		})
	}
}

func TestFaultsAndLog(t *testing.T) {
	t.Parallel()
	s, base, _, pool := newFake(t, Options{})
	s.AddFault(fakecloud.Fault{Status: 429, RetryAfter: "7", Operation: "GET /v2/instance-pool/{id}"})
	if status, _ := do(t, base, "GET", "/instance-pool", ""); status != 200 {
		t.Fatalf("non-matching operation hit the fault: %d", status)
	}
	req, _ := http.NewRequest("GET", base+"/instance-pool/"+pool, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Fatalf("fault answered %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	s.FailNext(2)
	s.FailNext(0)
	if status, _ := do(t, base, "GET", "/instance-pool", ""); status != 200 {
		t.Fatalf("FailNext(0) did not clear: %d", status)
	}
	// Applied, answer lost: the pool takes the new size, the client hears 502.
	s.AddFault(fakecloud.Fault{Operation: "PUT /v2/instance-pool/{id}:scale", AfterApply: true, Status: http.StatusBadGateway})
	if status, body := do(t, base, "PUT", "/instance-pool/"+pool+":scale", `{"size":3}`); status != http.StatusBadGateway || body["message"] == "" {
		t.Fatalf("lost answer: %d %v, want 502 in the API's error shape", status, body)
	}
	if p, _ := s.Pool(pool); p.Size != 3 {
		t.Fatalf("AfterApply fault did not apply the scale: size %d", p.Size)
	}
	s.FailNextOperation(exoapi.OperationFailure, "unavailable", "no capacity")
	_, op := do(t, base, "PUT", "/instance-pool/"+pool+":scale", `{"size":5}`)
	if op["state"] != "failure" || op["reason"] != "unavailable" {
		t.Fatalf("forced failure operation %v", op)
	}
	if p, _ := s.Pool(pool); p.Size != 3 {
		t.Fatalf("failed operation changed the pool to %d", p.Size)
	}
	calls := s.OperationCounts()
	if calls["GET /v2/instance-pool"] != 2 || calls["GET /v2/instance-pool/{id}"] != 1 || calls["PUT /v2/instance-pool/{id}:scale"] != 2 {
		t.Fatalf("request log %v", calls)
	}
	if s.RequestCount() != 5 {
		t.Fatalf("RequestCount = %d, want 5", s.RequestCount())
	}
}

func TestSignatureRequired(t *testing.T) {
	t.Parallel()
	s := New(Options{APIKey: "EXOkey", APISecret: "secret"})
	base := s.Start()
	t.Cleanup(s.Close)
	if status, body := do(t, base, "GET", "/instance-pool", ""); status != 401 || !strings.Contains(body["message"].(string), "Authorization") {
		t.Fatalf("unsigned request: %d %v", status, body)
	}
}

// TestScaleToZeroAccepted: egoscale v3.1.43's spec takes size >= 0 (v3.1.30's
// took > 0); the provider is built on v3.1.43.
func TestScaleToZeroAccepted(t *testing.T) {
	t.Parallel()
	s, base, _, pool := newFake(t, Options{})
	if status, body := do(t, base, "PUT", "/instance-pool/"+pool+":scale", `{"size":0}`); status != 200 {
		t.Fatalf("status %d body %v, want 200", status, body)
	}
	s.Settle()
	if p, _ := s.Pool(pool); p.Size != 0 || len(p.Members) != 0 {
		t.Fatalf("pool size %d with %d members, want empty", p.Size, len(p.Members))
	}
}

func TestHoldRemovalKeepsListingUntilSettle(t *testing.T) {
	t.Parallel()
	s, base, c, pool := newFake(t, Options{RemovalDelay: time.Second})
	p, _ := s.Pool(pool)
	victim := p.Members[0].ID
	s.HoldRemoval(victim)
	if status, _ := do(t, base, "PUT", "/instance-pool/"+pool+":evict", `{"instances":["`+victim+`"]}`); status != 200 {
		t.Fatalf("evict: %d", status)
	}
	c.Advance(time.Hour)
	if _, got := do(t, base, "GET", "/instance/"+victim, ""); got["state"] != InstanceRunning {
		t.Fatalf("held removal lists the victim as %v, want running", got["state"])
	}
	if p, _ = s.Pool(pool); p.Size != 1 || p.State != PoolRunning || len(p.Members) != 2 {
		t.Fatalf("held removal: %+v, want size 1, running, the victim still a member", p)
	}
	s.Settle()
	if _, ok := s.Instance(victim); ok {
		t.Fatal("the victim survived Settle")
	}
}
