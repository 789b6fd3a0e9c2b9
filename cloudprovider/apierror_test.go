package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestStatusClass(t *testing.T) {
	for status, want := range map[int]error{
		0: ErrUnavailable, 200: ErrMalformedResponse, 400: ErrFailedPrecondition, 401: ErrUnauthenticated,
		403: ErrPermissionDenied, 404: ErrNotFound, 409: ErrFailedPrecondition, 422: ErrFailedPrecondition,
		429: ErrRateLimited, 500: ErrUnavailable, 503: ErrUnavailable,
	} {
		if got := StatusClass(status); got != want {
			t.Errorf("StatusClass(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestAPIErrorUnwrapsClassAndCause(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	err := fmt.Errorf("resize: %w", &APIError{Cloud: "c", Operation: "PATCH /pools/{id}", Status: 429, Message: "slow down",
		RetryAfter: 2 * time.Second, Class: StatusClass(429), Cause: cause})
	if !errors.Is(err, ErrRateLimited) || !errors.Is(err, cause) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("errors.Is on %v", err)
	}
	if RetryAfterOf(err) != 2*time.Second {
		t.Fatalf("RetryAfterOf = %s", RetryAfterOf(err))
	}
	for _, want := range []string{"c PATCH /pools/{id}", "HTTP 429", "slow down", "retry after 2s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{"transport", &APIError{Status: 0, Class: ErrUnavailable}, true},
		{"5xx", &APIError{Status: 502, Class: ErrUnavailable}, true},
		{"malformed 2xx", &APIError{Status: 200, Class: ErrMalformedResponse}, true},
		{"malformed 2xx with code", &APIError{Status: 200, Code: "X", Class: ErrMalformedResponse}, true},
		{"plain malformed", fmt.Errorf("decode: %w", ErrMalformedResponse), true},
		{"429", &APIError{Status: 429, Class: ErrRateLimited}, false},
		{"400", fmt.Errorf("w: %w", &APIError{Status: 400, Class: ErrFailedPrecondition}), false},
		{"code in 200", &APIError{Status: 200, Code: "OperationDenied", Class: ErrFailedPrecondition}, false},
	} {
		if got := OutcomeUnknown(tc.err); got != tc.want {
			t.Errorf("%s: OutcomeUnknown = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReclassifyKeepsOneClass(t *testing.T) {
	orig := fmt.Errorf("scale: %w", &APIError{Status: 400, Class: ErrFailedPrecondition})
	err := Reclassify(orig, ErrQuotaExceeded)
	if !errors.Is(err, ErrQuotaExceeded) || errors.Is(err, ErrFailedPrecondition) {
		t.Fatalf("Reclassify: %v", err)
	}
	if OutcomeUnknown(err) {
		t.Fatal("a reclassified refusal must stay a refusal")
	}
	plain := Reclassify(errors.New("boom"), ErrQuotaExceeded)
	if !errors.Is(plain, ErrQuotaExceeded) {
		t.Fatalf("Reclassify plain: %v", plain)
	}
}
