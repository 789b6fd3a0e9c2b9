package cloudhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestStatusClass(t *testing.T) {
	for status, want := range map[int]error{
		0: cloudprovider.ErrUnavailable, 200: cloudprovider.ErrMalformedResponse, 400: cloudprovider.ErrFailedPrecondition, 401: cloudprovider.ErrUnauthenticated,
		403: cloudprovider.ErrPermissionDenied, 404: cloudprovider.ErrNotFound, 409: cloudprovider.ErrFailedPrecondition, 422: cloudprovider.ErrFailedPrecondition,
		429: cloudprovider.ErrRateLimited, 500: cloudprovider.ErrUnavailable, 503: cloudprovider.ErrUnavailable,
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
	if !errors.Is(err, cloudprovider.ErrRateLimited) || !errors.Is(err, cause) || errors.Is(err, cloudprovider.ErrUnavailable) {
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
		{"5xx", &APIError{Status: 502, Class: cloudprovider.ErrUnavailable, Outcome: cloudprovider.AnswerOutcome(502, false)}, true},
		{"malformed 2xx: applied", MalformedAnswer("c", "op", 200, "empty body"), false},
		{"plain malformed", fmt.Errorf("decode: %w", cloudprovider.ErrMalformedResponse), true},
		{"429", &APIError{Status: 429, Class: cloudprovider.ErrRateLimited, Outcome: cloudprovider.AnswerOutcome(429, false)}, false},
		{"400", fmt.Errorf("w: %w", &APIError{Status: 400, Class: cloudprovider.ErrFailedPrecondition, Outcome: cloudprovider.AnswerOutcome(400, false)}), false},
		{"code in 200", &APIError{Status: 200, Code: "OperationDenied", Class: cloudprovider.ErrFailedPrecondition, Outcome: cloudprovider.AnswerOutcome(200, true)}, false},
		{"our own check", cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "beyond max"), false},
		{"an APIError stating applied without a 2xx", &APIError{Status: 503, Class: cloudprovider.ErrUnavailable}, true},
	} {
		if got := cloudprovider.OutcomeUnknown(tc.err); got != tc.want {
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
		if !errors.Is(err, cloudprovider.ErrMalformedResponse) || cloudprovider.OutcomeOf(err) != cloudprovider.MutationApplied {
			t.Fatalf("body %q: %v (outcome %s), want a malformed answer, applied", body, err, cloudprovider.OutcomeOf(err))
		}
		for _, want := range []string{"c PATCH /p/{id}", "HTTP 201"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q does not name %q", err, want)
			}
		}
	}
}

func TestReclassifyKeepsOneClass(t *testing.T) {
	orig := fmt.Errorf("scale: %w", &APIError{Status: 400, Class: cloudprovider.ErrFailedPrecondition, Outcome: cloudprovider.MutationRefused})
	err := Reclassify(orig, cloudprovider.ErrQuotaExceeded)
	if !errors.Is(err, cloudprovider.ErrQuotaExceeded) || errors.Is(err, cloudprovider.ErrFailedPrecondition) {
		t.Fatalf("Reclassify: %v", err)
	}
	if cloudprovider.OutcomeUnknown(err) {
		t.Fatal("a reclassified refusal must stay a refusal")
	}
	plain := Reclassify(errors.New("boom"), cloudprovider.ErrQuotaExceeded)
	if !errors.Is(plain, cloudprovider.ErrQuotaExceeded) {
		t.Fatalf("Reclassify plain: %v", plain)
	}
}

// OutcomeOf reads the outcome an APIError states: a refusal only from an
// answer that refuses, applied only from a 2xx.
func TestOutcomeOfAPIError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want cloudprovider.MutationOutcome
	}{
		{"4xx refusal", &APIError{Cloud: "c", Operation: "op", Status: 409, Class: cloudprovider.ErrFailedPrecondition, Outcome: cloudprovider.AnswerOutcome(409, false)}, cloudprovider.MutationRefused},
		{"5xx", &APIError{Cloud: "c", Operation: "op", Status: 503, Class: cloudprovider.ErrUnavailable, Outcome: cloudprovider.AnswerOutcome(503, false)}, cloudprovider.MutationUnknown},
		{"no answer", NoAnswer("c", "op", errors.New("reset")), cloudprovider.MutationUnknown},
		{"cloud error object in a 200", &APIError{Status: 200, Code: "InvalidParameter", Class: cloudprovider.ErrFailedPrecondition, Outcome: cloudprovider.AnswerOutcome(200, true)}, cloudprovider.MutationRefused},
		{"2xx with an unusable body", MalformedAnswer("c", "op", 200, "empty body"), cloudprovider.MutationApplied},
	} {
		if got := cloudprovider.OutcomeOf(tc.err); got != tc.want {
			t.Errorf("%s: OutcomeOf(%v) = %s, want %s", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestAnswerErrorIsTheOneRule(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("m", 3*maxMessage)
	limited := fmt.Errorf("wait: %w", cloudprovider.Refusal(cloudprovider.ErrRateLimited))
	for _, tc := range []struct {
		name      string
		a         ErrorAnswer
		class     error
		outcome   cloudprovider.MutationOutcome
		msgLength int
	}{
		{"4xx", ErrorAnswer{Status: 409, Message: long}, cloudprovider.ErrFailedPrecondition, cloudprovider.MutationRefused, maxMessage + 3},
		{"5xx", ErrorAnswer{Status: 502, Message: " bad gateway \n"}, cloudprovider.ErrUnavailable, cloudprovider.MutationUnknown, len("bad gateway")},
		{"cloud error in a 2xx", ErrorAnswer{Status: 200, Code: "QuotaExceeded", CloudError: true, Class: cloudprovider.ErrQuotaExceeded}, cloudprovider.ErrQuotaExceeded, cloudprovider.MutationRefused, 0},
		{"2xx body unusable", ErrorAnswer{Status: 200, Message: "empty body"}, cloudprovider.ErrMalformedResponse, cloudprovider.MutationApplied, len("empty body")},
		{"no answer", ErrorAnswer{Cause: errors.New("reset")}, cloudprovider.ErrUnavailable, cloudprovider.MutationUnknown, 0},
		{"our rate limit refused it", ErrorAnswer{Cause: limited, Class: cloudprovider.ErrRateLimited}, cloudprovider.ErrRateLimited, cloudprovider.MutationRefused, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := AnswerError("c", "op", tc.a)
			if !errors.Is(e, tc.class) {
				t.Errorf("class: %v is not %v", e, tc.class)
			}
			if got := cloudprovider.OutcomeOf(e); got != tc.outcome {
				t.Errorf("outcome %s, want %s", got, tc.outcome)
			}
			if len(e.Message) != tc.msgLength {
				t.Errorf("message of %d bytes, want %d", len(e.Message), tc.msgLength)
			}
		})
	}
}
