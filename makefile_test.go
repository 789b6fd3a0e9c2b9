package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMakeHelpListsEveryTarget: make help lists exactly the phony targets
// of the Makefile and hack/make/*.mk that do not start with "_", each with
// its "## text"; internal targets ("_" first) stay out of the list.
func TestMakeHelpListsEveryTarget(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("hack", "make", "*.mk"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"Makefile"}, files...)
	phony := regexp.MustCompile(`(?m)^\.PHONY:(.*)$`)
	var public, internal []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range phony.FindAllStringSubmatch(string(b), -1) {
			for _, target := range strings.Fields(m[1]) {
				if strings.HasPrefix(target, "_") {
					internal = append(internal, target)
				} else {
					public = append(public, target)
				}
			}
		}
	}
	if len(public) < 10 {
		t.Fatalf("found only %d phony targets: %v", len(public), public)
	}
	if !slices.Contains(public, "help") {
		t.Fatal("help is not a phony target")
	}

	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	out, err := exec.Command(makeBin, "--no-print-directory", "-s", "help").CombinedOutput()
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, out)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, text, _ := strings.Cut(strings.TrimSpace(line), " ")
		listed[name] = strings.TrimSpace(text)
	}
	for _, target := range public {
		if listed[target] == "" {
			t.Errorf("make help does not list %s with a description: give its rule line a \"## text\"", target)
		}
	}
	for _, target := range internal {
		if _, ok := listed[target]; ok {
			t.Errorf("make help lists the internal target %s", target)
		}
	}
	for name := range listed {
		if !slices.Contains(public, name) {
			t.Errorf("make help lists %s, which is not a public phony target", name)
		}
	}
}
