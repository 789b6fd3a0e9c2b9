package refresh

import (
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

func TestFreshnessHorizonFollowsCAPace(t *testing.T) {
	t.Parallel()
	clock := fakecloud.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := NewFreshness(60*time.Second, clock.Now)

	first := f.Begin(true)
	if first.horizon != 60*time.Second {
		t.Fatalf("first round's horizon = %v, want the bound", first.horizon)
	}
	read := first.At
	clock.Advance(2 * time.Second)
	f.End(first)

	clock.Advance(8 * time.Second) // CA's loop: 10 s, of which the refresh took 2 s
	r := f.Begin(true)
	if r.horizon != 12*time.Second {
		t.Fatalf("horizon after a 10 s loop whose refresh took 2 s = %v, want 12s", r.horizon)
	}
	if r.Due(read) {
		t.Error("something 10 s old is due, though it stays under 60 s until the next round")
	}
	clock.Advance(38 * time.Second) // 48 s old; 48 + 12 reaches the bound
	r = f.Begin(false)
	if !r.Due(read) {
		t.Error("something 48 s old with a 12 s horizon must be read now, or it is served past the bound")
	}
	if r.Expired(read) {
		t.Error("something 48 s old has not reached the 60 s bound")
	}
	f.End(r) // a lookup between refreshes leaves the pace as it was
	if got := f.Begin(true).horizon; got != 50*time.Second {
		t.Errorf("horizon = %v, want 50s: 48 s since the last paced round that ended, plus the 2 s it took (neither the unended paced round nor the unpaced one sets the pace)", got)
	}
	if !r.Due(time.Time{}) || !r.Expired(time.Time{}) {
		t.Error("something never read must be due")
	}
}

func TestFreshnessDefaultsToTheBound(t *testing.T) {
	t.Parallel()
	if got := NewFreshness(0, nil).bound; got != DefaultMaxStaleness {
		t.Errorf("bound = %v, want DefaultMaxStaleness", got)
	}
}

func TestTTLCache(t *testing.T) {
	t.Parallel()
	clock := fakecloud.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := NewTTLCache[string, int](time.Minute, clock.Now)
	c.put("a", 1)
	if v, ok := c.get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %v %v, want 1 true", v, ok)
	}
	clock.Advance(30 * time.Second)
	if c.PutIfAbsent("a", 2) {
		t.Error("PutIfAbsent replaced a live entry, extending its life")
	}
	c.put("b", 3)
	clock.Advance(30 * time.Second)
	if _, ok := c.get("a"); ok {
		t.Error("an entry put a ttl ago is still served")
	}
	if v, at, ok := c.getAt("b"); !ok || v != 3 || !at.Equal(clock.Now().Add(-30*time.Second)) {
		t.Errorf("GetAt(b) = %v %v %v", v, at, ok)
	}
	clock.Advance(30 * time.Second)
	c.put("c", 4)
	c.prune()
	if c.len() != 1 {
		t.Errorf("Len after Prune = %d, want 1 (only c is live)", c.len())
	}
	c.drop("c")
	if _, ok := c.get("c"); ok {
		t.Error("a deleted entry is served")
	}
}
