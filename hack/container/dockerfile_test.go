package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDockerfileMatchesImage keeps the Dockerfile's final stage equivalent to
// what BuildIndex produces: same entrypoint, user, environment, base files
// and label keys. (No Docker engine is needed; the file is read as text.)
func TestDockerfileMatchesImage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	stages := regexp.MustCompile(`(?m)^FROM `).Split(text, -1)
	final := "FROM " + stages[len(stages)-1]
	if !strings.HasPrefix(final, "FROM scratch") {
		t.Fatalf("final stage is not FROM scratch: %q", strings.SplitN(final, "\n", 2)[0])
	}

	idx, err := BuildIndex(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := idx.IndexManifest()
	img, _ := idx.Image(m.Manifests[0].Digest)
	cf, _ := img.ConfigFile()

	checks := []struct{ name, want string }{
		{"entrypoint", `ENTRYPOINT ["` + cf.Config.Entrypoint[0] + `"]`},
		{"user", "USER " + cf.Config.User},
		{"binary", "/out/cluster-autoscaler-provider " + binaryPath},
		{"static build", "CGO_ENABLED=0"},
		{"trimmed build", "-trimpath"},
		{"version stamp", "-X main.version=$VERSION"},
		{"CA bundle", caBundlePath},
		{"passwd", "nonroot:x:65532:65532:nonroot:" + homeDir},
		{"tmp", "chmod 1777 /rootfs/tmp"},
	}
	for _, e := range cf.Config.Env {
		checks = append(checks, struct{ name, want string }{"env " + e, e})
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(text, tc.want) {
				t.Errorf("Dockerfile lacks %q", tc.want)
			}
		})
	}
	t.Run("labels", func(t *testing.T) {
		var want []string
		for k := range testSpec().Labels() {
			want = append(want, k)
		}
		var got []string
		for _, mm := range regexp.MustCompile(`([a-z.-]+)="\$\{[A-Z]+\}"|([a-z.-]+)="cluster-autoscaler-provider"`).FindAllStringSubmatch(final, -1) {
			got = append(got, mm[1]+mm[2])
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("Dockerfile labels %v, image labels %v", got, want)
		}
	})
	t.Run("created default", func(t *testing.T) {
		if !strings.Contains(final, "CREATED="+time.Unix(0, 0).UTC().Format(time.RFC3339)) {
			t.Error("the Dockerfile's CREATED default is not the epoch make container uses without SOURCE_DATE_EPOCH")
		}
	})
}
