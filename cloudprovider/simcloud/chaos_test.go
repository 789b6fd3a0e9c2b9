package simcloud

import (
	"net/http"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

func TestChaosPicksEachKindAsAKitFault(t *testing.T) {
	get := fakecloud.FaultRequest{Method: http.MethodGet, Path: "/v2/pools"}
	put := fakecloud.FaultRequest{Method: http.MethodPut, Path: "/v2/pools/p:scale", Mutating: true}
	// Volcengine sends its mutating actions as GET: the fake's word decides.
	volcRemove := fakecloud.FaultRequest{Method: http.MethodGet, Path: "/", Operation: "RemoveInstances", Mutating: true}
	slow := 3 * time.Second
	tests := []struct {
		kind FaultKind
		req  fakecloud.FaultRequest
		want fakecloud.Fault
	}{
		{FaultServerError, get, fakecloud.Fault{Status: http.StatusServiceUnavailable}},
		{FaultThrottle, get, fakecloud.Fault{Status: http.StatusTooManyRequests, RetryAfter: "1"}},
		{FaultReset, get, fakecloud.Fault{Reset: true}},
		{FaultSlow, put, fakecloud.Fault{Delay: slow, PassThrough: true}},
		{FaultSlowApplied, put, fakecloud.Fault{Delay: slow, PassThrough: true, AfterApply: true}},
		{FaultMalformed, get, fakecloud.Fault{Malformed: true}},
		{FaultMalformed, put, fakecloud.Fault{Malformed: true, AfterApply: true}},
		{FaultMalformed, volcRemove, fakecloud.Fault{Malformed: true, AfterApply: true}},
		{FaultLostAnswer, put, fakecloud.Fault{Status: http.StatusBadGateway, AfterApply: true}},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind)+" "+tc.req.Method+" "+tc.req.Operation, func(t *testing.T) {
			c := NewChaos(1)
			c.SetSlow(slow)
			c.SetFaults(1, tc.kind)
			got, hit := c.Pick(tc.req)
			if !hit || got != tc.want {
				t.Fatalf("Pick = %+v %v, want %+v", got, hit, tc.want)
			}
			if c.Injected()[tc.kind] != 1 || c.Passed() != 0 {
				t.Fatalf("counts injected %v passed %d", c.Injected(), c.Passed())
			}
		})
	}
}

func TestChaosRateZeroPassesEverything(t *testing.T) {
	c := NewChaos(1)
	c.SetFaults(0, FaultServerError)
	for range 50 {
		if _, hit := c.Pick(fakecloud.FaultRequest{Method: http.MethodGet}); hit {
			t.Fatal("rate 0 injected a fault")
		}
	}
	if c.Passed() != 50 || len(c.Injected()) != 0 {
		t.Fatalf("passed %d injected %v", c.Passed(), c.Injected())
	}
}
