package vultrapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

var (
	// ErrBadRequest means Vultr refused the request as malformed (400, 422).
	ErrBadRequest = errors.New("vultr rejected the request")
	// ErrMalformedResponse means a success answer could not be understood
	// (wrong content type, bad JSON, missing envelope key).
	ErrMalformedResponse = errors.New("malformed vultr response")
)

// APIError is a non-2xx answer from the Vultr API. It keeps the status code,
// which govultr drops, so callers can tell "not found" from "rate limited".
type APIError struct {
	Method     string
	Path       string
	StatusCode int
	// Message is the "error" field of Vultr's JSON error body, or a bounded
	// excerpt of a non-JSON body.
	Message string
	// RetryAfter is the server-requested wait on 429/503, 0 when absent.
	RetryAfter time.Duration
}

// Error implements error.
func (e *APIError) Error() string {
	msg := fmt.Sprintf("vultr API %s %s: HTTP %d", e.Method, e.Path, e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Unwrap maps the status to the shared sentinels so the gRPC layer can
// classify with errors.Is.
func (e *APIError) Unwrap() error {
	switch {
	case e.StatusCode == http.StatusUnauthorized:
		return cloudprovider.ErrUnauthenticated
	case e.StatusCode == http.StatusForbidden:
		return cloudprovider.ErrPermissionDenied
	case e.StatusCode == http.StatusNotFound:
		return cloudprovider.ErrNotFound
	case e.StatusCode == http.StatusTooManyRequests:
		return cloudprovider.ErrRateLimited
	case e.StatusCode == http.StatusBadRequest || e.StatusCode == http.StatusUnprocessableEntity:
		return ErrBadRequest
	case e.StatusCode >= 500:
		return cloudprovider.ErrUnavailable
	}
	return nil
}

// IsNotFound reports whether err is a Vultr 404.
func IsNotFound(err error) bool { return errors.Is(err, cloudprovider.ErrNotFound) }
