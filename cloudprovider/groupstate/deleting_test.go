package groupstate

import (
	"testing"
	"time"
)

func TestDeletingSet(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	now := start
	s := newDeletingSet(DeletingGrace, func() time.Time { return now })
	all := func(string) bool { return true }

	s.add("a", "b")
	now = now.Add(DeletingGrace / 2)
	s.add("a") // a repeated deletion keeps the first time
	if !s.holds("a") || !s.holds("b") || s.holds("c") || s.len() != 2 {
		t.Fatalf("after Add: a %v b %v c %v len %d", s.holds("a"), s.holds("b"), s.holds("c"), s.len())
	}

	// A listing that no longer holds b ends b; a holds within the grace.
	s.reconcile(now, func(id string) bool { return id != "b" })
	if !s.holds("a") || s.holds("b") {
		t.Fatalf("after a listing without b: a %v b %v, want true false", s.holds("a"), s.holds("b"))
	}

	// A listing that began a moment before the grace ended keeps a.
	s.reconcile(start.Add(DeletingGrace-time.Nanosecond), all)
	if !s.holds("a") {
		t.Fatal("a listing that began inside the grace ended it")
	}
	// One that began once the grace had passed ends it, although it lists a.
	s.reconcile(start.Add(DeletingGrace), all)
	if s.holds("a") {
		t.Fatal("a listing that began after the grace kept a")
	}

	// A listing that began before the deletion was accepted never ends it.
	now = start.Add(time.Hour)
	s.add("d")
	s.reconcile(start, all)
	if !s.holds("d") {
		t.Fatal("a listing older than the deletion ended its grace")
	}
	s.forget("d")
	if s.holds("d") || s.len() != 0 {
		t.Fatal("Forget kept d")
	}
}
