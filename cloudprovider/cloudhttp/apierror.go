package cloudhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// APIError is a failed cloud API call, with or without an answer. Every thin
// client (vultrapi, volcapi, exoapi) returns it. It unwraps to exactly one
// class sentinel (Class) and to the underlying SDK or transport error
// (Cause), so callers test it with errors.Is, not by its text.
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
	// Class is the error's class sentinel: StatusClass(Status), unless a
	// documented cloud error code is more specific.
	Class error
	// Cause is the underlying error, if any.
	Cause error
	// Outcome is what the answer proves about a mutating call, set by
	// AnswerError: AnswerOutcome for an answer, OutcomeOf(Cause) without one
	// (a call our own rate limit refused never left the process).
	Outcome cloudprovider.MutationOutcome
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

// StatedOutcome returns Outcome, except that MutationApplied without a 2xx
// status is unknown: only a 2xx proves the cloud accepted the request.
// cloudprovider.OutcomeOf calls it.
func (e *APIError) StatedOutcome() cloudprovider.MutationOutcome {
	if e.Outcome == cloudprovider.MutationApplied && (e.Status < 200 || e.Status > 299) {
		return cloudprovider.MutationUnknown
	}
	return e.Outcome
}

// StatusClass maps an HTTP status to a class sentinel for every thin client.
// Only documented cloud error codes (Volcengine's throttling and capacity
// codes) override it.
func StatusClass(status int) error {
	switch {
	case status == 0:
		return cloudprovider.ErrUnavailable
	case status == http.StatusUnauthorized:
		return cloudprovider.ErrUnauthenticated
	case status == http.StatusForbidden:
		return cloudprovider.ErrPermissionDenied
	case status == http.StatusNotFound:
		return cloudprovider.ErrNotFound
	case status == http.StatusTooManyRequests:
		return cloudprovider.ErrRateLimited
	case status >= 500:
		return cloudprovider.ErrUnavailable
	case status >= 400:
		// 400, 409, 422...: the cloud refused the request in its current state.
		// Our own validation runs before any call, so this is not the caller's
		// invalid argument.
		return cloudprovider.ErrFailedPrecondition
	case status >= 200 && status < 300:
		// A success whose body could not be used.
		return cloudprovider.ErrMalformedResponse
	}
	return cloudprovider.ErrUnavailable
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

// ErrorAnswer is what a thin client read from a failed call; AnswerError
// turns it into an APIError.
type ErrorAnswer struct {
	// Status is the HTTP status; 0 when no answer arrived.
	Status int
	// Code is the cloud's error code, if it has one.
	Code string
	// Message is the cloud's error message, as long as it came.
	Message string
	// RequestID is the cloud's correlation id, if any.
	RequestID string
	// RetryAfter is the answer's Retry-After, 0 when absent.
	RetryAfter time.Duration
	// CloudError says the body reports a failure even if the status is 2xx:
	// the cloud's own error object (Volcengine's ResponseMetadata.Error), an
	// Exoscale operation that failed on submission, an empty object for an
	// id the cloud does not know. It makes the outcome refused.
	CloudError bool
	// Class overrides StatusClass(Status) for a documented cloud error code
	// (Volcengine's throttling and capacity codes); nil uses StatusClass.
	Class error
	// Cause is the SDK's or transport's error, if any.
	Cause error
}

// AnswerError builds the APIError of a cloud call; every thin client uses
// it, so class, message length and outcome follow one rule. The outcome is
// AnswerOutcome(Status, CloudError) for an answer. Without one (Status 0) it
// is the outcome Cause carries (our rate limit's refusal, a retry's uncertain
// refusal), else unknown.
func AnswerError(cloud, operation string, a ErrorAnswer) *APIError {
	class := a.Class
	if class == nil {
		class = StatusClass(a.Status)
	}
	outcome := cloudprovider.AnswerOutcome(a.Status, a.CloudError)
	if a.Status == 0 && a.Cause != nil {
		outcome = cloudprovider.OutcomeOf(a.Cause)
	}
	msg := strings.TrimSpace(a.Message)
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "..."
	}
	return &APIError{Cloud: cloud, Operation: operation, Status: a.Status, Code: a.Code, Message: msg,
		RequestID: a.RequestID, RetryAfter: a.RetryAfter, Class: class, Cause: a.Cause, Outcome: outcome}
}

// NoAnswer is the error of a call that got no answer; err is the transport's
// error (a timeout, a reset, our rate limit's refusal). Its outcome is the
// one err carries, else unknown.
func NoAnswer(cloud, operation string, err error) *APIError {
	return AnswerError(cloud, operation, ErrorAnswer{Class: NoResponseClass(err), Cause: err})
}

// MalformedAnswer is the error of a success answer whose body the client
// cannot use (empty, unparsable, missing the expected object). Its class is
// ErrMalformedResponse and its outcome applied: the cloud accepted the
// request, and one read of the group shows what it did.
func MalformedAnswer(cloud, operation string, status int, format string, args ...any) *APIError {
	return AnswerError(cloud, operation, ErrorAnswer{Status: status, Message: fmt.Sprintf(format, args...),
		Class: cloudprovider.ErrMalformedResponse})
}

// maxMessage bounds a message carried in an APIError; AnswerError cuts it.
const maxMessage = 256

// DecodeJSON reads a success answer's body as JSON into out, whatever its
// Content-Type says: a gateway may relabel it, and the HTTP stack logs that
// once per operation. A body that does not parse is a MalformedAnswer.
func DecodeJSON(cloud, operation string, resp *http.Response, out any) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBody))
	if err != nil {
		return MalformedAnswer(cloud, operation, resp.StatusCode, "read body: %v", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return MalformedAnswer(cloud, operation, resp.StatusCode, "empty body")
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return MalformedAnswer(cloud, operation, resp.StatusCode, "body does not parse as JSON (content type %q): %v",
			resp.Header.Get("Content-Type"), err)
	}
	return nil
}

// maxAnswerBody bounds a success answer's body (a full page of a listing).
const maxAnswerBody = 64 << 20

// RetryAfterOf returns the server-requested back-off carried by err, or 0.
func RetryAfterOf(err error) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}
