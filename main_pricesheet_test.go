package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad --price-sheet stops the start with exit 2 and one line naming the
// file, the line and the problem; a good one passes validation.
func TestPriceSheetValidatedAtStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.txt", "currency EUR\nstandard.medium cheap\nstandard.large -2\n")
	code, _, stderr := runArgs(t, "--cloud-provider", testProvider, "--simulate", "--check-config", "--price-sheet", bad)
	if code != 2 {
		t.Fatalf("bad sheet: exit %d, want 2 (%q)", code, stderr)
	}
	for _, want := range []string{"--price-sheet " + bad + " line 2", `"cheap"`, "line 3"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("stderr is not one line: %q", stderr)
	}
	if code, _, stderr := runArgs(t, "--cloud-provider", testProvider, "--simulate", "--check-config", "--price-sheet", filepath.Join(dir, "missing")); code != 2 || !strings.Contains(stderr, "--price-sheet") {
		t.Errorf("missing sheet: exit %d %q", code, stderr)
	}
	good := write("good.txt", "currency EUR\nstandard.medium 0.04\n")
	if code, _, stderr := runArgs(t, "--cloud-provider", testProvider, "--simulate", "--check-config", "--price-sheet", good); code != 0 {
		t.Errorf("good sheet: exit %d %q", code, stderr)
	}
}
