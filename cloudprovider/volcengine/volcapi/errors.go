package volcapi

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/volcengine/volcengine-go-sdk/volcengine/volcengineerr"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

// cloudName names Volcengine in cloudhttp.APIError.
const cloudName = "volcengine"

// IsCode reports whether err is an APIError with one of codes.
func IsCode(err error, codes ...string) bool {
	var ae *cloudhttp.APIError
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

// throttleCodes are the throttling codes the SDK's retryer lists (it retries
// them even in an HTTP 200 answer). The gateway's own throttling codes form
// the FlowLimitExceeded family (AccountFlowLimitExceeded), matched by
// substring in classOf.
var throttleCodes = []string{"throttling", "throttlingexception", "requestlimitexceeded", "requestthrottled", "toomanyrequestsexception"}

// classOf returns the class of an error answer. The HTTP status decides
// (cloudhttp.StatusClass), except for throttling codes and capacity codes
// (quota, stock-out). Capacity codes are matched by substring because
// Volcengine publishes no list of Auto Scaling codes, and CA must see them
// as ResourceExhausted to back the group off. An error code in an HTTP 200
// is a refusal.
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
	return cloudhttp.StatusClass(status)
}

// classify turns an SDK error into a *cloudhttp.APIError with the call's
// outcome. ans is the answer the shared stack saw, since the SDK keeps no
// status for a body it could not decode (a 2xx with an empty body, a
// gateway's HTML error page).
func classify(action string, ans *cloudhttp.Answer, err error) error {
	if err == nil {
		return nil
	}
	var rf volcengineerr.RequestFailure
	if errors.As(err, &rf) {
		// The body carried Volcengine's error object (ResponseMetadata.Error),
		// with any status: in a 2xx it is a refusal.
		status := rf.StatusCode()
		code := rf.Code()
		if code == "" || (code == "UnknownError" && status >= 300) {
			code = fmt.Sprintf("HTTP%d", status)
		}
		return cloudhttp.AnswerError(cloudName, action, cloudhttp.ErrorAnswer{Status: status, Code: code, Message: rf.Message(),
			RequestID: rf.RequestID(), CloudError: true, Class: classOf(code, status)})
	}
	if status := ans.Status(); status >= 200 && status < 300 {
		// A success whose body the SDK could not decode: applied.
		return cloudhttp.MalformedAnswer(cloudName, action, status, "body does not parse: %s", sdkMessage(err))
	} else if status != 0 {
		// An error answer without Volcengine's error object (a gateway's page).
		return cloudhttp.AnswerError(cloudName, action, cloudhttp.ErrorAnswer{Status: status, Message: string(ans.ErrorBody()),
			RetryAfter: ans.RetryAfter()})
	}
	var ve volcengineerr.Error
	if errors.As(err, &ve) {
		switch ve.Code() {
		case "EmptyStaticCreds", "NoCredentialProviders":
			// Refused before sending: there is nothing to sign with.
			return cloudprovider.Errorf(cloudprovider.ErrUnauthenticated, "volcengine %s: no credentials", action)
		}
	}
	// No answer: the outcome is the one the transport's error carries (our
	// rate limit's refusal), else unknown. The message leaves out the
	// chained errors, which quote the full request URL; the cause keeps the
	// network error (a DNS failure, a refused connection) with the URL cut
	// to its host.
	return cloudhttp.AnswerError(cloudName, action, cloudhttp.ErrorAnswer{Message: sdkMessage(err),
		Class: cloudhttp.NoResponseClass(err), Cause: cloudhttp.TransportCause(err)})
}

// sdkMessage renders an SDK error without its chained errors.
func sdkMessage(err error) string {
	var ve volcengineerr.Error
	if errors.As(err, &ve) {
		return sanitize(ve)
	}
	return err.Error()
}

// sanitize renders an SDK error without the chained original errors, which may
// quote the full request URL.
func sanitize(ve volcengineerr.Error) string {
	return ve.Code() + ": " + ve.Message()
}
