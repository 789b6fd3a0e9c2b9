package simcloud

import (
	"testing"
	"time"
)

func TestDemoPaceShowsEachStateAndEndsWithinAMinute(t *testing.T) {
	t.Parallel()
	p := DemoPace()
	for name, d := range map[string]time.Duration{"Appear": p.Appear, "Provision": p.Provision, "Removal": p.Removal, "Operation": p.Operation} {
		if d <= 0 || d >= time.Minute {
			t.Errorf("%s = %v, want a few seconds: a demo shows the state, and CA sees it end within a minute", name, d)
		}
	}
	if p.Appear >= p.Provision {
		t.Errorf("Appear %v >= Provision %v: an instance must be listed before it runs", p.Appear, p.Provision)
	}
}
