package cloudhttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// sdkError keeps its cause behind OrigErr, as the Volcengine SDK does.
type sdkError struct{ orig error }

func (e sdkError) Error() string         { return "RequestError: send request failed" }
func (e sdkError) OrigErr() error        { return e.orig }
func noProxy(*url.URL) (*url.URL, error) { return nil, nil }

func dnsFailure(host string) error {
	return &url.Error{Op: "Get", URL: "https://" + host + "/v2/x?id=1",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}}
}

func TestDiagnose(t *testing.T) {
	t.Parallel()
	timeout := &url.Error{Op: "Get", URL: "https://h.example/x", Err: fmt.Errorf("wrapped: %w", context.DeadlineExceeded)}
	cases := []struct {
		name     string
		err      error
		proxy    ProxyFunc
		kind     FailureKind
		host, op string
	}{
		{"dns", NoAnswer("vultr", "GET /v2/x", dnsFailure("api.vultr.invalid")), noProxy, FailureDNS, "api.vultr.invalid", "GET /v2/x"},
		{"dns behind OrigErr", &APIError{Cloud: "volcengine", Operation: "DescribeScalingGroups", Class: cloudprovider.ErrUnavailable, Cause: sdkError{orig: dnsFailure("open.volc.invalid")}}, noProxy, FailureDNS, "open.volc.invalid", "DescribeScalingGroups"},
		{"timeout", NoAnswer("exoscale", "ListInstancePools", timeout), noProxy, FailureTimeout, "h.example", "ListInstancePools"},
		{"context only", fmt.Errorf("volcengine DescribeScalingGroups: %w", context.DeadlineExceeded), noProxy, FailureTimeout, "", ""},
		{"timeout under a wrapper", fmt.Errorf("refresh: %w", NoAnswer("exoscale", "ListInstancePools", timeout)), noProxy, FailureTimeout, "h.example", "ListInstancePools"},
		{"through a proxy", NoAnswer("vultr", "GET /v2/x", dnsFailure("api.vultr.com")), func(*url.URL) (*url.URL, error) { return url.Parse("http://proxy.local:3128") }, FailureProxy, "proxy.local:3128", "GET /v2/x"},
		{"401", &APIError{Operation: "op", Status: 401}, noProxy, FailureUnauthenticated, "", "op"},
		{"403", &APIError{Operation: "op", Status: 403, Code: "AccessDenied"}, noProxy, FailurePermission, "", "op"},
		{"404", &APIError{Operation: "op", Status: 404}, noProxy, FailureNotFound, "", "op"},
		{"409", &APIError{Operation: "op", Status: 409}, noProxy, FailureStatus, "", "op"},
		{"not a call", errors.New("boom"), noProxy, FailureOther, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := Diagnose(tc.err, tc.proxy)
			if f.Kind != tc.kind || f.Host != tc.host || f.Operation != tc.op {
				t.Fatalf("Diagnose = %+v, want kind %d host %q operation %q", f, tc.kind, tc.host, tc.op)
			}
			if f.Network() && f.Cause == nil {
				t.Errorf("a network failure without its cause: %+v", f)
			}
			if f.Kind == FailureTimeout && strings.Contains(f.Cause.Error(), ": no answer") {
				t.Errorf("the timeout's cause is a wrapper, not where it happened: %v", f.Cause)
			}
		})
	}
}

// TestDiagnoseAnswerKeepsCode: an answer's code and message travel with
// its kind, for the one line.
func TestDiagnoseAnswerKeepsCode(t *testing.T) {
	t.Parallel()
	f := Diagnose(&APIError{Operation: "DescribeScalingGroups", Status: http.StatusForbidden, Code: "AccessDenied", Message: "not allowed"}, noProxy)
	if got := f.Answer(); got != "HTTP 403 AccessDenied: not allowed" {
		t.Fatalf("Answer = %q", got)
	}
}

// TestTransportCauseCutsTheURL: the kept cause names the host, never the
// path or query, and is still the network error underneath.
func TestTransportCauseCutsTheURL(t *testing.T) {
	t.Parallel()
	cause := TransportCause(sdkError{orig: dnsFailure("open.volc.invalid")})
	if cause == nil || strings.Contains(cause.Error(), "id=1") || strings.Contains(cause.Error(), "/v2/x") || !strings.Contains(cause.Error(), "open.volc.invalid") {
		t.Fatalf("TransportCause = %v", cause)
	}
	var dns *net.DNSError
	if !errors.As(cause, &dns) {
		t.Fatalf("the DNS error is lost: %v", cause)
	}
	if TransportCause(errors.New("no url")) != nil {
		t.Fatal("a cause without a request")
	}
}
