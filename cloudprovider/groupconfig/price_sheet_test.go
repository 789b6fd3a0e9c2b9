package groupconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestParsePriceSheet(t *testing.T) {
	good := "# Exoscale ch-gva-2, 2026-12\n\ncurrency CHF\nstandard.small 0.0139 # comment\n  standard.medium\t0.0278\n"
	s, err := ParsePriceSheet("sheet", strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Currency != "CHF" || s.Len() != 2 {
		t.Fatalf("sheet %v", s)
	}
	if p, err := s.HourlyPrice("standard.medium"); err != nil || p != 0.0278 {
		t.Errorf("standard.medium = %v, %v", p, err)
	}
	if _, err := s.HourlyPrice("standard.huge"); !errors.Is(err, cloudprovider.ErrNotFound) || !strings.Contains(err.Error(), "price sheet sheet") {
		t.Errorf("unlisted type: %v", err)
	}

	bad := []struct {
		name, text string
		want       []string // fragments, each must appear
	}{
		{"empty", "", []string{"no currency line"}},
		{"no prices", "currency EUR\n", []string{"no prices"}},
		{"no currency", "a 1\n", []string{"no currency line"}},
		{"bad currency", "currency euro\na 1\n", []string{"line 1", "ISO 4217"}},
		{"currency twice", "currency EUR\ncurrency USD\na 1\n", []string{"line 2", "one currency"}},
		{"currency after prices", "a 1\ncurrency EUR\n", []string{"line 2", "before the prices"}},
		{"every bad line at once", "currency EUR\na one\nb -1\nc 0\nd NaN\ne +Inf\nf 1 2\na 1\na 2\n", []string{
			"line 2: price \"one\"", "line 3: price \"-1\"", "line 4: price \"0\"", "line 5", "line 6", "line 7: expected", "line 9: a is listed again (first on line 8)"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParsePriceSheet("p.txt", strings.NewReader(tc.text))
			if err == nil {
				t.Fatalf("accepted: %v", s)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "--price-sheet p.txt") {
				t.Errorf("error does not name the flag and file: %q", err)
			}
		})
	}
}

func TestLoadPriceSheet(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadPriceSheet(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "--price-sheet") {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte("currency EUR\n"+strings.Repeat("# padding\n", maxPriceSheetBytes/10+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPriceSheet(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized file: %v", err)
	}
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, []byte("currency USD\nvc2-1c-1gb 0.007\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadPriceSheet(ok)
	if err != nil || s.Path != ok || !strings.Contains(s.String(), "1 instance types, USD") {
		t.Fatalf("LoadPriceSheet = %v, %v", s, err)
	}
}
