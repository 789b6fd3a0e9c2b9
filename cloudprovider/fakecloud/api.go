package fakecloud

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// APIConfig is what a fake cloud tells the shared kit about itself.
type APIConfig struct {
	// Routes answers requests the way the cloud does. The kit calls it for
	// every request no fault stops, and for AfterApply faults.
	Routes http.Handler
	// Operation names a request for fault matching and per-operation counts.
	// body is the request body (already read; r.Body can be read again).
	Operation func(r *http.Request, body []byte) string
	// WriteError writes the cloud's own error answer.
	WriteError func(w http.ResponseWriter, status int, code, message string)
	// MalformedBody is what a Malformed fault sends (default `{"truncated`).
	MalformedBody string
	// ContentType is the cloud's JSON content type (default application/json).
	ContentType string
	// BasePath is appended to the server URL by Start, e.g. "/v2".
	BasePath string
	// Now is the fake's clock (default time.Now); tests pass a ManualClock's Now.
	Now func() time.Time
	// LogLimit is how many of the latest requests the log keeps in full
	// (default DefaultLogLimit); older ones are only counted, so a fake
	// serving --simulate for days stays in bounded memory.
	LogLimit int
	// Mutating tells whether a request with operation name op changes the
	// cloud (default: any method but GET and HEAD). A fault policy reads it
	// to apply a mutation before garbling its answer.
	Mutating func(r *http.Request, op string) bool
}

// API is the machinery every fake cloud shares: the fault queue, the
// request log and the loopback server. A fake embeds it, so its fault and
// log methods have the same names in every cloud.
type API struct {
	faults   FaultQueue
	recorder *Recorder
	cfg      APIConfig
	// stop releases requests held by a Delay when the fake closes.
	stop     chan struct{}
	stopOnce sync.Once
	// serving is read-held by every request being served, so Close can wait
	// for them: nothing changes the fake's state once Close returns.
	serving sync.RWMutex

	mu       sync.Mutex
	server   *http.Server
	url      string
	policy   func(FaultRequest) (Fault, bool)
	observer func(Exchange)
}

// Exchange is one request a fake answered in the cloud's own words: from its
// routes, or with its error writer for a fault that states a status. Tests
// check exchanges against the cloud's published API description.
type Exchange struct {
	Method string
	URL    *url.URL
	Header http.Header
	Body   []byte
	// Status, AnswerHeader and Answer are what the fake sent back.
	Status       int
	AnswerHeader http.Header
	Answer       []byte
	// Fault reports that an injected fault chose the answer; its body is
	// still the cloud's error shape.
	Fault bool
}

// Observe makes fn see every Exchange from now on (nil stops it). Answers a
// fault garbles on purpose (malformed bodies, resets, hangs) are not
// exchanges: no cloud sends them by design.
func (a *API) Observe(fn func(Exchange)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.observer = fn
}

func (a *API) observe(r *http.Request, body []byte, c *capture, fault bool) {
	a.mu.Lock()
	fn := a.observer
	a.mu.Unlock()
	if fn == nil || c == nil {
		return
	}
	fn(Exchange{
		Method: r.Method, URL: r.URL, Header: r.Header.Clone(), Body: body,
		Status: c.code, AnswerHeader: c.header.Clone(), Answer: bytes.Clone(c.body.Bytes()), Fault: fault,
	})
}

// NewAPI returns the kit for one fake cloud.
func NewAPI(cfg APIConfig) *API {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MalformedBody == "" {
		cfg.MalformedBody = `{"truncated`
	}
	if cfg.ContentType == "" {
		cfg.ContentType = "application/json"
	}
	if cfg.Operation == nil {
		cfg.Operation = func(r *http.Request, _ []byte) string { return r.Method + " " + r.URL.Path }
	}
	if cfg.LogLimit <= 0 {
		cfg.LogLimit = DefaultLogLimit
	}
	if cfg.Mutating == nil {
		cfg.Mutating = func(r *http.Request, _ string) bool {
			return r.Method != http.MethodGet && r.Method != http.MethodHead
		}
	}
	return &API{cfg: cfg, recorder: newRecorder(cfg.LogLimit), stop: make(chan struct{})}
}

// Now reads the fake's clock: APIConfig.Now, or the wall clock when none was
// given. A fake reads its own time through it, so the fake and the kit (the
// request log, Delay faults) never disagree on the time.
func (a *API) Now() time.Time { return a.cfg.Now() }

// Serve serves the fake on a loopback port (127.0.0.1:0) and returns the
// endpoint to give the client; a second call returns the same endpoint.
// Call Close when done.
func (a *API) Serve() (string, error) { return a.ServeAt("") }

// ServeAt is Serve on addr (host:port; "" is 127.0.0.1:0), so a client
// outside the process (an in-tree Cluster Autoscaler) can be pointed at a
// known address.
func (a *API) ServeAt(addr string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.server != nil {
		return a.url + a.cfg.BasePath, nil
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("fake cloud: listen on %s: %w", addr, err)
	}
	// A client that never sends its headers must not hold a connection for
	// the life of a --simulate server.
	srv := &http.Server{Handler: a, ReadHeaderTimeout: 30 * time.Second}
	a.server, a.url = srv, "http://"+ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	return a.url + a.cfg.BasePath, nil
}

