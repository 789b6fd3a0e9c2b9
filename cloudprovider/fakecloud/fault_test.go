package fakecloud

import (
	"net/http"
	"testing"
)

func TestFaultQueueMatchesInOrderAndCounts(t *testing.T) {
	patch := FaultRequest{Method: "PATCH", Path: "/v2/pools/p1", Operation: "PATCH /v2/pools/{id}"}
	get := FaultRequest{Method: "GET", Path: "/v2/pools", Operation: "GET /v2/pools"}
	tests := []struct {
		name   string
		faults []Fault
		script []FaultRequest
		want   []int // status taken per request, 0 = no fault
	}{
		{name: "method", faults: []Fault{{Method: "patch", Status: 503}}, script: []FaultRequest{get, patch, patch}, want: []int{0, 503, 0}},
		{name: "path substring", faults: []Fault{{PathContains: "/pools/", Status: 429}}, script: []FaultRequest{get, patch}, want: []int{0, 429}},
		{name: "operation", faults: []Fault{{Operation: "GET /v2/pools", Status: 502}}, script: []FaultRequest{patch, get}, want: []int{0, 502}},
		{name: "all selectors must match", faults: []Fault{{Method: "GET", PathContains: "/pools/", Status: 500}}, script: []FaultRequest{get, patch}, want: []int{0, 0}},
		{name: "times", faults: []Fault{{Status: 500, Times: 2}}, script: []FaultRequest{get, get, get}, want: []int{500, 500, 0}},
		{name: "skip", faults: []Fault{{Status: 500, Skip: 1}}, script: []FaultRequest{get, get, get}, want: []int{0, 500, 0}},
		{name: "first match wins", faults: []Fault{{Method: "PATCH", Status: 409}, {Status: 500}}, script: []FaultRequest{patch, patch}, want: []int{409, 500}},
		{name: "default status", faults: []Fault{{}, {Malformed: true}}, script: []FaultRequest{get, get}, want: []int{500, 200}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var q FaultQueue
			for _, f := range tc.faults {
				q.Add(f)
			}
			for i, r := range tc.script {
				f, hit := q.Take(r)
				got := 0
				if hit {
					got = f.AnswerStatus()
				}
				if got != tc.want[i] {
					t.Fatalf("request %d (%s %s): fault status %d, want %d", i, r.Method, r.Path, got, tc.want[i])
				}
			}
		})
	}
}

func TestFaultQueueFailNext(t *testing.T) {
	var q FaultQueue
	q.Add(Fault{Status: http.StatusTooManyRequests})
	q.FailNext(2)
	q.FailNext(1) // replaces, does not add
	if got := q.Pending(); got != 2 {
		t.Fatalf("Pending = %d, want 2 (one FailNext, one queued fault)", got)
	}
	if f, _ := q.Take(FaultRequest{}); f.AnswerStatus() != http.StatusInternalServerError {
		t.Fatalf("FailNext answered %d before the queue, want 500", f.AnswerStatus())
	}
	if f, _ := q.Take(FaultRequest{}); f.AnswerStatus() != http.StatusTooManyRequests {
		t.Fatalf("queued fault answered %d, want 429", f.AnswerStatus())
	}
	q.FailNext(5)
	q.FailNext(0)
	if _, hit := q.Take(FaultRequest{}); hit {
		t.Fatal("FailNext(0) did not stop failing")
	}
	q.Add(Fault{})
	q.FailNext(3)
	q.Clear()
	if q.Pending() != 0 {
		t.Fatal("Clear left faults")
	}
}
