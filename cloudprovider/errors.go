package cloudprovider

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Providers wrap them with %w; the gRPC server classifies with
// errors.Is, in one place, into status codes.
var (
	// ErrNotImplemented means the provider does not support the call (for the
	// four optional RPCs CA then falls back to its defaults).
	ErrNotImplemented = errors.New("not implemented")
	// ErrNodeGroupNotFound means an unknown node group id.
	ErrNodeGroupNotFound = errors.New("node group not found")
	// ErrInvalidArgument means a malformed request (bad delta, foreign node).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrFailedPrecondition means a well-formed request that the group's state
	// forbids (beyond max, below min, below registered nodes).
	ErrFailedPrecondition = errors.New("failed precondition")
	// ErrNotFound means the cloud does not know a resource.
	ErrNotFound = errors.New("not found")
	// ErrRateLimited means the cloud throttled us.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnauthenticated means the cloud rejected our credentials.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrPermissionDenied means the credentials lack a permission.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrQuotaExceeded means a quota or capacity limit stopped the request.
	ErrQuotaExceeded = errors.New("quota exceeded")
	// ErrUnavailable means the cloud API is down or answered with a server error.
	ErrUnavailable = errors.New("cloud unavailable")
)

// RetryAfterError carries a server-requested back-off (HTTP Retry-After).
type RetryAfterError struct {
	Err        error
	RetryAfter time.Duration
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("%v (retry after %s)", e.Err, e.RetryAfter)
}

// Unwrap returns the wrapped error.
func (e *RetryAfterError) Unwrap() error { return e.Err }

// Errorf wraps sentinel with a formatted message so errors.Is(err, sentinel) holds.
func Errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), sentinel)
}