// Start is Serve for tests: it panics when no loopback port is free, as
// httptest.NewServer does.
func (a *API) Start() string {
	url, err := a.Serve()
	if err != nil {
		panic(err)
	}
	return url
}

// URL returns the endpoint Serve returned, or "" before Serve.
func (a *API) URL() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.server == nil {
		return ""
	}
	return a.url + a.cfg.BasePath
}

// Close stops the server Serve started and waits for the requests it was
// serving. Requests still hanging on a fault end with it.
func (a *API) Close() {
	a.stopOnce.Do(func() { close(a.stop) })
	a.mu.Lock()
	srv := a.server
	a.server, a.url = nil, ""
	a.mu.Unlock()
	if srv != nil {
		// Close drops every open connection, so a Hang fault's request sees
		// its context end.
		_ = srv.Close()
	}
	a.serving.Lock()
	defer a.serving.Unlock()
}

// WaitFinished blocks until n requests (counted since the last
// ResetRequests) have been fully served, including requests a Delay held
// after their client gave up, so a test can look at what they did.
func (a *API) WaitFinished(n int) { a.recorder.waitFinished(n) }

// WaitIdle blocks until every request received so far (since the last
// ResetRequests) has been served, held ones included: a request a Delay
// holds after its client gave up may still change the cloud until then.
func (a *API) WaitIdle() { a.recorder.waitFinished(a.recorder.Count()) }

// SetFaultPolicy makes policy pick a fault for every request no queued fault
// hits (nil turns it off). The soak uses it to inject faults at random.
func (a *API) SetFaultPolicy(policy func(FaultRequest) (Fault, bool)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.policy = policy
}

func (a *API) takeFault(r FaultRequest) (Fault, bool) {
	if f, hit := a.faults.Take(r); hit {
		return f, true
	}
	a.mu.Lock()
	policy := a.policy
	a.mu.Unlock()
	if policy == nil {
		return Fault{}, false
	}
	return policy(r)
}

// AddFault queues a fault (see Fault).
func (a *API) AddFault(f Fault) { a.faults.Add(f) }

// FailNext makes the next n requests fail with the cloud's 500 answer; n = 0
// stops failing.
func (a *API) FailNext(n int) { a.faults.FailNext(n) }

// ClearFaults drops every pending fault.
func (a *API) ClearFaults() { a.faults.Clear() }

// PendingFaults reports how many requests the pending faults would still hit.
func (a *API) PendingFaults() int { return a.faults.Pending() }

// Requests returns a copy of the request log: the latest requests (at most
// APIConfig.LogLimit of them), oldest first.
func (a *API) Requests() []RecordedRequest { return a.recorder.Requests() }

// RequestsSince returns the logged requests from the n-th received on
// (counting from 0 since the last ResetRequests), so a test can take a
// RequestCount and later read what came after it.
func (a *API) RequestsSince(n int) []RecordedRequest { return a.recorder.Since(n) }

// RequestCount returns how many requests the fake has received.
func (a *API) RequestCount() int { return a.recorder.Count() }

// CountOperation returns how many requests had the operation name op.
func (a *API) CountOperation(op string) int { return a.recorder.CountOperation(op) }

// OperationCounts returns the number of requests per operation name.
func (a *API) OperationCounts() map[string]int { return a.recorder.OperationCounts() }

// ResetRequests empties the request log and zeroes the counts.
func (a *API) ResetRequests() { a.recorder.Reset() }

