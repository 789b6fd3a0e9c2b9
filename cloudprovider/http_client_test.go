package cloudprovider

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestNewHTTPClient(t *testing.T) {
	var gotUA string
	var redirected bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { redirected = true }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA = r.UserAgent()
		if r.URL.Path == "/away" {
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		}
	}))
	defer srv.Close()
	var instrumented []string
	c := NewHTTPClient(BuildOptions{
		UserAgent: "cluster-autoscaler-provider/test",
		InstrumentTransport: func(base http.RoundTripper, op OperationFunc) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				instrumented = append(instrumented, op(r))
				return base.RoundTrip(r)
			})
		},
	}, HTTPStack{Operation: func(r *http.Request) string { return r.Method + " " + r.URL.Path }})
	if c == http.DefaultClient || c.Transport == http.DefaultTransport {
		t.Fatal("client must have its own transport")
	}
	if c.Timeout != 0 {
		t.Fatal("the lifetime is a context deadline in the stack, not http.Client.Timeout")
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v2/x", nil)
	req.Header.Set("User-Agent", "sdk/1.0")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if gotUA != "cluster-autoscaler-provider/test sdk/1.0" {
		t.Fatalf("User-Agent %q", gotUA)
	}
	if len(instrumented) != 1 || instrumented[0] != "GET /v2/x" {
		t.Fatalf("instrumented %v", instrumented)
	}
	resp, err = c.Get(srv.URL + "/away")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if redirected || resp.StatusCode != http.StatusFound {
		t.Fatalf("followed a redirect to another host (status %d)", resp.StatusCode)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
