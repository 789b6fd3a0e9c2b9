package exoapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

// cloudName names Exoscale in cloudhttp.APIError.
const cloudName = "exoscale"

// errorMessage extracts the API's {"message": ...} (or the raw text).
func errorMessage(body []byte) string {
	var m struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	msg := string(bytes.TrimSpace(body))
	if json.Valid(body) {
		msg = ""
		if err := json.Unmarshal(body, &m); err == nil {
			msg = m.Message
			if msg == "" {
				msg = m.Error
			}
		}
	}
	return msg
}

// call runs one SDK call and classifies its error from the status,
// Retry-After and error body the shared stack recorded, since egoscale turns
// statuses into text errors and drops headers. No error text is parsed.
func call[T any](ctx context.Context, op string, fn func(ctx context.Context) (T, error)) (T, error) {
	actx, ans := cloudhttp.RecordAnswer(ctx)
	out, err := fn(actx)
	if err == nil {
		return out, nil
	}
	var zero T
	status := ans.Status()
	switch {
	case status == 0:
		return zero, cloudhttp.NoAnswer(cloudName, op, err)
	case status >= 200 && status < 300:
		// The cloud accepted the request; only its body did not parse.
		return zero, cloudhttp.MalformedAnswer(cloudName, op, status, "body does not parse: %v", err)
	}
	return zero, cloudhttp.AnswerError(cloudName, op, cloudhttp.ErrorAnswer{Status: status, Message: errorMessage(ans.ErrorBody()),
		RetryAfter: ans.RetryAfter(), Cause: err})
}

// StatusCode returns the HTTP status of a failed call, or 0.
func StatusCode(err error) int {
	var apiErr *cloudhttp.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Status
	}
	return 0
}
