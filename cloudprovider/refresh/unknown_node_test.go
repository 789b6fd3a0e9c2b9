package refresh_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
)

// fakeIndex is a provider's index: ids in a group, ids known in no group,
// and what the next lookup adds.
type fakeIndex struct {
	mu      sync.Mutex
	groups  map[string]string
	foreign map[string]bool
	// onLookup is added to groups by the next lookup.
	onLookup map[string]string
	fail     error
	lookups  int
}

func (f *fakeIndex) lookup(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.fail != nil {
		return f.fail
	}
	for id, g := range f.onLookup {
		f.groups[id] = g
	}
	return nil
}

func (f *fakeIndex) index(id string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.groups[id], f.foreign[id]
}

func (f *fakeIndex) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups
}

func newLookup(f *fakeIndex, clock *fakecloud.ManualClock, failed *int) *refresh.UnknownNodeLookup {
	return &refresh.UnknownNodeLookup{
		Provider: "test", Lookup: f.lookup, Remember: time.Minute, Now: clock.Now,
		Failed: func() { *failed++ },
	}
}

func TestUnknownNodesCostOneLookupPerRefreshAndAreRemembered(t *testing.T) {
	clock := fakecloud.NewManualClock(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	f := &fakeIndex{groups: map[string]string{"known": "g1"}, foreign: map[string]bool{"control-plane": true},
		onLookup: map[string]string{"new": "g2"}}
	var failed int
	u := newLookup(f, clock, &failed)
	ctx := context.Background()
	resolve := func(id string) string { return refresh.ResolveUnknownNode(ctx, u, id, f.index) }

	if got := resolve("known"); got != "g1" || f.calls() != 0 {
		t.Fatalf("indexed node: group %q after %d lookups, want g1 after 0", got, f.calls())
	}
	if got := resolve("control-plane"); got != "" || f.calls() != 0 {
		t.Fatalf("node the index knows in no group: group %q after %d lookups, want none after 0", got, f.calls())
	}
	// A thousand gone nodes and a new one: one lookup for all.
	for i := 0; i < 1000; i++ {
		if got := resolve(fmt.Sprintf("gone-%d", i)); got != "" {
			t.Fatalf("gone node claimed for group %q", got)
		}
	}
	if got := resolve("new"); got != "g2" {
		t.Fatalf("new node: group %q, want g2", got)
	}
	if f.calls() != 1 {
		t.Fatalf("%d lookups in one refresh, want 1", f.calls())
	}
	// Remembered across refreshes until the bound: no lookup.
	for r := 0; r < 3; r++ {
		clock.Advance(15 * time.Second)
		u.Refreshed()
		for i := 0; i < 1000; i++ {
			resolve(fmt.Sprintf("gone-%d", i))
		}
	}
	if f.calls() != 1 {
		t.Fatalf("%d lookups after 45 s of refreshes asking about remembered nodes, want still 1", f.calls())
	}
	// Past the bound: one lookup again, for all of them.
	clock.Advance(15 * time.Second)
	u.Refreshed()
	for i := 0; i < 1000; i++ {
		resolve(fmt.Sprintf("gone-%d", i))
	}
	if f.calls() != 2 {
		t.Fatalf("%d lookups once the bound passed, want 2", f.calls())
	}
	// A remembered node a later snapshot places in a group is served at once.
	f.mu.Lock()
	f.groups["gone-7"] = "g3"
	f.mu.Unlock()
	if got := resolve("gone-7"); got != "g3" {
		t.Fatalf("remembered node now in the index: group %q, want g3", got)
	}
	if failed != 0 {
		t.Fatalf("%d failures counted, want 0", failed)
	}
}

func TestUnknownNodeLookupFailureAnswersNoGroup(t *testing.T) {
	clock := fakecloud.NewManualClock(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	f := &fakeIndex{groups: map[string]string{}, onLookup: map[string]string{"new": "g2"}, fail: errors.New("503 from the cloud")}
	var failed int
	u := newLookup(f, clock, &failed)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if got := refresh.ResolveUnknownNode(ctx, u, "new", f.index); got != "" {
			t.Fatalf("failing lookup: group %q, want none", got)
		}
	}
	if f.calls() != 1 || failed != 3 {
		t.Fatalf("%d lookups and %d counted failures, want 1 and 3 (the failure is shared until the next refresh)", f.calls(), failed)
	}
	// A failure is not an answer: the node is not remembered as absent.
	f.mu.Lock()
	f.fail = nil
	f.mu.Unlock()
	u.Refreshed()
	if got := refresh.ResolveUnknownNode(ctx, u, "new", f.index); got != "g2" {
		t.Fatalf("after the cloud recovered: group %q, want g2", got)
	}
}

func TestUnknownNodeLookupEndsBeforeTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	outer, _ := ctx.Deadline()
	var inner time.Time
	u := &refresh.UnknownNodeLookup{Lookup: func(lctx context.Context) error {
		inner, _ = lctx.Deadline()
		return nil
	}}
	refresh.ResolveUnknownNode(ctx, u, "a", func(string) (string, bool) { return "", false })
	if !inner.Equal(outer.Add(-refresh.LookupMargin)) {
		t.Fatalf("lookup deadline %v, want %v", inner, outer.Add(-refresh.LookupMargin))
	}
}

func TestUnknownNodeLookupSharesARunningLookup(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	var runs int
	var mu sync.Mutex
	u := &refresh.UnknownNodeLookup{Lookup: func(context.Context) error {
		mu.Lock()
		runs++
		mu.Unlock()
		close(started)
		<-release
		return errors.New("cloud down")
	}}
	none := func(string) (string, bool) { return "", false }
	done := make(chan string)
	go func() { done <- refresh.ResolveUnknownNode(context.Background(), u, "a", none) }()
	<-started
	second := make(chan string)
	go func() { second <- refresh.ResolveUnknownNode(context.Background(), u, "b", none) }()
	close(release)
	<-done
	<-second
	if runs != 1 {
		t.Fatalf("%d lookups for two concurrent callers, want 1", runs)
	}
}

// namedGroup is a node group that only knows its id; the embedded nil
// interface is never called.
type namedGroup struct {
	cloudprovider.NodeGroup
	id string
}

func TestResolveNodeGroupAnswersNoGroupAsNilInterface(t *testing.T) {
	t.Parallel()
	g1 := &namedGroup{id: "g1"}
	index := func(id string) (*namedGroup, bool) {
		if id == "in-g1" {
			return g1, false
		}
		return nil, id == "foreign"
	}
	u := &refresh.UnknownNodeLookup{Lookup: func(context.Context) error { return nil }}
	if got := refresh.ResolveNodeGroup(context.Background(), u, "in-g1", index); got != g1 {
		t.Fatalf("in-g1 resolved to %v, want g1", got)
	}
	for _, id := range []string{"foreign", "gone"} {
		// A typed nil inside the interface would compare unequal to nil and
		// be served as a group.
		if got := refresh.ResolveNodeGroup(context.Background(), u, id, index); got != nil {
			t.Fatalf("%s resolved to %#v, want a nil NodeGroup", id, got)
		}
	}
}
