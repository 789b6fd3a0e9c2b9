package groupconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestParseNodeGroupSpec(t *testing.T) {
	cases := []struct {
		in      string
		want    NodeGroupSpec
		errPart string
	}{
		{in: "1:10:pool-a", want: NodeGroupSpec{MinSize: 1, MaxSize: 10, Name: "pool-a"}},
		{in: "0:3:scg-abc", want: NodeGroupSpec{MinSize: 0, MaxSize: 3, Name: "scg-abc"}},
		{in: "1:5:name:with:colons", want: NodeGroupSpec{MinSize: 1, MaxSize: 5, Name: "name:with:colons"}},
		{in: "1:10", errPart: "want min:max:name"},
		{in: "x:10:p", errPart: `min "x"`},
		{in: "-1:10:p", errPart: `min "-1"`},
		{in: "1:y:p", errPart: `max "y"`},
		{in: "5:2:p", errPart: "below min"},
		{in: "0:0:p", errPart: "at least 1"},
		{in: "1:2: ", errPart: "name is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseNodeGroupSpec(tc.in)
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) || !strings.Contains(err.Error(), "--nodes") {
					t.Fatalf("err = %v, want one naming --nodes and %q", err, tc.errPart)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			if got.String() != tc.in {
				t.Fatalf("String() = %q, want %q", got.String(), tc.in)
			}
		})
	}
}

func TestParseNodeGroupSpecsReportsAll(t *testing.T) {
	_, err := ParseNodeGroupSpecs([]string{"1:x:a", "1:2:b", "1:2:b", "bad"})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, part := range []string{`"1:x:a"`, `"b" given twice`, `"bad"`} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q lacks %s", err, part)
		}
	}
	specs, err := ParseNodeGroupSpecs([]string{"1:2:a", "0:4:b"})
	if err != nil || len(specs) != 2 || specs[1].Name != "b" {
		t.Fatalf("got %v, %v", specs, err)
	}
}

func TestResolveSpecs(t *testing.T) {
	spec := func(name string) NodeGroupSpec { return NodeGroupSpec{MinSize: 1, MaxSize: 3, Name: name} }
	candidates := []SpecCandidate{
		{ID: "p-1", Names: []string{"workers"}},
		{ID: "p-2", Names: []string{"workers"}, Preferred: true},
		{ID: "p-3", Names: []string{"batch"}},
		{ID: "p-4", Names: []string{"batch"}},
		{ID: "p-5", Names: []string{"gpu", "p-3"}},
	}
	res := ResolveSpecs([]NodeGroupSpec{spec("workers"), spec("batch"), spec("p-3"), spec("gpu"), spec("nope")}, candidates)
	want := map[string]string{"p-2": "workers", "p-3": "p-3", "p-5": "gpu"}
	if len(res.ByGroup) != len(want) {
		t.Fatalf("ByGroup = %v, want %v", res.ByGroup, want)
	}
	for id, name := range want {
		if res.ByGroup[id].Name != name {
			t.Errorf("group %s got spec %q, want %q", id, res.ByGroup[id].Name, name)
		}
	}
	if len(res.Unmatched) != 1 || res.Unmatched[0].Name != "nope" {
		t.Errorf("Unmatched = %v", res.Unmatched)
	}
	if ids := res.Ambiguous["batch"]; len(ids) != 2 {
		t.Errorf("Ambiguous = %v", res.Ambiguous)
	}
	problems := strings.Join(res.Problems(), "\n")
	if !strings.Contains(problems, "--nodes 1:3:nope matches no node group") || !strings.Contains(problems, `"batch" matches several`) {
		t.Errorf("Problems = %s", problems)
	}
}

func TestSpecWatchFirstListingIsAConfigError(t *testing.T) {
	var reported []int
	w := &SpecWatch{Provider: "test", Report: func(n int) { reported = append(reported, n) }}
	bad := SpecResolution{Unmatched: []NodeGroupSpec{{MinSize: 1, MaxSize: 2, Name: "typo"}}}
	err := w.Check(bad)
	if !errors.Is(err, cloudprovider.ErrConfig) || !strings.Contains(err.Error(), "1:2:typo") {
		t.Fatalf("first listing: %v, want ErrConfig naming the spec", err)
	}
	if err := w.Check(bad); err != nil {
		t.Fatalf("later listing: %v, want nil (logged, counted)", err)
	}
	if err := w.Check(SpecResolution{}); err != nil {
		t.Fatal(err)
	}
	if len(reported) != 3 || reported[0] != 1 || reported[1] != 1 || reported[2] != 0 {
		t.Fatalf("reported %v, want [1 1 0]", reported)
	}
}

