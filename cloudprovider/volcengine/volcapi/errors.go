package volcapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/volcengine/volcengine-go-sdk/volcengine/volcengineerr"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// APIError is an error answer of the Volcengine API (HTTP 4xx/5xx, or an error
// code inside an HTTP 200 body, which the gateway also uses).
type APIError struct {
	Action    string
	Code      string
	Message   string
	Status    int
	RequestID string
	// Kind is the cloudprovider sentinel this error classifies as (nil if none).
	Kind error
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("volcengine %s: %s: %s (HTTP %d, request id %s)", e.Action, e.Code, e.Message, e.Status, e.RequestID)
}

// Unwrap exposes the sentinel so errors.Is(err, cloudprovider.ErrRateLimited) works.
func (e *APIError) Unwrap() error { return e.Kind }

// IsCode reports whether err is an APIError with one of codes.
func IsCode(err error, codes ...string) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	for _, c := range codes {
		if ae.Code == c {
			return true
		}
	}
	return false
}

// ErrMalformedResponse means the API answered with a body we cannot decode.
var ErrMalformedResponse = errors.New("malformed response")

// kindOf classifies an API error code and HTTP status. Volcengine publishes no
// complete list of Auto Scaling codes, so families are matched by substring and
// the HTTP status decides the rest.
func kindOf(code string, status int) error {
	lc := strings.ToLower(code)
	switch {
	case strings.Contains(lc, "flowlimitexceeded"), strings.Contains(lc, "throttl"),
		strings.Contains(lc, "requestlimitexceeded"), strings.Contains(lc, "toomanyrequests"),
		status == http.StatusTooManyRequests:
		return cloudprovider.ErrRateLimited
	case strings.Contains(lc, "quota"), strings.Contains(lc, "insufficient"), strings.Contains(lc, "nostock"),
		strings.Contains(lc, "outofstock"), strings.Contains(lc, "soldout"), strings.Contains(lc, "stockout"):
		return cloudprovider.ErrQuotaExceeded
	case lc == "invalidaccesskey", lc == "signaturedoesnotmatch", lc == "missingauthenticationtoken",
		lc == "invalidtimestamp", lc == "invalidsecuritytoken", status == http.StatusUnauthorized:
		return cloudprovider.ErrUnauthenticated
	case lc == "accessdenied", strings.HasPrefix(lc, "forbidden"), strings.Contains(lc, "unauthorized"),
		status == http.StatusForbidden && !strings.HasPrefix(lc, "operationdenied"):
		return cloudprovider.ErrPermissionDenied
	case strings.HasSuffix(lc, ".notfound"), strings.HasSuffix(lc, "notfound"),
		status == http.StatusNotFound && lc != "invalidactionorversion":
		return cloudprovider.ErrNotFound
	case strings.HasPrefix(lc, "operationdenied"), strings.HasPrefix(lc, "incorrect"):
		return cloudprovider.ErrFailedPrecondition
	case lc == "internalerror", lc == "servicefailure", lc == "serviceunavailable", status >= 500:
		return cloudprovider.ErrUnavailable
	}
	return nil
}

// classify turns an SDK error into an *APIError or a wrapped sentinel.
func classify(action string, err error) error {
	if err == nil {
		return nil
	}
	var rf volcengineerr.RequestFailure
	if errors.As(err, &rf) {
		status := rf.StatusCode()
		code := rf.Code()
		if code == "" || (code == "UnknownError" && status >= 300) {
			code = fmt.Sprintf("HTTP%d", status)
		}
		return &APIError{
			Action:    action,
			Code:      code,
			Message:   rf.Message(),
			Status:    status,
			RequestID: rf.RequestID(),
			Kind:      kindOf(code, status),
		}
	}
	var se *json.SyntaxError
	var ute *json.UnmarshalTypeError
	if errors.As(err, &se) || errors.As(err, &ute) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("volcengine %s: %w: %w: %v", action, cloudprovider.ErrUnavailable, ErrMalformedResponse, err)
	}
	var ve volcengineerr.Error
	if errors.As(err, &ve) {
		switch ve.Code() {
		case "SerializationError":
			return fmt.Errorf("volcengine %s: %w: %w: %s", action, cloudprovider.ErrUnavailable, ErrMalformedResponse, ve.Message())
		case "RequestError", "ResponseTimeout":
			return fmt.Errorf("volcengine %s: %w: %s", action, cloudprovider.ErrUnavailable, sanitize(ve))
		case "EmptyStaticCreds", "NoCredentialProviders":
			return fmt.Errorf("volcengine %s: %w: no credentials", action, cloudprovider.ErrUnauthenticated)
		}
		return fmt.Errorf("volcengine %s: %s", action, sanitize(ve))
	}
	return fmt.Errorf("volcengine %s: %w: %v", action, cloudprovider.ErrUnavailable, err)
}

// sanitize renders an SDK error without the chained original errors, which may
// quote the full request URL.
func sanitize(ve volcengineerr.Error) string {
	return ve.Code() + ": " + ve.Message()
}
