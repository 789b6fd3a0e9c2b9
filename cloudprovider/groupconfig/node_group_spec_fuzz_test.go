package groupconfig

import (
	"strings"
	"testing"
)

// FuzzParseNodeGroupSpec checks --nodes parsing: no panic, and whatever is
// accepted is sane and survives a round trip through String.
func FuzzParseNodeGroupSpec(f *testing.F) {
	for _, s := range []string{"1:5:pool", "0:3:gpu:with:colons", "5:2:x", "1:x:p", "-1:2:p", "0:0:p", "1:2: ", "::", "", "01:02:pool", "1:99999999999999999999:p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		spec, err := ParseNodeGroupSpec(value)
		if err != nil {
			if !strings.Contains(err.Error(), "--nodes") {
				t.Fatalf("error does not name the flag: %v", err)
			}
			return
		}
		if spec.MinSize < 0 || spec.MaxSize < 1 || spec.MaxSize < spec.MinSize {
			t.Fatalf("accepted bad bounds %+v from %q", spec, value)
		}
		if spec.Name == "" || strings.TrimSpace(spec.Name) != spec.Name {
			t.Fatalf("accepted bad name %q from %q", spec.Name, value)
		}
		again, err := ParseNodeGroupSpec(spec.String())
		if err != nil || again != spec {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", value, spec, spec.String(), again, err)
		}
	})
}

// FuzzParseNodeGroupSpecs checks that a list is accepted only when every
// value is, and never with a duplicate name.
func FuzzParseNodeGroupSpecs(f *testing.F) {
	f.Add("1:5:a", "1:5:a")
	f.Add("1:5:a", "0:2:b")
	f.Add("1:5:a", "bad")
	f.Fuzz(func(t *testing.T, a, b string) {
		specs, err := ParseNodeGroupSpecs([]string{a, b})
		_, errA := ParseNodeGroupSpec(a)
		_, errB := ParseNodeGroupSpec(b)
		if err == nil && (errA != nil || errB != nil) {
			t.Fatalf("list accepted with a bad value: %q %q", a, b)
		}
		if err == nil && len(specs) == 2 && specs[0].Name == specs[1].Name {
			t.Fatalf("duplicate group %q accepted", specs[0].Name)
		}
	})
}
