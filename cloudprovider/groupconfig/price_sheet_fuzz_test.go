package groupconfig

import (
	"math"
	"strings"
	"testing"
)

// FuzzParsePriceSheet: no panic, and an accepted sheet has a currency and
// only positive finite prices.
func FuzzParsePriceSheet(f *testing.F) {
	for _, s := range []string{"currency EUR\na 1\n", "currency EUR\na 1e308\nb 1e-308\n", "currency\n", "a\tb\tc", "currency EUR\na 0x1p-2\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParsePriceSheet("fuzz", strings.NewReader(text))
		if err != nil {
			return
		}
		if !currencyPattern.MatchString(s.Currency) || s.Len() == 0 {
			t.Fatalf("accepted %q as %+v", text, s)
		}
		for k, p := range s.hourly {
			if !(p > 0) || math.IsInf(p, 0) || k == "" || strings.ContainsAny(k, " \t#") {
				t.Fatalf("accepted entry %q=%v", k, p)
			}
		}
	})
}
