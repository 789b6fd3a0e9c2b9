package cloudhttp

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// Timeouts for cloud HTTP calls. The request's context (CA's ~5 s deadline,
// or the refresh budget) is the real bound; these stop a dead peer from
// holding a connection when a caller sets no deadline.
const (
	httpDialTimeout           = 5 * time.Second
	httpTLSHandshakeTimeout   = 5 * time.Second
	httpResponseHeaderTimeout = 20 * time.Second
	// httpOverallTimeout is a call's whole lifetime, retries and reading
	// the body included. It is a context deadline (lifetimeTransport), not
	// http.Client.Timeout: the latter starts a goroutine per request that
	// lives until the body is closed, and an SDK that never closes an error
	// answer's body (egoscale) leaks one per such answer.
	httpOverallTimeout = CallLifetime
)

// CallLifetime is a cloud call's whole lifetime, retries and reading the body
// included. The client abandons the call after it, so it also bounds how long
// a call's outcome can stay unknown.
const CallLifetime = 60 * time.Second

// maxErrorBody bounds how much of an error answer's body is kept.
const maxErrorBody = 4 << 10

// OperationFunc maps a cloud request to a low-cardinality operation name such
// as "GET /v2/kubernetes/clusters/{id}/node-pools".
type OperationFunc func(*http.Request) string

// ClientOptions are the process options the cloud HTTP client uses
// (registry.BuildOptions.ClientOptions). Each field means the same as the
// BuildOptions field of that name.
type ClientOptions struct {
	UserAgent           string
	InstrumentTransport func(base http.RoundTripper, operation OperationFunc) http.RoundTripper
	RateLimit           RateLimit
	ObserveRateLimit    func(waited time.Duration, refused bool)
	RateLimitNow        func() time.Time
	RateLimitSleep      func(ctx context.Context, d time.Duration) error
	// Dial and Proxy replace the network dialer and the proxy rule
	// (HTTPS_PROXY/NO_PROXY by default), so tests can fail a call's network
	// without touching the network.
	Dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	Proxy func(*http.Request) (*url.URL, error)
}

// HTTPStack is what one cloud adds to the shared HTTP stack: its operation
// names, its credentials when they are a transport, and retry tuning.
// NewHTTPClient adds the rest, the same for every cloud.
type HTTPStack struct {
	// Cloud names the cloud in logs ("vultr", "volcengine", "exoscale").
	Cloud string
	// Operation maps a request to a bounded label (metrics, logs).
	Operation OperationFunc
	// Auth wraps the retries with the cloud's credentials (Vultr's bearer
	// token), so each call picks up a rotated one. Nil when the SDK signs
	// the request before handing it to the client (Volcengine, Exoscale):
	// a retry then resends the same signed request, valid for minutes.
	Auth func(next http.RoundTripper) http.RoundTripper
	// Retry tunes the retries (tests inject Sleep); zero values take the
	// defaults.
	Retry RetryOptions
}

