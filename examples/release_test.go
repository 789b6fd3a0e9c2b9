package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// providerImage is the image the examples and the chart pull.
const providerImage = "ghcr.io/ca-providers/cluster-autoscaler-provider"

// currentRelease is the release in ../release.go, which --version prints.
func currentRelease(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "release.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const release = "([^"]+)"$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("release.go defines no release constant")
	}
	return string(m[1])
}

// TestExamplesRunTheRelease: every example and the chart run the release
// the CHANGELOG describes (the Helm values' sidecar is the kustomize
// example's, field for field, by TestHelmValuesMatchTheKustomizeExamples).
func TestExamplesRunTheRelease(t *testing.T) {
	rel := currentRelease(t)
	for _, ex := range allExamples() {
		_, c := findContainer(t, build(t, ex.dir), func(c corev1.Container) bool { return c.Name == providerContainer })
		if want := providerImage + ":" + rel; c.Image != want {
			t.Errorf("examples/%s runs %s, want %s", ex.dir, c.Image, want)
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "charts", "cluster-autoscaler-provider", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	if chart.AppVersion != rel || "v"+chart.Version != rel {
		t.Errorf("Chart.yaml version %s, appVersion %s; want %s and %s", chart.Version, chart.AppVersion, rel[1:], rel)
	}
}
