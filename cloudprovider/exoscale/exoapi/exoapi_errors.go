package exoapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// maxErrorBody bounds how much of an error body we keep for the message.
const maxErrorBody = 4 << 10

// maxMessageLen bounds the server message carried in an error.
const maxMessageLen = 256

// cloudName names Exoscale in cloudprovider.APIError.
const cloudName = "exoscale"

// response is what the recording transport saw for one call.
type response struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	message    string
}

type responseKey struct{}

// recordingTransport notes status, Retry-After and the error message of the
// last response of a call. The SDK turns statuses into text errors and drops
// headers; recording them here keeps classification exact without parsing text.
type recordingTransport struct {
	base http.RoundTripper
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	if klog.V(5).Enabled() {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		// Method, templated path and status only: never headers or bodies.
		klog.V(5).InfoS("Exoscale API call", "provider", "exoscale", "operation", OperationName(req), "status", status, "duration", time.Since(start), "err", err)
	}
	rec, _ := req.Context().Value(responseKey{}).(*response)
	if rec == nil || resp == nil {
		return resp, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.status = resp.StatusCode
	rec.retryAfter = 0
	rec.message = ""
	if resp.StatusCode >= 400 {
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			rec.retryAfter = cloudprovider.RetryAfter(resp.Header, 0)
		}
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		if rerr == nil {
			rec.message = errorMessage(body)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	return resp, err
}

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
	if len(msg) > maxMessageLen {
		msg = msg[:maxMessageLen] + "..."
	}
	return msg
}

// call runs one SDK call and classifies its error.
func call[T any](ctx context.Context, op string, fn func(ctx context.Context) (T, error)) (T, error) {
	rec := &response{}
	out, err := fn(context.WithValue(ctx, responseKey{}, rec))
	if err == nil {
		return out, nil
	}
	var zero T
	rec.mu.Lock()
	defer rec.mu.Unlock()
	apiErr := &cloudprovider.APIError{Cloud: cloudName, Operation: op, Status: rec.status, Message: rec.message,
		RetryAfter: rec.retryAfter, Class: cloudprovider.StatusClass(rec.status), Cause: err}
	if rec.status >= 200 && rec.status < 300 {
		apiErr.Message = "malformed response body"
	}
	if rec.status == 0 {
		apiErr.Class = cloudprovider.NoResponseClass(err)
	}
	return zero, apiErr
}

// StatusCode returns the HTTP status of a failed call, or 0.
func StatusCode(err error) int {
	var apiErr *cloudprovider.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Status
	}
	return 0
}
