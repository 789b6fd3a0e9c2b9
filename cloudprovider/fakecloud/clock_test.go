package fakecloud

import (
	"testing"
	"time"
)

func TestManualClock(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	c := NewManualClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now = %v, want %v", c.Now(), start)
	}
	c.Advance(90 * time.Second)
	if got := c.Now().Sub(start); got != 90*time.Second {
		t.Fatalf("advanced by %s, want 90s", got)
	}
}