// NewHTTPClient returns the HTTP client a provider's thin client uses: its
// own transport (not http.DefaultTransport, which SDKs and libraries may
// change), explicit timeouts, no redirects across hosts, proxies only from
// HTTPS_PROXY/NO_PROXY. A request passes the layers in this order:
//
//  1. lifetime: a context deadline of httpOverallTimeout over the whole
//     call, retries included, released when the body is closed or read to
//     its end (no goroutine per request, see httpOverallTimeout);
//  2. answer record: the final answer's status, Retry-After and error body
//     for the thin client (RecordAnswer; SDKs drop them), the V(5) call
//     log, and the once-per-operation log of a JSON body with another
//     content type (DecodeJSON accepts it);
//  3. the cloud's auth (stack.Auth), when it is a transport;
//  4. retries (RetryTransport) with the one retry-safety rule, RetrySafe;
//  5. User-Agent;
//  6. the client-side rate limit, under the retries so every attempt pays,
//     above the instrumentation so a call refused locally is not counted
//     as a cloud call;
//  7. instrumentation (opts.InstrumentTransport): every attempt that leaves;
//  8. the send mark (TrackSends): records that a request left;
//  9. the network transport.
//
// Each call builds its own limiter. A provider builds one client, so the
// budget is per cloud account.
func NewHTTPClient(opts ClientOptions, stack HTTPStack) *http.Client {
	operation := stack.Operation
	if operation == nil {
		operation = func(r *http.Request) string { return r.Method }
	}
	proxy, dial := opts.Proxy, opts.Dial
	if proxy == nil {
		proxy = http.ProxyFromEnvironment
	}
	if dial == nil {
		dial = (&net.Dialer{Timeout: httpDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	var rt http.RoundTripper = &http.Transport{
		Proxy:                 proxy,
		DialContext:           dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   httpTLSHandshakeTimeout,
		ResponseHeaderTimeout: httpResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}
	rt = &sendTransport{base: rt}
	if opts.InstrumentTransport != nil {
		rt = opts.InstrumentTransport(rt, operation)
	}
	if limiter := NewRateLimiter(opts.RateLimit, RateLimiterOptions{
		Now: opts.RateLimitNow, Sleep: opts.RateLimitSleep, Observe: opts.ObserveRateLimit,
	}); limiter != nil {
		rt = &rateLimitTransport{base: rt, limiter: limiter}
	}
	if opts.UserAgent != "" {
		rt = &userAgentTransport{base: rt, userAgent: opts.UserAgent}
	}
	rt = NewRetryTransport(rt, stack.Retry)
	if stack.Auth != nil {
		rt = stack.Auth(rt)
	}
	rt = &answerTransport{base: rt, cloud: stack.Cloud, operation: operation}
	rt = &lifetimeTransport{base: rt, lifetime: httpOverallTimeout}
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			// A redirect to another host would carry our credentials there.
			if len(via) > 0 && req.URL.Host != via[0].URL.Host {
				return http.ErrUseLastResponse
			}
			if len(via) >= 5 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
}

// lifetimeTransport bounds a call's whole life with a context deadline.
type lifetimeTransport struct {
	base     http.RoundTripper
	lifetime time.Duration
}

func (t *lifetimeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.lifetime)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil || resp == nil {
		cancel()
		return resp, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases the call's deadline once its body is done with.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.cancel()
	}
	return n, err
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// Answer is the cloud's final answer to one call as the HTTP stack saw it.
// Thin clients over SDKs that drop statuses and headers classify from it
// (RecordAnswer).
type Answer struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	errorBody  []byte
}

// Status returns the final answer's HTTP status, 0 when none arrived.
func (a *Answer) Status() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.status
}

// RetryAfter returns the final answer's Retry-After (429 and 503), or 0.
func (a *Answer) RetryAfter() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.retryAfter
}

// ErrorBody returns up to 4 KiB of an error answer's (status >= 400) body.
func (a *Answer) ErrorBody() []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.errorBody
}

type answerKey struct{}

// RecordAnswer returns ctx carrying a record that the calls made with it
// fill with the cloud's final answer.
func RecordAnswer(ctx context.Context) (context.Context, *Answer) {
	a := &Answer{}
	return context.WithValue(ctx, answerKey{}, a), a
}

// answerTransport records the final answer (RecordAnswer) and logs each call
// at V(5): operation and status only, never headers or bodies, which carry
// credentials. Once per operation it also logs a success answer labelled as
// something other than JSON.
type answerTransport struct {
	base      http.RoundTripper
	cloud     string
	operation OperationFunc
	mislabel  sync.Map // operation -> struct{}
}

func (t *answerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	if klog.V(5).Enabled() {
		klog.V(5).InfoS("Cloud API call", "provider", t.cloud, "operation", t.operation(req), "status", status,
			"latency", time.Since(start), "err", err)
	}
	if resp != nil && status >= 200 && status < 300 && !isJSONType(resp.Header.Get("Content-Type")) {
		op := t.operation(req)
		if _, seen := t.mislabel.LoadOrStore(op, struct{}{}); !seen {
			klog.InfoS("Cloud answer not labelled as JSON; reading it as JSON", "provider", t.cloud,
				"operation", op, "contentType", resp.Header.Get("Content-Type"))
		}
	}
	rec, _ := req.Context().Value(answerKey{}).(*Answer)
	if rec == nil {
		return resp, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.status, rec.retryAfter, rec.errorBody = status, 0, nil
	if resp == nil || status < 400 {
		return resp, err
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		rec.retryAfter = RetryAfter(resp.Header, 0)
	}
	// Read and close the body here: an SDK that never closes an error
	// answer would otherwise pin its connection.
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if rerr == nil {
		rec.errorBody = body
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, err
}

// isJSONType reports whether a Content-Type names JSON (application/json or
// a +json type). An empty one (a bodiless answer) is not worth a log line.
func isJSONType(contentType string) bool {
	if contentType == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

type userAgentTransport struct {
	base      http.RoundTripper
	userAgent string
}

func (t *userAgentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// Our name goes first so cloud-side logs show which integration called,
	// whatever the SDK appends.
	ua := t.userAgent
	if sdk := req.Header.Get("User-Agent"); sdk != "" && sdk != ua {
		ua += " " + sdk
	}
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", ua)
	return t.base.RoundTrip(req)
}
