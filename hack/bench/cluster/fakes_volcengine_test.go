package cluster

import "testing"

// TestVolcSizesLeaveRoomToScaleUp: the benchmark scales up the first
// Volcengine group, which the fake refuses at or above the documented
// 100-instance maximum; the seed keeps N nodes in G groups and the first
// group one below its max.
func TestVolcSizesLeaveRoomToScaleUp(t *testing.T) {
	tests := []struct{ nodes, groups int }{{10000, 100}, {10000, 3}, {1000, 20}, {1000, 100}, {9, 3}, {500, 1}}
	for _, tc := range tests {
		o := Options{Nodes: tc.nodes, Groups: tc.groups}
		if err := o.defaults(); err != nil {
			t.Fatal(err)
		}
		maxSize, sizes := volcSizes(o)
		sum := 0
		for _, n := range sizes {
			sum += n
		}
		if sum != tc.nodes || len(sizes) != tc.groups {
			t.Errorf("N=%d G=%d: %d nodes in %d groups, want all of them", tc.nodes, tc.groups, sum, len(sizes))
		}
		if maxSize > volcMaxGroupSize {
			t.Errorf("N=%d G=%d: max %d above the documented %d", tc.nodes, tc.groups, maxSize, volcMaxGroupSize)
		}
		if tc.groups > 1 && sizes[0] >= maxSize {
			t.Errorf("N=%d G=%d: first group starts at %d with max %d, no room for a scale-up", tc.nodes, tc.groups, sizes[0], maxSize)
		}
	}
}
