package exoapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// maxErrorBody bounds how much of an error body we keep for the message.
const maxErrorBody = 4 << 10

// maxMessageLen bounds the server message carried in an error.
const maxMessageLen = 256

// APIError is a failed Exoscale call. It unwraps to the contract sentinel
// matching the HTTP status (ErrNotFound, ErrRateLimited, ...) and to the SDK's
// error, so callers test it with errors.Is and never look at its text.
type APIError struct {
	// Op is the SDK method, e.g. "ScaleInstancePool".
	Op string
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	// Message is the server's "message" field (or raw body), truncated.
	Message string
	// RetryAfter is the server-requested back-off on 429/503, if any.
	RetryAfter time.Duration
	kind       error
	cause      error
}

// Error implements error.
func (e *APIError) Error() string {
	switch {
	case e.StatusCode == 0:
		return fmt.Sprintf("exoscale %s: %v: %v", e.Op, e.kind, e.cause)
	case e.Message != "":
		return fmt.Sprintf("exoscale %s: HTTP %d: %s: %v", e.Op, e.StatusCode, e.Message, e.kind)
	default:
		return fmt.Sprintf("exoscale %s: HTTP %d: %v", e.Op, e.StatusCode, e.kind)
	}
}

// Unwrap exposes both the contract sentinel and the underlying SDK error.
func (e *APIError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// sentinelForStatus maps an HTTP status to the contract's error class.
func sentinelForStatus(status int) error {
	switch {
	case status == http.StatusNotFound:
		return cloudprovider.ErrNotFound
	case status == http.StatusUnauthorized:
		return cloudprovider.ErrUnauthenticated
	case status == http.StatusForbidden:
		return cloudprovider.ErrPermissionDenied
	case status == http.StatusTooManyRequests:
		return cloudprovider.ErrRateLimited
	case status >= 500:
		return cloudprovider.ErrUnavailable
	default:
		// 400, 409, 422...: the cloud refused this request in its current state.
		return cloudprovider.ErrFailedPrecondition
	}
}

// response is what the recording transport saw for one call.
type response struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	message    string
}

type responseKey struct{}

// recordingTransport notes status, Retry-After and the error message of the
// last response of a call. The SDK turns statuses into text errors and drops
// headers; recording them here keeps classification exact without parsing text.
type recordingTransport struct {
	base http.RoundTripper
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	if klog.V(5).Enabled() {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		// Method, templated path and status only: never headers or bodies.
		klog.V(5).InfoS("Exoscale API call", "provider", "exoscale", "operation", OperationName(req), "status", status, "duration", time.Since(start), "err", err)
	}
	rec, _ := req.Context().Value(responseKey{}).(*response)
	if rec == nil || resp == nil {
		return resp, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.status = resp.StatusCode
	rec.retryAfter = 0
	rec.message = ""
	if resp.StatusCode >= 400 {
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			rec.retryAfter = cloudprovider.RetryAfter(resp.Header, 0)
		}
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		if rerr == nil {
			rec.message = errorMessage(body)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	return resp, err
}

// errorMessage extracts the API's {"message": ...} (or the raw text).
func errorMessage(body []byte) string {
	var m struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	msg := string(bytes.TrimSpace(body))
	if json.Valid(body) {
		msg = ""
		if err := json.Unmarshal(body, &m); err == nil {
			msg = m.Message
			if msg == "" {
				msg = m.Error
			}
		}
	}
	if len(msg) > maxMessageLen {
		msg = msg[:maxMessageLen] + "..."
	}
	return msg
}

// call runs one SDK call and classifies its error.
func call[T any](ctx context.Context, op string, fn func(ctx context.Context) (T, error)) (T, error) {
	rec := &response{}
	out, err := fn(context.WithValue(ctx, responseKey{}, rec))
	if err == nil {
		return out, nil
	}
	var zero T
	rec.mu.Lock()
	defer rec.mu.Unlock()
	apiErr := &APIError{Op: op, StatusCode: rec.status, Message: rec.message, RetryAfter: rec.retryAfter, cause: err}
	switch {
	case rec.status >= 400:
		apiErr.kind = sentinelForStatus(rec.status)
	case rec.status != 0:
		// A 2xx whose body the SDK could not decode.
		apiErr.kind = cloudprovider.ErrUnavailable
		apiErr.Message = "malformed response body"
	default:
		apiErr.kind = cloudprovider.ErrUnavailable
	}
	if apiErr.RetryAfter > 0 {
		return zero, &cloudprovider.RetryAfterError{Err: apiErr, RetryAfter: apiErr.RetryAfter}
	}
	return zero, apiErr
}

// StatusCode returns the HTTP status of a failed call, or 0.
func StatusCode(err error) int {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}
