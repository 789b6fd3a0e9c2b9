package fakecloud

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestRecorderKeepsTheLatestAndCountsAll(t *testing.T) {
	r := newRecorder(3)
	for i := range 7 {
		req := &RecordedRequest{Path: fmt.Sprint(i), Operation: []string{"list", "scale"}[i%2]}
		r.record(req)
		r.finish(req, http.StatusOK, false)
	}
	paths := func(reqs []RecordedRequest) string {
		s := ""
		for _, q := range reqs {
			s += q.Path
		}
		return s
	}
	if got := paths(r.Requests()); got != "456" {
		t.Fatalf("log holds %q, want the latest three, 456", got)
	}
	if r.Count() != 7 || r.CountOperation("list") != 4 || r.CountOperation("scale") != 3 {
		t.Fatalf("Count %d, counts %v: want 7 in all, 4 list and 3 scale", r.Count(), r.OperationCounts())
	}
	for _, tc := range []struct {
		since int
		want  string
	}{{0, "456"}, {5, "56"}, {6, "6"}, {7, ""}, {9, ""}} {
		if got := paths(r.Since(tc.since)); got != tc.want {
			t.Errorf("Since(%d) = %q, want %q", tc.since, got, tc.want)
		}
	}
	r.Reset()
	if r.Count() != 0 || len(r.Requests()) != 0 || len(r.OperationCounts()) != 0 {
		t.Fatalf("after Reset: Count %d, log %d, counts %v", r.Count(), len(r.Requests()), r.OperationCounts())
	}
}

func TestRecorderBoundsTheOperationNames(t *testing.T) {
	r := newRecorder(1)
	for i := range maxOperations + 10 {
		r.record(&RecordedRequest{Operation: fmt.Sprintf("GET /probe/%d", i)})
	}
	r.record(&RecordedRequest{Operation: "GET /probe/0"})
	counts := r.OperationCounts()
	if len(counts) != maxOperations+1 || counts[OtherOperations] != 10 || counts["GET /probe/0"] != 2 {
		t.Fatalf("%d names, %d other, %d of a known one; want %d, 10 and 2",
			len(counts), counts[OtherOperations], counts["GET /probe/0"], maxOperations+1)
	}
}

// TestAPIMemoryIsBounded serves many requests through a fake with a small
// log and checks it keeps only the latest while counting every one.
func TestAPIMemoryIsBounded(t *testing.T) {
	c := newCounterAPI(t, NewManualClock(time.Unix(100, 0)), func(cfg *APIConfig) { cfg.LogLimit = 5 })
	for range 20 {
		if got := c.call(context.Background(), http.MethodGet, ""); got.err != nil {
			t.Fatal(got.err)
		}
	}
	if c.RequestCount() != 20 || len(c.Requests()) != 5 || len(c.RequestsSince(18)) != 2 {
		t.Fatalf("RequestCount %d, log %d, since 18: %d; want 20, 5 and 2", c.RequestCount(), len(c.Requests()), len(c.RequestsSince(18)))
	}
}
