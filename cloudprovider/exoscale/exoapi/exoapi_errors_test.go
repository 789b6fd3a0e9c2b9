package exoapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 400)
	for _, tc := range []struct{ name, body, want string }{
		{"message field", `{"message":"instance quota exceeded"}`, "instance quota exceeded"},
		{"error field", `{"error":"bad thing"}`, "bad thing"},
		{"plain text", "upstream connect error\n", "upstream connect error"},
		{"json without message", `{"code":1}`, ""},
		{"long, cut by cloudhttp.AnswerError", `{"message":"` + long + `"}`, long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := errorMessage([]byte(tc.body)); got != tc.want {
				t.Fatalf("errorMessage = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStatusCodeOfAPIError(t *testing.T) {
	t.Parallel()
	cause := errors.New("sdk: Not Found: gone")
	e := &cloudhttp.APIError{Cloud: cloudName, Operation: "GetInstance", Status: http.StatusNotFound, Message: "gone", Class: cloudhttp.StatusClass(404), Cause: cause}
	if !errors.Is(e, cloudprovider.ErrNotFound) || !errors.Is(e, cause) {
		t.Fatalf("APIError does not unwrap to both sentinel and cause: %v", e)
	}
	if errors.Is(e, cloudprovider.ErrUnavailable) {
		t.Fatal("404 classified as unavailable")
	}
	if StatusCode(e) != http.StatusNotFound || StatusCode(errors.New("plain")) != 0 {
		t.Fatal("StatusCode of a non-API error must be 0")
	}
}
