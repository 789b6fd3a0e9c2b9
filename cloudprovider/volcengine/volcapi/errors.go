package volcapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/volcengine/volcengine-go-sdk/volcengine/volcengineerr"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// cloudName names Volcengine in cloudprovider.APIError.
const cloudName = "volcengine"

// IsCode reports whether err is an APIError with one of codes.
func IsCode(err error, codes ...string) bool {
	var ae *cloudprovider.APIError
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

// throttleCodes are the throttling codes the SDK's retryer documents (it
// retries them even in an HTTP 200 answer); the gateway's own is the
// FlowLimitExceeded family (AccountFlowLimitExceeded), which terraform
// detects by that substring.
var throttleCodes = []string{"throttling", "throttlingexception", "requestlimitexceeded", "requestthrottled", "toomanyrequestsexception"}

// classOf is the class of an error answer: the HTTP status decides
// (cloudprovider.StatusClass), refined only by code families: throttling
// (documented, see throttleCodes) and capacity (quota and stock-out codes,
// matched by family substring, because CA must see them as ResourceExhausted
// to back the group off and Volcengine publishes no list of Auto Scaling
// codes). An error code inside an HTTP 200 is a refusal.
func classOf(code string, status int) error {
	lc := strings.ToLower(code)
	switch {
	case strings.Contains(lc, "flowlimitexceeded"), slices.Contains(throttleCodes, lc):
		return cloudprovider.ErrRateLimited
	case strings.Contains(lc, "quota"), strings.Contains(lc, "nostock"), strings.Contains(lc, "outofstock"),
		strings.Contains(lc, "soldout"), strings.Contains(lc, "stockout"):
		return cloudprovider.ErrQuotaExceeded
	case status >= 200 && status < 300:
		return cloudprovider.ErrFailedPrecondition
	}
	return cloudprovider.StatusClass(status)
}

// classify turns an SDK error into a *cloudprovider.APIError.
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
		return &cloudprovider.APIError{
			Cloud:     cloudName,
			Operation: action,
			Code:      code,
			Message:   rf.Message(),
			Status:    status,
			RequestID: rf.RequestID(),
			Class:     classOf(code, status),
		}
	}
	answered := func(class error, msg string) error {
		// A 2xx whose body we cannot use: the call may have been applied.
		return &cloudprovider.APIError{Cloud: cloudName, Operation: action, Status: http.StatusOK, Message: msg, Class: class}
	}
	var se *json.SyntaxError
	var ute *json.UnmarshalTypeError
	if errors.As(err, &se) || errors.As(err, &ute) || errors.Is(err, io.ErrUnexpectedEOF) {
		return answered(cloudprovider.ErrMalformedResponse, err.Error())
	}
	var ve volcengineerr.Error
	if errors.As(err, &ve) {
		switch ve.Code() {
		case "SerializationError":
			return answered(cloudprovider.ErrMalformedResponse, ve.Message())
		case "RequestError", "ResponseTimeout":
			return &cloudprovider.APIError{Cloud: cloudName, Operation: action, Message: sanitize(ve), Class: cloudprovider.NoResponseClass(err)}
		case "EmptyStaticCreds", "NoCredentialProviders":
			return fmt.Errorf("volcengine %s: %w: no credentials", action, cloudprovider.ErrUnauthenticated)
		}
		return fmt.Errorf("volcengine %s: %s", action, sanitize(ve))
	}
	return &cloudprovider.APIError{Cloud: cloudName, Operation: action, Message: err.Error(), Class: cloudprovider.NoResponseClass(err)}
}

// sanitize renders an SDK error without the chained original errors, which may
// quote the full request URL.
func sanitize(ve volcengineerr.Error) string {
	return ve.Code() + ": " + ve.Message()
}
