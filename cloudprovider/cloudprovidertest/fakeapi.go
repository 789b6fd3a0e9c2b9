package cloudprovidertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"
)

// RecordedRequest is one request a fake cloud received.
type RecordedRequest struct {
	// Time is when it arrived, by the fake's clock.
	Time      time.Time
	Method    string
	Path      string
	Operation string
	Query     url.Values
	Header    http.Header
	Body      []byte
	// Status is the HTTP status answered; 0 when no answer was sent (a hang
	// or a reset connection).
	Status int
	// Faulted reports whether an injected fault answered it.
	Faulted bool
}

// Recorder is a fake cloud's request log. It is safe for concurrent use.
type Recorder struct {
	mu       sync.Mutex
	requests []*RecordedRequest
	finished int
	changed  *sync.Cond
}

func (r *Recorder) record(req *RecordedRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
}

func (r *Recorder) finish(req *RecordedRequest, status int, faulted bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	req.Status, req.Faulted = status, faulted
	r.finished++
	if r.changed != nil {
		r.changed.Broadcast()
	}
}

func (r *Recorder) waitFinished(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = sync.NewCond(&r.mu)
	}
	for r.finished < n {
		r.changed.Wait()
	}
}

// Requests returns a copy of the log, oldest first.
func (r *Recorder) Requests() []RecordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]RecordedRequest, len(r.requests))
	for i, req := range r.requests {
		out[i] = *req
	}
	return out
}

// Count returns how many requests were logged.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

// CountOperation returns how many logged requests had the operation name op.
func (r *Recorder) CountOperation(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, req := range r.requests {
		if req.Operation == op {
			n++
		}
	}
	return n
}

// OperationCounts returns the number of logged requests per operation name.
func (r *Recorder) OperationCounts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := map[string]int{}
	for _, req := range r.requests {
		counts[req.Operation]++
	}
	return counts
}

// Reset empties the log.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests, r.finished = nil, 0
}

// FakeAPIConfig is what a fake cloud tells the shared kit about itself.
type FakeAPIConfig struct {
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
	// Mutating tells whether a request with operation name op changes the
	// cloud (default: any method but GET and HEAD). A fault policy reads it
	// to apply a mutation before garbling its answer.
	Mutating func(r *http.Request, op string) bool
}

// FakeAPI is the machinery every fake cloud shares: the fault queue, the
// request log and the loopback server. A fake embeds it, so its fault and
// log methods have the same names in every cloud.
type FakeAPI struct {
	faults   FaultQueue
	recorder Recorder
	cfg      FakeAPIConfig
	// stop releases requests held by a Delay when the fake closes.
	stop     chan struct{}
	stopOnce sync.Once

	mu     sync.Mutex
	server *httptest.Server
	policy func(FaultRequest) (Fault, bool)
}

// NewFakeAPI returns the kit for one fake cloud.
func NewFakeAPI(cfg FakeAPIConfig) *FakeAPI {
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
	if cfg.Mutating == nil {
		cfg.Mutating = func(r *http.Request, _ string) bool {
			return r.Method != http.MethodGet && r.Method != http.MethodHead
		}
	}
	return &FakeAPI{cfg: cfg, stop: make(chan struct{})}
}

// Start serves the fake on a loopback port (127.0.0.1:0) and returns the
// endpoint to give the client. Call Close when done.
func (a *FakeAPI) Start() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.server == nil {
		a.server = httptest.NewServer(a)
	}
	return a.server.URL + a.cfg.BasePath
}

// URL returns the endpoint Start returned, or "" before Start.
func (a *FakeAPI) URL() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.server == nil {
		return ""
	}
	return a.server.URL + a.cfg.BasePath
}

