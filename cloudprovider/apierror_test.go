package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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
		{"transport", NoAnswer("c", "op", errors.New("reset")), true},
		{"5xx", &APIError{Status: 502, Class: ErrUnavailable, Outcome: AnswerOutcome(502, false)}, true},
		{"malformed 2xx: applied", MalformedAnswer("c", "op", 200, "empty body"), false},
		{"plain malformed", fmt.Errorf("decode: %w", ErrMalformedResponse), true},
		{"429", &APIError{Status: 429, Class: ErrRateLimited, Outcome: AnswerOutcome(429, false)}, false},
		{"400", fmt.Errorf("w: %w", &APIError{Status: 400, Class: ErrFailedPrecondition, Outcome: AnswerOutcome(400, false)}), false},
		{"code in 200", &APIError{Status: 200, Code: "OperationDenied", Class: ErrFailedPrecondition, Outcome: AnswerOutcome(200, true)}, false},
		{"our own check", Errorf(ErrFailedPrecondition, "beyond max"), false},
		{"an APIError stating applied without a 2xx", &APIError{Status: 503, Class: ErrUnavailable}, true},
	} {
		if got := OutcomeUnknown(tc.err); got != tc.want {
			t.Errorf("%s: OutcomeUnknown = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The one decoding rule: JSON is read whatever the label; a body that does
// not parse names cloud, operation and status, and is an applied change.
func TestDecodeJSON(t *testing.T) {
	answer := func(contentType, body string) *http.Response {
		return &http.Response{StatusCode: 201, Header: http.Header{"Content-Type": {contentType}}, Body: io.NopCloser(strings.NewReader(body))}
	}
	var out struct{ N int }
	if err := DecodeJSON("c", "PATCH /p/{id}", answer("text/plain; charset=utf-8", `{"N":3}`), &out); err != nil || out.N != 3 {
		t.Fatalf("JSON labelled text/plain: %v, N=%d", err, out.N)
	}
	for _, body := range []string{"", "<html>bad gateway</html>", `{"N":`} {
		err := DecodeJSON("c", "PATCH /p/{id}", answer("application/json", body), &out)
		if !errors.Is(err, ErrMalformedResponse) || OutcomeOf(err) != MutationApplied {
			t.Fatalf("body %q: %v (outcome %s), want a malformed answer, applied", body, err, OutcomeOf(err))
		}
		for _, want := range []string{"c PATCH /p/{id}", "HTTP 201"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q does not name %q", err, want)
			}
		}
	}
}

func TestReclassifyKeepsOneClass(t *testing.T) {
	orig := fmt.Errorf("scale: %w", &APIError{Status: 400, Class: ErrFailedPrecondition, Outcome: MutationRefused})
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
