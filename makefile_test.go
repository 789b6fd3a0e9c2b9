package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeHelpListsEveryTarget: every phony target of the Makefile and
// hack/make/*.mk carries the "## text" make help prints, so a new target
// cannot be left out of the list.
func TestMakeHelpListsEveryTarget(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("hack", "make", "*.mk"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"Makefile"}, files...)
	phony := regexp.MustCompile(`(?m)^\.PHONY:(.*)$`)
	var all strings.Builder
	var targets []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		all.WriteByte('\n')
		for _, m := range phony.FindAllStringSubmatch(string(b), -1) {
			targets = append(targets, strings.Fields(m[1])...)
		}
	}
	if len(targets) < 10 {
		t.Fatalf("found only %d phony targets: %v", len(targets), targets)
	}
	for _, target := range append(targets, "help") {
		line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:[^\n]*## \S`)
		if !line.MatchString(all.String()) {
			t.Errorf("make target %s has no \"## description\" on its rule line: make help would not list it", target)
		}
	}
}
