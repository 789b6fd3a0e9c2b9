package simcloud

import (
	"net/http"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
)

func TestChaosPicksEachKindAsAKitFault(t *testing.T) {
	get := cloudprovidertest.FaultRequest{Method: http.MethodGet, Path: "/v2/pools"}
	put := cloudprovidertest.FaultRequest{Method: http.MethodPut, Path: "/v2/pools/p:scale", Mutating: true}
	// Volcengine sends its mutating actions as GET: the fake's word decides.
	volcRemove := cloudprovidertest.FaultRequest{Method: http.MethodGet, Path: "/", Operation: "RemoveInstances", Mutating: true}
	slow := 3 * time.Second
	tests := []struct {
		kind FaultKind
		req  cloudprovidertest.FaultRequest
		want cloudprovidertest.Fault
	}{
		{FaultServerError, get, cloudprovidertest.Fault{Status: http.StatusServiceUnavailable}},
		{FaultThrottle, get, cloudprovidertest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "1"}},
		{FaultReset, get, cloudprovidertest.Fault{Reset: true}},
		{FaultSlow, put, cloudprovidertest.Fault{Delay: slow, PassThrough: true}},
		{FaultSlowApplied, put, cloudprovidertest.Fault{Delay: slow, PassThrough: true, AfterApply: true}},
		{FaultMalformed, get, cloudprovidertest.Fault{Malformed: true}},
		{FaultMalformed, put, cloudprovidertest.Fault{Malformed: true, AfterApply: true}},
		{FaultMalformed, volcRemove, cloudprovidertest.Fault{Malformed: true, AfterApply: true}},
		{FaultLostAnswer, put, cloudprovidertest.Fault{Status: http.StatusBadGateway, AfterApply: true}},
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
		if _, hit := c.Pick(cloudprovidertest.FaultRequest{Method: http.MethodGet}); hit {
			t.Fatal("rate 0 injected a fault")
		}
	}
	if c.Passed() != 50 || len(c.Injected()) != 0 {
		t.Fatalf("passed %d injected %v", c.Passed(), c.Injected())
	}
}
