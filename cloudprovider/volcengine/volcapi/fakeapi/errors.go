package fakeapi

import (
	"fmt"
	"net/http"
)

// apiError is a refusal as the gateway carries it: an HTTP status and
// ResponseMetadata.Error's Code and Message.
type apiError struct {
	status  int
	code    string
	message string
}

func errf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// Error codes. Only codes documented for the Auto Scaling API or the gateway
// are used (BytePlus common error codes: InvalidParameter, MissingParameter.*;
// Auto Scaling error codes: the InvalidScalingGroup.InvalidStatus form; see
// docs/providers/volcengine.md, "Documented constraints"). An unknown scaling
// group gets InvalidParameter: the docs name no code for it.
const (
	codeInvalidParameter   = "InvalidParameter"
	codeMissingParameter   = "MissingParameter"
	codeGroupInvalidStatus = "InvalidScalingGroup.InvalidStatus"
)

// invalid refuses a parameter value with the common InvalidParameter code.
func invalid(format string, args ...any) *apiError {
	return errf(http.StatusBadRequest, codeInvalidParameter, format, args...)
}

// defaultErrorCode picks the gateway's code for a fault given only a status,
// from BytePlus's common error codes (docs/providers/volcengine.md,
// "Documented constraints", lists those the provider meets).
func defaultErrorCode(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "AccountFlowLimitExceeded"
	case status == http.StatusUnauthorized:
		return "SignatureDoesNotMatch"
	case status == http.StatusForbidden:
		return "AccessDenied"
	case status == http.StatusNotFound:
		return "InvalidActionOrVersion"
	case status >= 500:
		return "InternalError"
	default:
		return "InvalidParameter"
	}
}
