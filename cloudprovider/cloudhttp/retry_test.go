package cloudhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// scripted answers with the given statuses in order, then 200.
func scripted(t *testing.T, headers http.Header, statuses ...int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		body, _ := io.ReadAll(r.Body)
		for k, v := range headers {
			w.Header()[k] = v
		}
		if i < len(statuses) {
			w.WriteHeader(statuses[i])
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRetryTransport(t *testing.T) {
	cases := []struct {
		name     string
		method   string
		statuses []int
		headers  http.Header
		deadline time.Duration
		want     int
		calls    int32
		waits    []time.Duration
	}{
		{name: "5xx then ok on GET", method: "GET", statuses: []int{503, 502}, want: 200, calls: 3, waits: []time.Duration{200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "5xx not retried on POST", method: "POST", statuses: []int{500}, want: 500, calls: 1},
		{name: "4xx never retried", method: "GET", statuses: []int{404}, want: 404, calls: 1},
		{name: "429 honours Retry-After", method: "POST", statuses: []int{429}, headers: http.Header{"Retry-After": {"2"}}, want: 200, calls: 2, waits: []time.Duration{2 * time.Second}},
		{name: "429 beyond deadline returned at once", method: "GET", statuses: []int{429}, headers: http.Header{"Retry-After": {"30"}}, deadline: 5 * time.Second, want: 429, calls: 1},
		{name: "gives up after max attempts", method: "GET", statuses: []int{500, 500, 500, 500, 500}, want: 500, calls: 4, waits: []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := scripted(t, tc.headers, tc.statuses...)
			var waits []time.Duration
			rt := NewRetryTransport(http.DefaultTransport, RetryOptions{Sleep: func(ctx context.Context, d time.Duration) error {
				waits = append(waits, d)
				return nil
			}})
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, tc.method, srv.URL, strings.NewReader("payload"))
			resp, err := (&http.Client{Transport: rt}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || calls.Load() != tc.calls {
				t.Fatalf("status %d after %d calls, want %d after %d", resp.StatusCode, calls.Load(), tc.want, tc.calls)
			}
			if tc.want == 200 && string(body) != "payload" {
				t.Fatalf("retried request lost its body: %q", body)
			}
			if len(waits) != len(tc.waits) {
				t.Fatalf("waits %v, want %v", waits, tc.waits)
			}
			for i := range waits {
				if waits[i] != tc.waits[i] {
					t.Fatalf("waits %v, want %v", waits, tc.waits)
				}
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	if d := RetryAfter(http.Header{"Retry-After": {"3"}}, time.Second); d != 3*time.Second {
		t.Fatal(d)
	}
	if d := RetryAfter(http.Header{}, time.Second); d != time.Second {
		t.Fatal(d)
	}
	if d := RetryAfter(http.Header{"Retry-After": {"soon"}}, time.Second); d != time.Second {
		t.Fatal(d)
	}
}

func TestRetryAfterHugeValueIsClamped(t *testing.T) {
	if d := RetryAfter(http.Header{"Retry-After": {"9227000000"}}, time.Second); d != 24*time.Hour {
		t.Fatalf("RetryAfter(9227000000) = %s, want the one-day cap", d)
	}
}

// A call the client-side budget refused is not retried: the limiter would
// refuse it again, after backoff spent from the caller's deadline.
func TestRetryTransportKeepsALocalRefusal(t *testing.T) {
	attempts, slept := 0, 0
	rt := NewRetryTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		attempts++
		return nil, fmt.Errorf("budget: %w", cloudprovider.ErrRateLimited)
	}), RetryOptions{Sleep: func(context.Context, time.Duration) error { slept++; return nil }})
	req := httptest.NewRequest(http.MethodGet, "http://cloud.invalid/list", nil)
	if _, err := rt.RoundTrip(req); !errors.Is(err, cloudprovider.ErrRateLimited) {
		t.Fatalf("err = %v, want ErrRateLimited", err)
	}
	if attempts != 1 || slept != 0 {
		t.Fatalf("%d attempts and %d backoff sleeps, want 1 and 0", attempts, slept)
	}
}

// A refusal that follows an attempt the cloud may have carried out (a 5xx)
// is not a refusal of the request: the first attempt may have landed and be
// why the retry is refused (a pool busy resizing). It reaches the caller as
// an outcome-unknown error. A 429 before it leaves the outcome known; a 404
// (gone, most likely by the first attempt) and reads keep their answer.
func TestRetryTransportRefusalAfterUncertainAttempt(t *testing.T) {
	cases := []struct {
		name, method string
		statuses     []int
		unknown      bool
		want         int
	}{
		{name: "PATCH 502 then 400", method: "PATCH", statuses: []int{502, 400}, unknown: true},
		{name: "DELETE 503 then 409", method: "DELETE", statuses: []int{503, 409}, unknown: true},
		{name: "PATCH 502 then 429 until the attempts run out", method: "PATCH", statuses: []int{502, 429, 429, 429}, unknown: true},
		{name: "PATCH 429 then 400", method: "PATCH", statuses: []int{429, 400}, want: 400},
		{name: "DELETE 502 then 404", method: "DELETE", statuses: []int{502, 404}, want: 404},
		{name: "GET 502 then 400", method: "GET", statuses: []int{502, 400}, want: 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := scripted(t, nil, tc.statuses...)
			rt := NewRetryTransport(http.DefaultTransport, RetryOptions{
				Sleep: func(context.Context, time.Duration) error { return nil },
			})
			ctx := context.Background()
			if tc.method == http.MethodPatch {
				// An absolute size, as Vultr's node-pool PATCH.
				ctx = WithCallKind(ctx, CallIdempotent)
			}
			req, _ := http.NewRequestWithContext(ctx, tc.method, srv.URL, strings.NewReader("payload"))
			resp, err := (&http.Client{Transport: rt}).Do(req)
			if tc.unknown {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("answered %d, want an outcome-unknown error", resp.StatusCode)
				}
				if !cloudprovider.OutcomeUnknown(err) || !errors.Is(err, cloudprovider.ErrUnavailable) {
					t.Fatalf("error %v: OutcomeUnknown %v, want true and ErrUnavailable", err, cloudprovider.OutcomeUnknown(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

// Our rate limit refusing a retry after an attempt the cloud may have
// carried out: the refusal alone would read as "nothing changed", but the
// first attempt may have landed, so the outcome stays unknown.
func TestRetryTransportLocalRefusalAfterUncertainAttemptIsUnknown(t *testing.T) {
	attempts := 0
	rt := NewRetryTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		attempts++
		if attempts == 1 {
			return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		}
		return nil, cloudprovider.Refusal(fmt.Errorf("budget: %w", cloudprovider.ErrRateLimited))
	}), RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }})
	req, _ := http.NewRequestWithContext(WithCallKind(context.Background(), CallIdempotent), http.MethodGet, "http://cloud.invalid/?Action=ModifyScalingGroup", nil)
	_, err := rt.RoundTrip(req)
	if !errors.Is(err, cloudprovider.ErrRateLimited) || cloudprovider.OutcomeOf(err) != cloudprovider.MutationUnknown {
		t.Fatalf("err %v (outcome %s), want rate limited and unknown", err, cloudprovider.OutcomeOf(err))
	}
	// The same refusal on a first attempt is our own refusal.
	attempts = 1
	if _, err := rt.RoundTrip(req); cloudprovider.OutcomeOf(err) != cloudprovider.MutationRefused {
		t.Fatalf("a first attempt refused locally: outcome %s, want refused", cloudprovider.OutcomeOf(err))
	}
}
