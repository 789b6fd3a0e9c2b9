package exoscale

import "testing"

// TestPoolShows: when the pool's size alone settles a group's pending
// operations, and when only GET /operation can.
func TestPoolShows(t *testing.T) {
	t.Parallel()
	scale := func(from, to int) submittedOp { return submittedOp{kind: opScale, from: from, to: to} }
	evict := func(from, to int) submittedOp { return submittedOp{kind: opEvict, from: from, to: to} }
	for _, tc := range []struct {
		name string
		ops  []submittedOp
		size int
		want bool
	}{
		{"nothing pending", nil, 3, false},
		{"scale-up shown", []submittedOp{scale(3, 5)}, 5, true},
		{"scale-up not shown (queued or failed)", []submittedOp{scale(3, 5)}, 3, false},
		{"eviction shown", []submittedOp{evict(3, 2)}, 2, true},
		{"two scales: the last one's size", []submittedOp{scale(3, 4), scale(4, 6)}, 6, true},
		{"two scales: only the first one's size", []submittedOp{scale(3, 4), scale(4, 6)}, 4, false},
		{"scales back to where they started", []submittedOp{scale(3, 4), scale(4, 3)}, 3, false},
		{"evictions in a chain", []submittedOp{evict(5, 4), evict(4, 2)}, 2, true},
		{"evictions not in a chain", []submittedOp{evict(5, 4), evict(5, 4)}, 4, false},
		{"a scale-up then an eviction", []submittedOp{scale(3, 4), evict(4, 3)}, 3, false},
		{"an eviction then a scale-up back", []submittedOp{evict(4, 3), scale(3, 4)}, 4, false},
		// The scale's absolute size hides whether the eviction was applied.
		{"an eviction then a scale-up", []submittedOp{evict(5, 4), scale(4, 6)}, 6, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := poolShows(tc.ops, tc.size); got != tc.want {
				t.Fatalf("poolShows(%+v, %d) = %v, want %v", tc.ops, tc.size, got, tc.want)
			}
		})
	}
}
