package cloudprovider

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// APIError is a failed cloud API call: the one error shape every thin client
// (vultrapi, volcapi, exoapi) returns for an answer it got, or did not get.
// It unwraps to exactly one class sentinel (Class) and to the underlying SDK
// or transport error (Cause), so callers test it with errors.Is and never
// look at its text.
type APIError struct {
	// Cloud names the provider ("vultr", "volcengine", "exoscale").
	Cloud string
	// Operation is the SDK action or "METHOD /path template"; never a full
	// URL, which may carry credentials.
	Operation string
	// Status is the HTTP status; 0 when no answer arrived.
	Status int
	// Code is the cloud's error code ("" when the cloud has none, as Vultr
	// and Exoscale). Volcengine also puts codes into HTTP 200 answers.
	Code string
	// Message is the cloud's error message, bounded in length.
	Message string
	// RequestID is the cloud's correlation id, when it sends one.
	RequestID string
	// RetryAfter is the server-requested back-off (HTTP Retry-After), 0 when absent.
	RetryAfter time.Duration
	// Class is the sentinel this error classifies as; StatusClass(Status)
	// unless a documented code family says more.
	Class error
	// Cause is the underlying error, if any.
	Cause error
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", e.Cloud, e.Operation)
	if e.Status == 0 {
		b.WriteString("no answer")
	} else {
		fmt.Fprintf(&b, "HTTP %d", e.Status)
	}
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request id " + e.RequestID + ")")
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.Class != nil {
		b.WriteString(": " + e.Class.Error())
	}
	if e.Cause != nil && e.Status == 0 {
		b.WriteString(": " + e.Cause.Error())
	}
	return b.String()
}

// Unwrap exposes the class sentinel and the cause.
func (e *APIError) Unwrap() []error {
	out := make([]error, 0, 2)
	if e.Class != nil {
		out = append(out, e.Class)
	}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	return out
}

// Refused reports whether the cloud answered and refused the request, which
// proves it was not applied: any 4xx (a throttle included), or an error code
// in a 2xx body (Volcengine's gateway does that).
func (e *APIError) Refused() bool {
	switch {
	case e.Status == 0 && errors.Is(e.Class, ErrRateLimited):
		// Refused by the client-side budget: the call never left the process.
		return true
	case e.Status >= 400 && e.Status < 500:
		return true
	case e.Status >= 200 && e.Status < 300:
		return e.Code != "" && !errors.Is(e.Class, ErrMalformedResponse)
	}
	return false
}

// StatusClass is the one HTTP status → class table. It is all the thin
// clients use, except for documented code families (Volcengine's throttling
// and capacity codes) that refine a class.
func StatusClass(status int) error {
	switch {
	case status == 0:
		return ErrUnavailable
	case status == http.StatusUnauthorized:
		return ErrUnauthenticated
	case status == http.StatusForbidden:
		return ErrPermissionDenied
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status >= 500:
		return ErrUnavailable
	case status >= 400:
		// 400, 409, 422...: the cloud refused the request in its current state.
		// Our own validation runs before any call, so this is not the caller's
		// invalid argument.
		return ErrFailedPrecondition
	case status >= 200 && status < 300:
		// A success whose body could not be used.
		return ErrMalformedResponse
	}
	return ErrUnavailable
}

// OutcomeUnknown reports whether a failed mutating call may still have been
// applied by the cloud: a timeout, a lost or garbled answer, a 5xx. Only an
// APIError the cloud answered with a refusal proves that nothing changed.
// After such an error the next mutation of the group re-reads the group
// first, so an absolute size computed from a stale snapshot cannot undo the
// applied change.
func OutcomeUnknown(err error) bool {
	if err == nil {
		return false
	}
	var ae *APIError
	if !errors.As(err, &ae) {
		return true
	}
	return !ae.Refused()
}

// Reclassify returns err with the class of its APIError replaced by class,
// for facts the provider knows beyond the HTTP status (an Exoscale refusal
// while the instance quota is used up is a quota error). Errors without an
// APIError are wrapped with class instead.
func Reclassify(err, class error) error {
	var ae *APIError
	if !errors.As(err, &ae) {
		return fmt.Errorf("%w: %w", class, err)
	}
	c := *ae
	c.Class = class
	return &c
}

// RetryAfterOf returns the server-requested back-off carried by err, or 0.
func RetryAfterOf(err error) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}
