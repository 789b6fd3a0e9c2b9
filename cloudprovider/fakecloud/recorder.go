package fakecloud

import (
	"net/http"
	"net/url"
	"sync"
	"time"
)

// DefaultLogLimit is how many requests a fake's log keeps in full unless
// APIConfig.LogLimit says otherwise: more than any one test reads back, and
// about a quarter of a megabyte for a fake serving --simulate (a request
// with its headers and query takes about 2.5 KB), which fills it within its
// first hundred CA loops.
const DefaultLogLimit = 100

// maxOperations bounds the per-operation counts: a fake names the routes it
// knows with templated paths, but a client sending arbitrary paths must not
// grow the map without end.
const maxOperations = 256

// OtherOperations is the operation name the counts use for requests once
// maxOperations distinct names have been counted.
const OtherOperations = "(other)"

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

// Recorder is a fake cloud's request log in bounded memory: counts of every
// request (in total and per operation) and, in full, only the latest ones. It
// is safe for concurrent use.
type Recorder struct {
	mu sync.Mutex
	// log is a ring of the latest requests; first is the index of the
	// oldest once it is full.
	log      []*RecordedRequest
	limit    int
	first    int
	received int
	finished int
	ops      map[string]int
	changed  *sync.Cond
}

// newRecorder returns a recorder that keeps the latest limit requests (a
// zero Recorder keeps DefaultLogLimit).
func newRecorder(limit int) *Recorder {
	return &Recorder{limit: limit, ops: map[string]int{}}
}

func (r *Recorder) record(req *RecordedRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.limit <= 0 {
		r.limit = DefaultLogLimit
	}
	if r.ops == nil {
		r.ops = map[string]int{}
	}
	r.received++
	op := req.Operation
	if _, known := r.ops[op]; !known && len(r.ops) >= maxOperations {
		op = OtherOperations
	}
	r.ops[op]++
	if len(r.log) < r.limit {
		r.log = append(r.log, req)
		return
	}
	r.log[r.first] = req
	r.first = (r.first + 1) % r.limit
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
func (r *Recorder) Requests() []RecordedRequest { return r.Since(0) }

// Since returns a copy of the logged requests from the n-th received on,
// oldest first; those that fell out of the log are missing.
func (r *Recorder) Since(n int) []RecordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	// The log holds requests received-len(log) .. received-1.
	skip := max(n-(r.received-len(r.log)), 0)
	if skip >= len(r.log) {
		return nil
	}
	out := make([]RecordedRequest, 0, len(r.log)-skip)
	for i := skip; i < len(r.log); i++ {
		out = append(out, *r.log[(r.first+i)%len(r.log)])
	}
	return out
}

// Count returns how many requests were received.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received
}

// CountOperation returns how many requests had the operation name op.
func (r *Recorder) CountOperation(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ops[op]
}

// OperationCounts returns the number of requests per operation name.
func (r *Recorder) OperationCounts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := make(map[string]int, len(r.ops))
	for op, n := range r.ops {
		counts[op] = n
	}
	return counts
}

// Reset empties the log and zeroes the counts.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log, r.first, r.received, r.finished = nil, 0, 0, 0
	r.ops = map[string]int{}
}
