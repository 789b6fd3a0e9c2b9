package fakeapi

import (
	"fmt"
	"net/url"
	"testing"
)

func TestParamsIDLists(t *testing.T) {
	t.Parallel()
	ids := func(name string, n int) url.Values {
		q := url.Values{}
		for i := 1; i <= n; i++ {
			q.Set(fmt.Sprintf("%s.%d", name, i), fmt.Sprintf("id-%d", i))
		}
		return q
	}
	t.Run("a filter takes up to its limit", func(t *testing.T) {
		t.Parallel()
		r := &params{q: ids("Ids", 3)}
		match := r.filter("Ids", 3)
		if r.err != nil || !match("id-3") || match("id-4") {
			t.Fatalf("err %+v, id-3 %v, id-4 %v", r.err, match("id-3"), match("id-4"))
		}
	})
	t.Run("an absent filter matches everything", func(t *testing.T) {
		t.Parallel()
		r := &params{q: url.Values{}}
		if match := r.filter("Ids", 3); r.err != nil || !match("anything") {
			t.Fatalf("err %+v", r.err)
		}
	})
	t.Run("a filter refuses more than its limit", func(t *testing.T) {
		t.Parallel()
		r := &params{q: ids("Ids", 4)}
		r.filter("Ids", 3)
		checkRefusal(t, r, "Ids.N takes 1 to 3 values, got 4")
	})
	t.Run("a required list refuses none", func(t *testing.T) {
		t.Parallel()
		r := &params{q: url.Values{}}
		r.ids("Ids", 20)
		checkRefusal(t, r, "Ids.N takes 1 to 20 values, got 0")
	})
	t.Run("a list stops at the first gap and skips empty values", func(t *testing.T) {
		t.Parallel()
		r := &params{q: url.Values{"Ids.1": {"a"}, "Ids.2": {""}, "Ids.3": {"c"}, "Ids.5": {"e"}}}
		if got := r.ids("Ids", 20); fmt.Sprint(got) != "[a c]" {
			t.Fatalf("got %v, want [a c]", got)
		}
	})
}

// TestParamsFirstRefusalSticks: a handler reads all its parameters and
// checks once, so the refusal it answers is the first in reading order.
func TestParamsFirstRefusalSticks(t *testing.T) {
	t.Parallel()
	r := &params{q: url.Values{"A": {"x"}, "B": {"maybe"}}}
	if got := r.int("A", 1); got != 0 {
		t.Fatalf("A = %d", got)
	}
	if got := r.bool("B", true); !got {
		t.Fatal("a read after a refusal returns its default")
	}
	r.required("C")
	checkRefusal(t, r, `A "x" is not an integer`)
}

func TestParamsRequired(t *testing.T) {
	t.Parallel()
	r := &params{q: url.Values{}}
	r.required("ScalingGroupId")
	if r.err == nil || r.err.code != "MissingParameter.ScalingGroupId" || r.err.status != 400 {
		t.Fatalf("refusal = %+v, want 400 MissingParameter.ScalingGroupId", r.err)
	}
}

func TestParamsEqual(t *testing.T) {
	t.Parallel()
	r := &params{q: url.Values{"Status": {"InService"}}}
	if m := r.equal("Status"); !m("InService") || m("Pending") {
		t.Fatal("Status=InService must match only InService")
	}
	if m := r.equal("Other"); !m("anything") {
		t.Fatal("an absent value must match everything")
	}
}
