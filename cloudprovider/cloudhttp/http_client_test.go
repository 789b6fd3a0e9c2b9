package cloudhttp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2"
)

func TestNewHTTPClient(t *testing.T) {
	var gotUA string
	var redirected bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { redirected = true }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA = r.UserAgent()
		if r.URL.Path == "/away" {
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		}
	}))
	defer srv.Close()
	var instrumented []string
	c := NewHTTPClient(ClientOptions{
		UserAgent: "cluster-autoscaler-provider/test",
		InstrumentTransport: func(base http.RoundTripper, op OperationFunc) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				instrumented = append(instrumented, op(r))
				return base.RoundTrip(r)
			})
		},
	}, HTTPStack{Operation: func(r *http.Request) string { return r.Method + " " + r.URL.Path }})
	if c == http.DefaultClient || c.Transport == http.DefaultTransport {
		t.Fatal("client must have its own transport")
	}
	if c.Timeout != 0 {
		t.Fatal("the lifetime is a context deadline in the stack, not http.Client.Timeout")
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v2/x", nil)
	req.Header.Set("User-Agent", "sdk/1.0")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if gotUA != "cluster-autoscaler-provider/test sdk/1.0" {
		t.Fatalf("User-Agent %q", gotUA)
	}
	if len(instrumented) != 1 || instrumented[0] != "GET /v2/x" {
		t.Fatalf("instrumented %v", instrumented)
	}
	resp, err = c.Get(srv.URL + "/away")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if redirected || resp.StatusCode != http.StatusFound {
		t.Fatalf("followed a redirect to another host (status %d)", resp.StatusCode)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The lifetime is a context deadline on every call, retries included,
// released once the body is read.
func TestNewHTTPClientLifetimeIsAContextDeadline(t *testing.T) {
	var deadline time.Time
	var had bool
	c := NewHTTPClient(ClientOptions{InstrumentTransport: func(base http.RoundTripper, _ OperationFunc) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			deadline, had = r.Context().Deadline()
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
		})
	}}, HTTPStack{})
	start := time.Now()
	resp, err := c.Get("http://cloud.invalid/x")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !had || deadline.Sub(start) > httpOverallTimeout+time.Second || deadline.Sub(start) < httpOverallTimeout-time.Second {
		t.Fatalf("request deadline %v (set %v), want about %s from now", deadline, had, httpOverallTimeout)
	}
	if c.Timeout != 0 {
		t.Fatalf("http.Client.Timeout = %s; the lifetime belongs to the stack", c.Timeout)
	}
}

// The stack records the final answer for clients over SDKs that drop it,
// and retries by the one rule: reads and idempotent calls, never CallOnce.
func TestNewHTTPClientRecordsAnswerAndRetriesByOneRule(t *testing.T) {
	attempts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts++
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"message":"down"}`)
	}))
	defer srv.Close()
	c := NewHTTPClient(ClientOptions{}, HTTPStack{Retry: RetryOptions{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}})
	for _, tc := range []struct {
		name     string
		method   string
		kind     CallKind
		attempts int
	}{
		{"GET read", http.MethodGet, CallByMethod, 2},
		{"GET stated once (a Volcengine RemoveInstances)", http.MethodGet, CallOnce, 1},
		{"PATCH by method", http.MethodPatch, CallByMethod, 1},
		{"PATCH stated idempotent", http.MethodPatch, CallIdempotent, 2},
		{"PUT by method", http.MethodPut, CallByMethod, 2},
	} {
		attempts = 0
		ctx, ans := RecordAnswer(WithCallKind(context.Background(), tc.kind))
		req, _ := http.NewRequestWithContext(ctx, tc.method, srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if attempts != tc.attempts {
			t.Errorf("%s: %d attempts, want %d", tc.name, attempts, tc.attempts)
		}
		if ans.Status() != http.StatusServiceUnavailable || ans.RetryAfter() != 7*time.Second || string(ans.ErrorBody()) != `{"message":"down"}` {
			t.Errorf("%s: recorded %d, %s, %q", tc.name, ans.Status(), ans.RetryAfter(), ans.ErrorBody())
		}
	}
}

func TestIsJSONType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "application/problem+json": true, "": true,
		"text/plain": false, "text/html; charset=utf-8": false, "garbage;;": false,
	} {
		if got := isJSONType(ct); got != want {
			t.Errorf("isJSONType(%q) = %v, want %v", ct, got, want)
		}
	}
}

// A JSON answer labelled otherwise is logged once per operation, not per call.
func TestNewHTTPClientLogsMislabelledJSONOncePerOperation(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	klog.LogToStderr(false)
	klog.SetOutput(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) }))
	t.Cleanup(func() { klog.SetOutput(io.Discard); klog.LogToStderr(true) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	c := NewHTTPClient(ClientOptions{}, HTTPStack{Cloud: "testcloud", Operation: func(r *http.Request) string { return "GET " + r.URL.Path }})
	for _, path := range []string{"/a", "/a", "/a", "/b"} {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	klog.Flush()
	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	for op, want := range map[string]int{`operation="GET /a"`: 1, `operation="GET /b"`: 1} {
		n := 0
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, "not labelled as JSON") && strings.Contains(line, `provider="testcloud"`) && strings.Contains(line, op) {
				n++
			}
		}
		if n != want {
			t.Errorf("%s logged %d times, want %d:\n%s", op, n, want, logs)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
