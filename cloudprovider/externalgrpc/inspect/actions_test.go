package inspect

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseScaleUp(t *testing.T) {
	cases := []struct {
		in      string
		want    ScaleUp
		wantErr bool
	}{
		{"workers=2", ScaleUp{"workers", 2}, false},
		{"workers", ScaleUp{}, true},
		{"a=b=3", ScaleUp{"a=b", 3}, false},
		{"workers=0", ScaleUp{}, true},
		{"workers=-1", ScaleUp{}, true},
		{"workers=x", ScaleUp{}, true},
		{"=2", ScaleUp{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseScaleUp(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseScaleUp(%q) = %+v, %v; want %+v, error %t", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestReadOnlyByDefault(t *testing.T) {
	cases := []struct {
		name          string
		args          []string
		wantRefreshes int
	}{
		{"table", nil, 1},
		{"json", []string{"-o", "json"}, 1},
		{"no refresh", []string{"--refresh=false"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakeProvider()
			addr := serve(t, p, nil, nil)
			if code, _, stderr := inspectRun(t, append([]string{"--address", addr}, tc.args...)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if m := p.Mutations(); len(m) != 0 {
				t.Fatalf("a read-only inspect mutated: %v", m)
			}
			if got := p.Refreshes(); got != tc.wantRefreshes {
				t.Fatalf("refreshes = %d, want %d", got, tc.wantRefreshes)
			}
		})
	}
}

func TestScaleUpAndDelete(t *testing.T) {
	cases := []struct {
		name          string
		args          []string
		code          int
		wantMutations []string
		wantTargets   [2]int // workers, gpu after
		wantRefused   string
	}{
		{"scale up", []string{"--scale-up", "workers=2"}, 0, []string{"increase workers"}, [2]int{5, 0}, ""},
		{"scale up two groups", []string{"--scale-up", "workers=1", "--scale-up", "gpu=2"}, 0, []string{"increase workers", "increase gpu"}, [2]int{4, 2}, ""},
		{"beyond max is refused", []string{"--scale-up", "gpu=3"}, 1, nil, [2]int{3, 0}, "FailedPrecondition"},
		{"unknown group is refused", []string{"--scale-up", "nope=1"}, 1, nil, [2]int{3, 0}, "NotFound"},
		{"delete finds the group", []string{"--delete", "fake://w-1", "--delete", "fake://w-3"}, 0, []string{"delete fake://w-1", "delete fake://w-3"}, [2]int{1, 0}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakeProvider()
			addr := serve(t, p, nil, nil)
			code, out, stderr := inspectRun(t, append([]string{"--address", addr, "-o", "json"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if m := p.Mutations(); !reflect.DeepEqual(m, tc.wantMutations) {
				t.Fatalf("mutations = %v, want %v", m, tc.wantMutations)
			}
			r := decodeResult(t, out)
			if r.Before == nil || r.After == nil || r.Report != nil {
				t.Fatalf("want before and after reports, got %+v", r)
			}
			if r.Before.Groups[0].Target != 3 {
				t.Fatalf("before target = %d", r.Before.Groups[0].Target)
			}
			if got := [2]int{r.After.Groups[0].Target, r.After.Groups[1].Target}; got != tc.wantTargets {
				t.Fatalf("after targets = %v, want %v", got, tc.wantTargets)
			}
			refused := ""
			for _, a := range r.Actions {
				refused += a.Error
			}
			if (tc.wantRefused == "") != (refused == "") || !strings.Contains(refused, tc.wantRefused) {
				t.Fatalf("action errors %q, want %q", refused, tc.wantRefused)
			}
			if p.Refreshes() != 2 {
				t.Fatalf("refreshes = %d, want 2 (before and after)", p.Refreshes())
			}
		})
	}
}

func TestDeleteAfterMutationShowsDeleting(t *testing.T) {
	p := newFakeProvider()
	addr := serve(t, p, nil, nil)
	code, out, stderr := inspectRun(t, "--address", addr, "-o", "json", "--delete", "fake://w-2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := decodeResult(t, out)
	if len(r.Actions) != 1 || r.Actions[0].Group != "workers" || r.Actions[0].Call != "NodeGroupDeleteNodes" {
		t.Fatalf("actions = %+v", r.Actions)
	}
	if st := r.After.Groups[0].Instances[1]; st.ProviderID != "fake://w-2" || st.State != "deleting" {
		t.Fatalf("after: %+v", st)
	}
}

func TestDeleteRefusesNodeOfNoGroup(t *testing.T) {
	p := newFakeProvider()
	addr := serve(t, p, nil, nil)
	code, _, stderr := inspectRun(t, "--address", addr, "--delete", "fake://elsewhere")
	if code != 1 || !strings.Contains(stderr, "no node group") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	if m := p.Mutations(); len(m) != 0 {
		t.Fatalf("mutations = %v", m)
	}
}
