package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

type alwaysReady struct{}

func (alwaysReady) Ready() bool { return true }

// TestProfilingIsOptIn: pprof answers on the metrics mux only with
// --profiling, and never the command line; metrics and probes answer either way.
func TestProfilingIsOptIn(t *testing.T) {
	get := func(t *testing.T, srv *httptest.Server, path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, profiling := range []bool{false, true} {
		srv := httptest.NewServer(metricsMux(prometheus.NewRegistry(), alwaysReady{}, profiling, nil))
		for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
			if code, _ := get(t, srv, path); code != http.StatusOK {
				t.Errorf("profiling=%v: %s answered %d", profiling, path, code)
			}
		}
		code, body := get(t, srv, "/debug/pprof/goroutine?debug=1")
		switch {
		case !profiling && code != http.StatusNotFound:
			t.Errorf("without --profiling, /debug/pprof/goroutine answered %d", code)
		case profiling && (code != http.StatusOK || !strings.Contains(body, "goroutine")):
			t.Errorf("with --profiling, /debug/pprof/goroutine answered %d %.80q", code, body)
		}
		// Only --simulate serves the simulated cloud's state.
		if code, _ := get(t, srv, simcloud.StatePath); code != http.StatusNotFound {
			t.Errorf("without --simulate, %s answered %d", simcloud.StatePath, code)
		}
		if profiling {
			if code, _ := get(t, srv, "/debug/pprof/"); code != http.StatusOK {
				t.Errorf("/debug/pprof/ index answered %d", code)
			}
			if code, _ := get(t, srv, "/debug/pprof/cmdline"); code == http.StatusOK {
				t.Error("/debug/pprof/cmdline echoes the flags; it is not served")
			}
		}
		srv.Close()
	}
}