func TestResolveSpecsTwoSpecsForOneGroup(t *testing.T) {
	spec := func(max int, name string) NodeGroupSpec { return NodeGroupSpec{MinSize: 1, MaxSize: max, Name: name} }
	candidates := []SpecCandidate{
		{ID: "p-1", Names: []string{"workers", "np-workers"}},
		{ID: "p-2", Names: []string{"batch"}},
	}
	for _, tc := range []struct {
		name          string
		specs         []NodeGroupSpec
		kept, ignored NodeGroupSpec
	}{
		// The id survives a rename, so it wins whatever the order.
		{"by name, then by id", []NodeGroupSpec{spec(5, "workers"), spec(9, "p-1")}, spec(9, "p-1"), spec(5, "workers")},
		{"by id, then by name", []NodeGroupSpec{spec(9, "p-1"), spec(5, "workers")}, spec(9, "p-1"), spec(5, "workers")},
		{"by two names", []NodeGroupSpec{spec(5, "workers"), spec(7, "np-workers")}, spec(5, "workers"), spec(7, "np-workers")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ResolveSpecs(append(tc.specs, spec(3, "batch")), candidates)
			if got := res.ByGroup["p-1"]; got != tc.kept {
				t.Fatalf("group p-1 got %v, want %v", got, tc.kept)
			}
			if res.ByGroup["p-2"].Name != "batch" {
				t.Fatalf("the other group lost its spec: %v", res.ByGroup)
			}
			problems := res.Problems()
			if len(problems) != 1 || !strings.Contains(problems[0], tc.kept.String()) || !strings.Contains(problems[0], tc.ignored.String()) ||
				!strings.Contains(problems[0], "p-1") {
				t.Fatalf("Problems = %q, want one naming both specs and the group", problems)
			}
		})
	}
}

func TestSpecWatchDuplicateIsAConfigErrorFirstThenCounted(t *testing.T) {
	candidates := []SpecCandidate{{ID: "p-1", Names: []string{"workers"}}, {ID: "p-2", Names: []string{"batch"}}}
	specs := []NodeGroupSpec{{MinSize: 1, MaxSize: 5, Name: "p-1"}, {MinSize: 1, MaxSize: 3, Name: "batch"}}
	var reported []int
	w := &SpecWatch{Provider: "test", Report: func(n int) { reported = append(reported, n) }}
	if err := w.Check(ResolveSpecs(specs, candidates)); err != nil {
		t.Fatalf("first listing without duplicates: %v", err)
	}
	// p-2 is deleted and p-1 renamed "batch": both specs land on p-1.
	renamed := []SpecCandidate{{ID: "p-1", Names: []string{"batch"}}}
	res := ResolveSpecs(specs, renamed)
	if err := w.Check(res); err != nil {
		t.Fatalf("a duplicate that appears later: %v, want nil (logged and counted, not a crash loop)", err)
	}
	if got := res.ByGroup["p-1"]; got != specs[0] {
		t.Fatalf("p-1 serves %v, want the spec naming it by id, %v", got, specs[0])
	}
	if len(reported) != 2 || reported[0] != 0 || reported[1] != 1 {
		t.Fatalf("reported %v, want [0 1]", reported)
	}

	first := &SpecWatch{Provider: "test"}
	err := first.Check(ResolveSpecs(specs, renamed))
	if !errors.Is(err, cloudprovider.ErrConfig) || !strings.Contains(err.Error(), "1:5:p-1") || !strings.Contains(err.Error(), "1:3:batch") {
		t.Fatalf("duplicate at the first listing: %v, want ErrConfig naming both specs", err)
	}
}

func TestParseNodeGroupSpecsSameNameTwiceNamesBoth(t *testing.T) {
	_, err := ParseNodeGroupSpecs([]string{"1:5:p-1", "2:6:p-1"})
	if !errors.Is(err, cloudprovider.ErrConfig) || !strings.Contains(err.Error(), "1:5:p-1") || !strings.Contains(err.Error(), "2:6:p-1") {
		t.Fatalf("err = %v, want ErrConfig naming both specs", err)
	}
}
