package cloudprovider

import (
	"errors"
	"fmt"
)

// Sentinel errors, one per class. Providers wrap them with %w; the gRPC server
// maps them to status codes with errors.Is. A cloud answer carries exactly
// one of them (APIError.Class).
var (
	// ErrNotImplemented means the provider does not support the call (for the
	// four optional RPCs CA then falls back to its defaults).
	ErrNotImplemented = errors.New("not implemented")
	// ErrNodeGroupNotFound means an unknown node group id.
	ErrNodeGroupNotFound = errors.New("node group not found")
	// ErrInvalidArgument means a malformed request (bad delta, foreign node).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrFailedPrecondition means a well-formed request that the group's state
	// forbids (beyond max, below min, below registered nodes), or that the
	// cloud refused in its current state (HTTP 400, 409, 422).
	ErrFailedPrecondition = errors.New("failed precondition")
	// ErrNotFound means the cloud does not know a resource.
	ErrNotFound = errors.New("not found")
	// ErrRateLimited means the cloud throttled us.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnauthenticated means the cloud rejected our credentials.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrPermissionDenied means the credentials lack a permission.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrQuotaExceeded means a quota or capacity limit (stock-out) stopped the request.
	ErrQuotaExceeded = errors.New("quota exceeded")
	// ErrUnavailable means the cloud API is down, answered with a server error,
	// or did not answer at all.
	ErrUnavailable = errors.New("cloud unavailable")
	// ErrMalformedResponse means a success answer could not be understood
	// (wrong content type, bad JSON, missing envelope key). The request may
	// have been applied.
	ErrMalformedResponse = errors.New("malformed cloud response")
)

// ErrConfig marks a configuration error found when the cloud is first
// listed; main exits 2 on it.
var ErrConfig = errors.New("configuration error")

// Errorf wraps sentinel with a formatted message so errors.Is(err, sentinel)
// holds. It is for our own errors, decided without calling the cloud (a bad
// request, a size rule, an unknown group), so the error states
// MutationRefused. A cloud's answer is an APIError instead.
func Errorf(sentinel error, format string, args ...any) error {
	return Refusal(fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), sentinel))
}
