package fakecloud

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// Fault is one scripted failure of a fake cloud. The selector fields pick the
// requests it hits (every non-empty one must match); the answer fields say
// what those requests get instead of the cloud's normal answer.
//
// The answer is, in order of precedence: AnswerOnArrival (the cloud's own
// answer as it was on arrival, sent after the hold), PassThrough (the cloud's own answer, after Delay), Reset (connection closed, no
// answer), Hang (held until the client gives up), Malformed (a truncated JSON
// body), Body (given verbatim), otherwise the cloud's own error body built
// from Status, Code and Message. With AfterApply the request is carried out
// first, so the change happens and only its answer is lost.
type Fault struct {
	// Method matches the HTTP method, e.g. "PATCH".
	Method string
	// PathContains matches a substring of the URL path, e.g. ":scale".
	PathContains string
	// Operation matches the fake's operation name: the Volcengine Action
	// ("ModifyScalingGroup"), or the templated "METHOD /path/{id}" form for the
	// REST clouds ("PUT /v2/instance-pool/{id}:scale").
	Operation string
	// Skip lets this many matching requests through before the fault hits.
	Skip int
	// Times is how many matching requests the fault hits (default 1).
	Times int

	// Status is the HTTP status of the answer (default 500; 200 for Malformed).
	Status int
	// RetryAfter, when not empty, is sent as the Retry-After header.
	RetryAfter string
	// Code is the cloud's error code where its error body has one
	// (Volcengine); the fake picks one matching Status when empty.
	Code string
	// Message is the error body's message (default: the status text).
	Message string
	// Body, when set, replaces the answer's body verbatim.
	Body *string
	// ContentType replaces the cloud's content type on Body or Malformed answers.
	ContentType string
	// Malformed answers with a body that is not valid JSON.
	Malformed bool
	// Hang holds the request until the client gives up (its context ends).
	Hang bool
	// Reset closes the connection without any answer.
	Reset bool
	// AfterApply carries the request out before the fault answers: the cloud
	// changed, the client hears a failure (or nothing, with Hang or Reset).
	// With Delay, the request is carried out even if the client gave up
	// meanwhile.
	AfterApply bool
	// Delay holds the request this long (real time) before anything else. A
	// request whose client gave up meanwhile is then dropped, unless
	// AfterApply: the cloud applies what the caller no longer waits for.
	Delay time.Duration
	// PassThrough answers normally once Delay is over: a slow answer, not a
	// failed one.
	PassThrough bool
	// Release, when set, holds the request like Delay until it is closed
	// (after Delay, if both are set): the test, not the wall clock, decides
	// when a request the client gave up on lands.
	Release <-chan struct{}
	// Landed, when set, is closed once a request held by Delay or Release
	// has been carried out or dropped, so a test can look at what it did.
	Landed chan<- struct{}
	// AnswerOnArrival, with Delay or Release, has the cloud answer the
	// request when it arrives and sends that answer once the hold ends: a
	// slow answer that describes the cloud as it was, such as a listing
	// delivered after a change the caller made meanwhile.
	AnswerOnArrival bool
	// Arrived, when set, is closed once a request this fault hits has
	// arrived (with AnswerOnArrival, once the cloud has answered it), so a
	// test can act while it is held.
	Arrived chan<- struct{}
}

// FaultRequest is what a fault is matched against.
type FaultRequest struct {
	Method    string
	Path      string
	Operation string
	// Mutating tells whether the request changes the cloud, as the fake
	// knows it: Volcengine sends every action, mutating or not, as GET.
	Mutating bool
}

func (f *Fault) matches(r FaultRequest) bool {
	return (f.Method == "" || strings.EqualFold(f.Method, r.Method)) &&
		(f.PathContains == "" || strings.Contains(r.Path, f.PathContains)) &&
		(f.Operation == "" || f.Operation == r.Operation)
}

// AnswerStatus is the status the fault answers with.
func (f *Fault) AnswerStatus() int {
	switch {
	case f.Status != 0:
		return f.Status
	case f.Malformed || f.Body != nil:
		return http.StatusOK
	default:
		return http.StatusInternalServerError
	}
}

// FaultQueue holds a fake cloud's pending faults. Faults are tried in the
// order they were added; the first that matches hits. It is safe for
// concurrent use.
type FaultQueue struct {
	mu       sync.Mutex
	faults   []*Fault
	failNext int
}

// Add queues f.
func (q *FaultQueue) Add(f Fault) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if f.Times <= 0 {
		f.Times = 1
	}
	q.faults = append(q.faults, &f)
}

// FailNext makes the next n requests, whatever they are, fail with a 500
// before any queued fault is tried; it replaces the count left from an
// earlier call, so n = 0 stops failing.
func (q *FaultQueue) FailNext(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.failNext = max(n, 0)
}

// Clear drops every pending fault, FailNext's included.
func (q *FaultQueue) Clear() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.faults, q.failNext = nil, 0
}

// Pending reports how many requests the queued faults would still hit.
func (q *FaultQueue) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.failNext
	for _, f := range q.faults {
		n += f.Times
	}
	return n
}

// Take returns the fault r hits, consuming one of its Times, or false.
func (q *FaultQueue) Take(r FaultRequest) (Fault, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.failNext > 0 {
		q.failNext--
		return Fault{Status: http.StatusInternalServerError}, true
	}
	for i, f := range q.faults {
		if !f.matches(r) {
			continue
		}
		if f.Skip > 0 {
			f.Skip--
			continue
		}
		f.Times--
		if f.Times <= 0 {
			q.faults = append(q.faults[:i:i], q.faults[i+1:]...)
		}
		return *f, true
	}
	return Fault{}, false
}
