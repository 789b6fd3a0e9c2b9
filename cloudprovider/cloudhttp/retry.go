package cloudhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// RetryOptions tunes RetryTransport.
type RetryOptions struct {
	// MaxAttempts bounds the tries per request (default 4).
	MaxAttempts int
	// BaseBackoff is the first wait after a server error; it doubles per try (default 200ms).
	BaseBackoff time.Duration
	// MaxBackoff caps one wait (default 2s).
	MaxBackoff time.Duration
	// Sleep waits for d or until ctx is done; tests inject an instant one.
	Sleep func(ctx context.Context, d time.Duration) error
}

// maxRetryAfterSeconds caps a Retry-After header (one day); callers compare
// the wait with their deadline anyway.
const maxRetryAfterSeconds = 86400

// maxUnboundedWait caps a Retry-After wait for requests without a deadline.
const maxUnboundedWait = 30 * time.Second

// RetryTransport retries throttled and failed cloud calls within the
// request's context. A 429 is retried after Retry-After only when the wait
// fits before the deadline; otherwise it is returned at once, so the caller
// can report "rate limited" within CA's RPC deadline. Other 4xx are not
// retried; no answer and 5xx are retried when RetrySafe allows.
type RetryTransport struct {
	Base http.RoundTripper
	Opts RetryOptions
}

// NewRetryTransport wraps base with the given options (zero values take defaults).
func NewRetryTransport(base http.RoundTripper, opts RetryOptions) *RetryTransport {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 4
	}
	if opts.BaseBackoff <= 0 {
		opts.BaseBackoff = 200 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 2 * time.Second
	}
	if opts.Sleep == nil {
		opts.Sleep = SleepContext
	}
	return &RetryTransport{Base: base, Opts: opts}
}

// CallKind says whether a cloud call may be repeated. A thin client sets it
// on the call's context (WithCallKind) when the HTTP method is misleading:
// Volcengine sends every action as a GET, and an Exoscale eviction is a PUT.
type CallKind int

const (
	// CallByMethod follows the HTTP method: GET, HEAD and OPTIONS read;
	// PUT and DELETE are idempotent; anything else runs once.
	CallByMethod CallKind = iota
	// CallRead changes nothing in the cloud.
	CallRead
	// CallIdempotent changes the cloud so that a repeat changes nothing
	// more: setting an absolute size, deleting one named instance (a repeat
	// after a lost answer finds it gone, which the caller handles).
	CallIdempotent
	// CallOnce must not be repeated after an attempt the cloud may have
	// carried out: evicting or removing a set of members, which the cloud
	// refuses once some of them are gone.
	CallOnce
)

type callKindKey struct{}

// WithCallKind returns ctx carrying the kind of the calls made with it.
func WithCallKind(ctx context.Context, kind CallKind) context.Context {
	return context.WithValue(ctx, callKindKey{}, kind)
}

func callKindOf(req *http.Request) CallKind {
	if k, ok := req.Context().Value(callKindKey{}).(CallKind); ok && k != CallByMethod {
		return k
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return CallRead
	case http.MethodPut, http.MethodDelete:
		return CallIdempotent
	}
	return CallOnce
}

// RetrySafe is the retry-safety rule for every cloud: a request may be
// repeated after no answer or a 5xx unless it is a CallOnce. A 429 is always
// retried when its wait fits the deadline, since nothing ran.
func RetrySafe(req *http.Request) bool { return callKindOf(req) != CallOnce }

// mutating reports whether req changes the cloud.
func mutating(req *http.Request) bool { return callKindOf(req) != CallRead }

// SleepContext waits for d or until ctx is done.
func SleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RoundTrip implements http.RoundTripper.
func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		// A body that cannot be rewound can be sent only once.
		return t.Base.RoundTrip(req)
	}
	backoff := t.Opts.BaseBackoff
	// uncertain is set once an attempt of a mutating request got no answer
	// or a 5xx, so the cloud may have carried it out. A later refusal then
	// says nothing about the first attempt (a pool refuses a resize as busy
	// because the first attempt already resized it), so it must not reach
	// the caller as a refusal.
	uncertain := false
	for attempt := 1; ; attempt++ {
		try := req
		if attempt > 1 {
			try = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				try.Body = body
			}
		}
		resp, err := t.Base.RoundTrip(try)
		if attempt >= t.Opts.MaxAttempts || ctx.Err() != nil {
			return afterUncertain(req, resp, err, uncertain)
		}
		var wait time.Duration
		switch {
		case err != nil:
			// A call the client-side budget refused would only be refused
			// again: its next slot lies past the deadline.
			if errors.Is(err, cloudprovider.ErrRateLimited) || !RetrySafe(req) {
				return afterUncertain(req, resp, err, uncertain)
			}
			wait = backoff
		case resp.StatusCode == http.StatusTooManyRequests:
			wait = RetryAfter(resp.Header, backoff)
		case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
			if !RetrySafe(req) {
				return resp, nil
			}
			wait = RetryAfter(resp.Header, backoff)
		default:
			return afterUncertain(req, resp, nil, uncertain)
		}
		if wait > t.Opts.MaxBackoff && resp != nil && resp.StatusCode != http.StatusTooManyRequests {
			wait = t.Opts.MaxBackoff
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= wait {
			// Waiting would outlive the caller; give it the answer we have.
			return afterUncertain(req, resp, err, uncertain)
		} else if !ok && wait > maxUnboundedWait {
			return afterUncertain(req, resp, err, uncertain)
		}
		if mutating(req) && (err != nil || resp.StatusCode != http.StatusTooManyRequests) {
			uncertain = true
		}
		if resp != nil {
			drain(resp)
		}
		if serr := t.Opts.Sleep(ctx, wait); serr != nil {
			return nil, serr
		}
		backoff *= 2
		if backoff > t.Opts.MaxBackoff {
			backoff = t.Opts.MaxBackoff
		}
	}
}

// drain reads a little of resp's body and closes it, so its connection can
// be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// afterUncertain returns the last attempt's answer. After an attempt the
// cloud may have carried out, a 4xx refusal or an error (such as our rate
// limit's refusal) becomes an error with MutationUnknown, so the mutation
// guard quarantines and re-reads the group. A 404 is kept: the earlier
// attempt most likely removed the thing, and a NotFound already makes the
// next mutation re-read.
func afterUncertain(req *http.Request, resp *http.Response, err error, uncertain bool) (*http.Response, error) {
	if !uncertain {
		return resp, err
	}
	if err != nil {
		return resp, cloudprovider.WithOutcome(fmt.Errorf("%s %s: a retry failed after an earlier attempt the cloud may have carried out: outcome unknown: %w",
			req.Method, req.URL.Path, err), cloudprovider.MutationUnknown)
	}
	if resp == nil || resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.StatusCode == http.StatusNotFound {
		return resp, err
	}
	status := resp.StatusCode
	drain(resp)
	return nil, cloudprovider.WithOutcome(fmt.Errorf("%s %s: a retry was answered %d after an earlier attempt the cloud may have carried out: outcome unknown: %w",
		req.Method, req.URL.Path, status, cloudprovider.ErrUnavailable), cloudprovider.MutationUnknown)
}

// RetryAfter reads a Retry-After header given in seconds (or as an HTTP date),
// falling back to def.
func RetryAfter(h http.Header, def time.Duration) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return def
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		// Clamp before converting: a huge value would overflow into a negative
		// wait and turn "back off" into "retry at once".
		if secs > maxRetryAfterSeconds {
			secs = maxRetryAfterSeconds
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
		return 0
	}
	return def
}
