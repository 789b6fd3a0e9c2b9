package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"sync"
	"time"
)

// FaultKind is one way the proxy breaks a cloud request.
type FaultKind string

// The faults the proxy injects. Each mimics something real clouds do.
const (
	// FaultServerError answers 503 with a JSON body the API would not send.
	FaultServerError FaultKind = "5xx"
	// FaultThrottle answers 429 with Retry-After: 1.
	FaultThrottle FaultKind = "429+Retry-After"
	// FaultReset closes the connection without an answer (TCP RST).
	FaultReset FaultKind = "reset"
	// FaultSlow holds the request past the caller's deadline (see SetSlow);
	// it reaches the cloud only if the caller is still waiting by then.
	FaultSlow FaultKind = "slow"
	// FaultSlowApplied holds the request past the caller's deadline, then
	// forwards it anyway: the cloud applies what the caller gave up on, after
	// the caller may already have sent its next change.
	FaultSlowApplied FaultKind = "slow-applied"
	// FaultMalformed answers 200 with a truncated JSON body; a mutation is
	// applied first, as when a gateway mangles the answer.
	FaultMalformed FaultKind = "malformed"
	// FaultLostAnswer applies the request at the fake and then answers 502,
	// as when the answer is lost on the way back.
	FaultLostAnswer FaultKind = "lost-answer"
)

// DefaultFaults are the faults the soak injects unless told otherwise.
var DefaultFaults = []FaultKind{FaultServerError, FaultThrottle, FaultReset, FaultSlow, FaultMalformed, FaultLostAnswer}

// AllFaults lists every fault kind.
var AllFaults = append(append([]FaultKind(nil), DefaultFaults...), FaultSlowApplied)

// slowCap bounds a slow fault when the client never gives up (no deadline),
// so a forgotten context shows up as a slow call, not a hung program.
const slowCap = 30 * time.Second

// Proxy is a reverse proxy in front of a fake cloud that injects faults at a
// configurable rate.
type Proxy struct {
	target *url.URL
	rp     *httputil.ReverseProxy
	srv    *httptest.Server
	stop   chan struct{}

	mu       sync.Mutex
	rnd      *rand.Rand
	rate     float64
	slow     time.Duration
	kinds    []FaultKind
	injected map[FaultKind]int
	passed   int
}

// NewProxy starts a proxy to base on a loopback port. It injects nothing
// until SetFaults is called.
func NewProxy(base string, seed int64) (*Proxy, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("cluster: proxy target %q: %w", base, err)
	}
	p := &Proxy{
		target:   u,
		rp:       httputil.NewSingleHostReverseProxy(u),
		stop:     make(chan struct{}),
		slow:     slowCap,
		rnd:      rand.New(rand.NewSource(seed)),
		injected: map[FaultKind]int{},
	}
	// Errors here are the faults we injected or the client giving up; the
	// default handler would log each one.
	p.rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
	p.srv = httptest.NewServer(p)
	return p, nil
}

// URL is the proxy's base URL.
func (p *Proxy) URL() string { return p.srv.URL }

// SetFaults makes a share rate (0..1) of requests fail with one of kinds,
// chosen uniformly. Rate 0 turns faults off.
func (p *Proxy) SetFaults(rate float64, kinds ...FaultKind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = rate
	p.kinds = append([]FaultKind(nil), kinds...)
}

// SetSlow sets how long a slow fault holds a request before forwarding it
// (default 30 s). Requests whose client gave up meanwhile are still forwarded.
func (p *Proxy) SetSlow(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.slow = d
}

// Injected returns how many faults of each kind were injected.
func (p *Proxy) Injected() map[FaultKind]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[FaultKind]int, len(p.injected))
	for k, v := range p.injected {
		out[k] = v
	}
	return out
}

// Passed returns how many requests went through untouched.
func (p *Proxy) Passed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.passed
}

// Close stops the proxy and releases every held request.
func (p *Proxy) Close() {
	close(p.stop)
	p.srv.CloseClientConnections()
	p.srv.Close()
}

func (p *Proxy) pick() FaultKind {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rate <= 0 || len(p.kinds) == 0 || p.rnd.Float64() >= p.rate {
		p.passed++
		return ""
	}
	k := p.kinds[p.rnd.Intn(len(p.kinds))]
	p.injected[k]++
	return k
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch kind := p.pick(); kind {
	case FaultServerError:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":"injected: service unavailable"}`)
	case FaultThrottle:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":"injected: rate limited"}`)
	case FaultReset:
		reset(w)
	case FaultSlow, FaultSlowApplied:
		applyLate := kind == FaultSlowApplied
		// net/http notices a client that gave up (and cancels r's context)
		// only once the request body has been read; read it first, or a
		// dropped request would be forwarded as if still wanted.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		hold := p.slow
		p.mu.Unlock()
		t := time.NewTimer(hold)
		defer t.Stop()
		select {
		case <-p.stop:
			w.WriteHeader(http.StatusGatewayTimeout)
			return
		case <-t.C:
		}
		if r.Context().Err() != nil {
			if applyLate {
				p.forwardDiscard(r.WithContext(context.WithoutCancel(r.Context())))
			}
			return
		}
		p.rp.ServeHTTP(w, r)
	case FaultMalformed:
		if r.Method != http.MethodGet {
			p.forwardDiscard(r)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"truncated": [{"id": "`)
	case FaultLostAnswer:
		p.forwardDiscard(r)
		w.WriteHeader(http.StatusBadGateway)
	default:
		p.rp.ServeHTTP(w, r)
	}
}

// forwardDiscard sends r to the fake and throws the answer away.
func (p *Proxy) forwardDiscard(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	p.rp.ServeHTTP(rec, r)
}

func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// FaultSummary renders counts as "kind=n" pairs in a stable order.
func FaultSummary(m map[FaultKind]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%d", k, m[FaultKind(k)])
	}
	return b.String()
}