// Close stops the server Start started. Requests still hanging on a fault
// end with it.
func (a *FakeAPI) Close() {
	a.stopOnce.Do(func() { close(a.stop) })
	a.mu.Lock()
	srv := a.server
	a.server = nil
	a.mu.Unlock()
	if srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

// WaitFinished blocks until n requests (counted since the last
// ResetRequests) have been fully served, including requests a Delay held
// after their client gave up, so a test can look at what they did.
func (a *FakeAPI) WaitFinished(n int) { a.recorder.waitFinished(n) }

// WaitIdle blocks until every request received so far (since the last
// ResetRequests) has been served, held ones included: a request a Delay
// holds after its client gave up may still change the cloud until then.
func (a *FakeAPI) WaitIdle() { a.recorder.waitFinished(a.recorder.Count()) }

// SetFaultPolicy makes policy pick a fault for every request no queued fault
// hits (nil turns it off). The soak uses it to inject faults at random.
func (a *FakeAPI) SetFaultPolicy(policy func(FaultRequest) (Fault, bool)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.policy = policy
}

func (a *FakeAPI) takeFault(r FaultRequest) (Fault, bool) {
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
func (a *FakeAPI) AddFault(f Fault) { a.faults.Add(f) }

// FailNext makes the next n requests fail with the cloud's 500 answer; n = 0
// stops failing.
func (a *FakeAPI) FailNext(n int) { a.faults.FailNext(n) }

// ClearFaults drops every pending fault.
func (a *FakeAPI) ClearFaults() { a.faults.Clear() }

// PendingFaults reports how many requests the pending faults would still hit.
func (a *FakeAPI) PendingFaults() int { return a.faults.Pending() }

// Requests returns a copy of the request log.
func (a *FakeAPI) Requests() []RecordedRequest { return a.recorder.Requests() }

// RequestCount returns how many requests the fake has received.
func (a *FakeAPI) RequestCount() int { return a.recorder.Count() }

// CountOperation returns how many requests had the operation name op.
func (a *FakeAPI) CountOperation(op string) int { return a.recorder.CountOperation(op) }

// OperationCounts returns the number of requests per operation name.
func (a *FakeAPI) OperationCounts() map[string]int { return a.recorder.OperationCounts() }

// ResetRequests empties the request log.
func (a *FakeAPI) ResetRequests() { a.recorder.Reset() }

// ServeHTTP records the request, then answers it with the first matching
// fault or the cloud's routes.
func (a *FakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	if hit && (fault.Delay > 0 || fault.Release != nil) && !a.hold(r, fault) {
		if fault.AfterApply && !a.closed() {
			r.Body = io.NopCloser(bytes.NewReader(body))
			a.cfg.Routes.ServeHTTP(httptest.NewRecorder(), r.WithContext(context.WithoutCancel(r.Context())))
		}
		a.recorder.finish(entry, 0, true)
		return
	}
	if !hit || fault.PassThrough {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		a.cfg.Routes.ServeHTTP(rec, r)
		a.recorder.finish(entry, rec.status, hit)
		return
	}
	if fault.AfterApply {
		// The change happens; its answer is dropped for the fault's, except
		// that a success the cloud refused stays refused: a garbled 2xx
		// means the cloud carried the request out, and no gateway turns
		// the cloud's 409 into a 200.
		real := httptest.NewRecorder()
		a.cfg.Routes.ServeHTTP(real, r)
		if st := fault.AnswerStatus(); st >= 200 && st < 300 && (real.Code < 200 || real.Code >= 300) {
			for k, v := range real.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(real.Code)
			_, _ = w.Write(real.Body.Bytes())
			a.recorder.finish(entry, real.Code, true)
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
		a.recorder.finish(entry, a.answerFault(w, fault), true)
	}
}

// hold waits out f's Delay and Release and reports whether the client still
// waits.
func (a *FakeAPI) hold(r *http.Request, f Fault) bool {
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

func (a *FakeAPI) closed() bool {
	select {
	case <-a.stop:
		return true
	default:
		return false
	}
}

// answerFault writes f's answer and returns the status sent. The server
// sends it once ServeHTTP returns, after the log has it.
func (a *FakeAPI) answerFault(w http.ResponseWriter, f Fault) int {
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
		panic("cloudprovidertest: a Reset fault needs a hijackable connection")
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

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
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
