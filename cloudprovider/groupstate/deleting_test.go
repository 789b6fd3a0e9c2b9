package groupstate

import (
	"testing"
	"time"
)

func TestDeletingSet(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	now := start
	s := NewDeletingSet(DeletingGrace, func() time.Time { return now })
	all := func(string) bool { return true }

	s.Add("a", "b")
	now = now.Add(DeletingGrace / 2)
	s.Add("a") // a repeated deletion keeps the first time
	if !s.Holds("a") || !s.Holds("b") || s.Holds("c") || s.Len() != 2 {
		t.Fatalf("after Add: a %v b %v c %v len %d", s.Holds("a"), s.Holds("b"), s.Holds("c"), s.Len())
	}

	// A listing that no longer holds b ends b; a holds within the grace.
	s.Reconcile(now, func(id string) bool { return id != "b" })
	if !s.Holds("a") || s.Holds("b") {
		t.Fatalf("after a listing without b: a %v b %v, want true false", s.Holds("a"), s.Holds("b"))
	}

	// A listing that began a moment before the grace ended keeps a.
	s.Reconcile(start.Add(DeletingGrace-time.Nanosecond), all)
	if !s.Holds("a") {
		t.Fatal("a listing that began inside the grace ended it")
	}
	// One that began once the grace had passed ends it, although it lists a.
	s.Reconcile(start.Add(DeletingGrace), all)
	if s.Holds("a") {
		t.Fatal("a listing that began after the grace kept a")
	}

	// A listing that began before the deletion was accepted never ends it.
	now = start.Add(time.Hour)
	s.Add("d")
	s.Reconcile(start, all)
	if !s.Holds("d") {
		t.Fatal("a listing older than the deletion ended its grace")
	}
	s.Forget("d")
	if s.Holds("d") || s.Len() != 0 {
		t.Fatal("Forget kept d")
	}
}
