package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

const chartDir = "../../charts/cluster-autoscaler-provider"

func TestPackagesTheChart(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr strings.Builder
	args := []string{"-out", out}
	for _, p := range []string{"vultr", "volcengine", "exoscale"} {
		args = append(args, "-values", filepath.Join("../../examples/helm/standalone", "provider-"+p+".yaml"))
	}
	if code := run(append(args, chartDir), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	src, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(out, src.Metadata.Name+"-"+src.Metadata.Version+".tgz")
	got, err := loader.LoadFile(pkg)
	if err != nil {
		t.Fatalf("load the package: %v", err)
	}
	if got.Metadata.Version != src.Metadata.Version || len(got.Templates) != len(src.Templates) || len(got.Templates) == 0 {
		t.Fatalf("package has version %s and %d templates, the chart %s and %d", got.Metadata.Version, len(got.Templates), src.Metadata.Version, len(src.Templates))
	}
}

// TestLintFailureStopsPackaging: values the chart refuses fail the check,
// and no package is written.
func TestLintFailureStopsPackaging(t *testing.T) {
	out := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("provider: nimbus\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"-out", out, "-values", bad, chartDir}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "nimbus") {
		t.Fatalf("exit %d, stderr %q; want 1 naming the bad provider", code, stderr.String())
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("a package was written despite lint errors: %v", entries)
	}
}