// ServeHTTP records the request, then answers it with the first matching
// fault or the cloud's routes.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.serving.RLock()
	defer a.serving.RUnlock()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	op := a.cfg.Operation(r, body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	entry := &RecordedRequest{
		Time: a.cfg.Now(), Method: r.Method, Path: r.URL.Path, Operation: op,
		Query: r.URL.Query(), Header: r.Header.Clone(), Body: body,
	}
	a.recorder.record(entry)

	fault, hit := a.takeFault(FaultRequest{Method: r.Method, Path: r.URL.Path, Operation: op, Mutating: a.cfg.Mutating(r, op)})
	if hit && fault.Landed != nil {
		defer close(fault.Landed)
	}
	held := hit && (fault.Delay > 0 || fault.Release != nil)
	var early *capture
	if held && fault.AnswerOnArrival {
		early = &capture{header: http.Header{}, code: http.StatusOK}
		a.cfg.Routes.ServeHTTP(early, r)
	}
	if hit && fault.Arrived != nil {
		close(fault.Arrived)
	}
	if held && !a.hold(r, fault) {
		if early == nil && fault.AfterApply && !a.closed() {
			r.Body = io.NopCloser(bytes.NewReader(body))
			a.cfg.Routes.ServeHTTP(discard{}, r.WithContext(context.WithoutCancel(r.Context())))
		}
		a.recorder.finish(entry, 0, true)
		return
	}
	if early != nil {
		early.replay(w)
		a.recorder.finish(entry, early.code, true)
		a.observe(r, body, early, false)
		return
	}
	if !hit || fault.PassThrough {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK, copy: a.copyAnswers()}
		a.cfg.Routes.ServeHTTP(rec, r)
		a.recorder.finish(entry, rec.status, hit)
		a.observe(r, body, rec.copy, false)
		return
	}
	if fault.AfterApply {
		// The change happens; its answer is dropped for the fault's, except
		// that a success the cloud refused stays refused: a garbled 2xx
		// means the cloud carried the request out, and no gateway turns
		// the cloud's 409 into a 200.
		real := &capture{header: http.Header{}, code: http.StatusOK}
		a.cfg.Routes.ServeHTTP(real, r)
		if st := fault.AnswerStatus(); st >= 200 && st < 300 && (real.code < 200 || real.code >= 300) {
			real.replay(w)
			a.recorder.finish(entry, real.code, true)
			a.observe(r, body, real, false)
			return
		}
	}
	switch {
	case fault.Reset:
		// Logged first: the client sees the reset at once.
		a.recorder.finish(entry, 0, true)
		resetConnection(w)
	case fault.Hang:
		// Logged first: the client gives up before the hang ends.
		a.recorder.finish(entry, 0, true)
		<-r.Context().Done()
	default:
		answer := &statusRecorder{ResponseWriter: w, status: http.StatusOK, copy: a.copyAnswers()}
		a.recorder.finish(entry, a.answerFault(answer, fault), true)
		if !fault.Malformed && fault.Body == nil {
			a.observe(r, body, answer.copy, true)
		}
	}
}

// copyAnswers returns a capture for an answer's copy when an observer wants
// exchanges, else nil.
func (a *API) copyAnswers() *capture {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.observer == nil {
		return nil
	}
	return &capture{header: http.Header{}, code: http.StatusOK}
}

// hold waits out f's Delay and Release and reports whether the client still
// waits.
func (a *API) hold(r *http.Request, f Fault) bool {
	if f.Delay > 0 {
		timer := time.NewTimer(f.Delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-a.stop:
			return false
		}
	}
	if f.Release != nil {
		select {
		case <-f.Release:
		case <-a.stop:
			return false
		}
	}
	return r.Context().Err() == nil
}

func (a *API) closed() bool {
	select {
	case <-a.stop:
		return true
	default:
		return false
	}
}

// answerFault writes f's answer and returns the status sent. The server
// sends it once ServeHTTP returns, after the log has it.
func (a *API) answerFault(w http.ResponseWriter, f Fault) int {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	status := f.AnswerStatus()
	switch {
	case f.Malformed || f.Body != nil:
		body := a.cfg.MalformedBody
		if f.Body != nil {
			body = *f.Body
		}
		contentType := f.ContentType
		if contentType == "" {
			contentType = a.cfg.ContentType
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	default:
		message := f.Message
		if message == "" {
			message = http.StatusText(status)
		}
		a.cfg.WriteError(w, status, f.Code, message)
	}
	return status
}

// resetConnection drops the TCP connection with a RST, as a load balancer
// losing the backend does; the client sees "connection reset by peer".
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("fakecloud: a Reset fault needs a hijackable connection")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// capture holds the cloud's own answer: to a change whose answer a fault
// replaces, so the fault can tell a refusal from a success, or to a request
// answered on arrival and sent later (Fault.AnswerOnArrival).
type capture struct {
	header http.Header
	code   int
	body   bytes.Buffer
	wrote  bool
}

func (c *capture) Header() http.Header { return c.header }

func (c *capture) Write(b []byte) (int, error) {
	c.wrote = true
	return c.body.Write(b)
}

func (c *capture) WriteHeader(code int) {
	if !c.wrote {
		c.code, c.wrote = code, true
	}
}

// replay sends the captured answer on w.
func (c *capture) replay(w http.ResponseWriter) {
	for k, v := range c.header {
		w.Header()[k] = v
	}
	w.WriteHeader(c.code)
	_, _ = w.Write(c.body.Bytes())
}

// discard takes the answer of a change whose answer a fault replaces.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

// statusRecorder passes an answer on, noting its status and, when copy is
// set, keeping a copy for an observer.
type statusRecorder struct {
	http.ResponseWriter
	status int
	copy   *capture
}

func (w *statusRecorder) WriteHeader(code int) {
	w.status = code
	if w.copy != nil {
		w.copy.header = w.ResponseWriter.Header().Clone()
		w.copy.WriteHeader(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.copy != nil {
		if !w.copy.wrote {
			w.copy.header = w.ResponseWriter.Header().Clone()
		}
		_, _ = w.copy.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// WriteJSON writes v as a JSON answer with status. It sets the Content-Type
// to application/json unless the caller set one; 204 gets no body.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	if w.Header().Get("Content-Type") == "" && status != http.StatusNoContent {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	if status == http.StatusNoContent {
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}
