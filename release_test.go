package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReleaseMatchesChangelog: the release --version prints is the newest
// entry of CHANGELOG.md, each entry is a "## vX.Y.Z - YYYY-MM-DD" heading
// newer than the next and dated no earlier, and an unstamped build reports
// the release.
func TestReleaseMatchesChangelog(t *testing.T) {
	b, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	var dates []time.Time
	heading := regexp.MustCompile(`^v\S+ - (\d{4}-\d{2}-\d{2})$`)
	for _, m := range regexp.MustCompile(`(?m)^## (.*)$`).FindAllStringSubmatch(string(b), -1) {
		versions = append(versions, strings.Fields(m[1] + " ?")[0])
		d := heading.FindStringSubmatch(m[1])
		if d == nil {
			t.Errorf("CHANGELOG.md heading %q is not \"vMAJOR.MINOR.PATCH - YYYY-MM-DD\"", m[1])
			continue
		}
		day, err := time.Parse(time.DateOnly, d[1])
		if err != nil {
			t.Errorf("CHANGELOG.md heading %q: %v", m[1], err)
			continue
		}
		if n := len(dates); n > 0 && day.After(dates[n-1]) {
			t.Errorf("CHANGELOG.md heading %q is dated after the entry above it (%s)", m[1], dates[n-1].Format(time.DateOnly))
		}
		dates = append(dates, day)
	}
	if len(versions) == 0 {
		t.Fatal("CHANGELOG.md has no version heading (## vX.Y.Z)")
	}
	semver := regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)$`)
	for i, v := range versions {
		if !semver.MatchString(v) {
			t.Errorf("CHANGELOG.md heading %q is not vMAJOR.MINOR.PATCH", v)
		}
		if i > 0 && !newer(versions[i-1], v) {
			t.Errorf("CHANGELOG.md: %s is listed above %s but is not newer", versions[i-1], v)
		}
	}
	if versions[0] != release {
		t.Errorf("release.go says %s, CHANGELOG.md's newest entry is %s", release, versions[0])
	}
	if version != release {
		t.Errorf("an unstamped build reports %q, want the release %s", version, release)
	}
	code, out, _ := runArgs(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "cluster-autoscaler-provider "+release+" ") {
		t.Errorf("--version printed %q (exit %d), want cluster-autoscaler-provider %s ...", out, code, release)
	}
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "release.go") {
		t.Error("make build does not stamp the release from release.go")
	}
}

// newer reports whether version a sorts after b (both vX.Y.Z).
func newer(a, b string) bool {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, errX := strconv.Atoi(pa[i])
		y, errY := strconv.Atoi(pb[i])
		if errX != nil || errY != nil {
			return false
		}
		if x != y {
			return x > y
		}
	}
	return false
}
