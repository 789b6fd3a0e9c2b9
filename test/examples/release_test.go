package examples

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/strvals"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/types"
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

// TestEveryPlaceNamingTheImageAgrees: the README, docs/, examples/ and the
// chart name our image only as providerImage, with a version tag only at the
// release; the chart's values and the Helm values set that image.
func TestEveryPlaceNamingTheImageAgrees(t *testing.T) {
	t.Parallel()
	rel := currentRelease(t)
	files := []string{filepath.Join("..", "README.md")}
	for _, root := range []string{filepath.Join("..", "docs"), ".", filepath.Join("..", "charts")} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			switch filepath.Ext(p) {
			case ".md", ".yaml", ".json", ".txt", ".tpl":
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A name ends at a word character or the ">" of a placeholder such as
	// ghcr.io/<owner>/<repo>, which names no image.
	named := regexp.MustCompile(`ghcr\.io/[\w<>./-]*[\w>]`)
	tagged := regexp.MustCompile(`cluster-autoscaler-provider:(v\d+\.\d+\.\d+)`)
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range named.FindAllString(string(b), -1) {
			if strings.Contains(name, "<") {
				continue
			}
			seen++
			if name != providerImage {
				t.Errorf("%s names the image %s, want %s", f, name, providerImage)
			}
		}
		for _, m := range tagged.FindAllStringSubmatch(string(b), -1) {
			if m[1] != rel {
				t.Errorf("%s names our image at %s, want the release %s", f, m[1], rel)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("found our image named only %d times in %d files", seen, len(files))
	}

	chartValues, err := os.ReadFile(filepath.Join(providerChartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cv struct {
		Image struct {
			Repository string `json:"repository"`
			Tag        string `json:"tag"`
		} `json:"image"`
	}
	if err := yaml.Unmarshal(chartValues, &cv); err != nil {
		t.Fatal(err)
	}
	if cv.Image.Repository != providerImage || cv.Image.Tag != "" {
		t.Errorf("chart values image %s:%q, want %s with the tag left to appVersion", cv.Image.Repository, cv.Image.Tag, providerImage)
	}
	for _, p := range providers {
		v := loadChartValues(t, filepath.Join("helm", p, "values.yaml"))
		if len(v.InitContainers) == 0 || v.InitContainers[0].Image != providerImage+":"+rel {
			t.Errorf("helm/%s/values.yaml: the provider's image is not %s:%s", p, providerImage, rel)
		}
	}
}

// yourRepo and yourTag name an image built and pushed with make push, as
// a user's registry would hold it.
const (
	yourRepo  = "registry.example.com/team/cluster-autoscaler-provider"
	yourTag   = "v9.9.9"
	yourImage = yourRepo + ":" + yourTag
)

// TestYourImageReachesTheProvider: each way docs/deploy.md gives to run your
// own image sets the provider container's image: kustomize edit set image
// in a copy of each example, an images: entry in an overlay, --set
// initContainers[0].image with the official chart's values and --set
// image.repository/image.tag with our chart.
func TestYourImageReachesTheProvider(t *testing.T) {
	t.Parallel()
	isProvider := func(c corev1.Container) bool { return c.Name == providerContainer }
	for _, ex := range allExamples() {
		t.Run(ex.dir, func(t *testing.T) {
			t.Parallel()
			// kustomize edit set image cluster-autoscaler-provider=<image>
			// rewrites the entry of that name in the example's copy.
			mem := inMemoryExamples(t)
			kpath := "/examples/" + ex.dir + "/kustomization.yaml"
			b, err := mem.ReadFile(kpath)
			if err != nil {
				t.Fatal(err)
			}
			var k types.Kustomization
			if err := yaml.UnmarshalStrict(b, &k); err != nil {
				t.Fatal(err)
			}
			edited := 0
			for i := range k.Images {
				if k.Images[i].Name == "cluster-autoscaler-provider" {
					k.Images[i].NewName, k.Images[i].NewTag, k.Images[i].Digest = yourRepo, yourTag, ""
					edited++
				}
			}
			if edited != 1 {
				t.Fatalf("%s has %d images: entries named cluster-autoscaler-provider, want 1", kpath, edited)
			}
			if b, err = yaml.Marshal(k); err != nil {
				t.Fatal(err)
			}
			if err := mem.WriteFile(kpath, b); err != nil {
				t.Fatal(err)
			}
			o := buildOverlay(t, mem, types.Kustomization{Resources: []string{"../examples/" + ex.dir}})
			if _, c := findContainer(t, o, isProvider); c.Image != yourImage {
				t.Errorf("after kustomize edit set image, the provider runs %s, want %s", c.Image, yourImage)
			}

			// An overlay over the unchanged example names the image as published.
			o = buildOverlay(t, inMemoryExamples(t), types.Kustomization{
				Resources: []string{"../examples/" + ex.dir},
				Images:    []types.Image{{Name: providerImage, NewName: yourRepo, NewTag: yourTag}},
			})
			if _, c := findContainer(t, o, isProvider); c.Image != yourImage {
				t.Errorf("with the overlay's images: entry, the provider runs %s, want %s", c.Image, yourImage)
			}
		})
	}
	for _, p := range providers {
		t.Run("helm/"+p, func(t *testing.T) {
			t.Parallel()
			// helm install --values values.yaml --set ...: the values file,
			// then each --set parsed into it, as Helm merges them.
			b, err := os.ReadFile(filepath.Join("helm", p, "values.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			vals := map[string]any{}
			if err := yaml.Unmarshal(b, &vals); err != nil {
				t.Fatal(err)
			}
			if err := strvals.ParseInto("initContainers[0].image="+yourImage, vals); err != nil {
				t.Fatal(err)
			}
			if b, err = yaml.Marshal(vals); err != nil {
				t.Fatal(err)
			}
			var v chartValues
			if err := yaml.UnmarshalStrict(b, &v); err != nil {
				t.Fatal(err)
			}
			o := renderChartObjects(t, v)
			if _, c := findContainer(t, o, isProvider); c.Image != yourImage {
				t.Errorf("with --set initContainers[0].image, the provider runs %s, want %s", c.Image, yourImage)
			}
		})
		t.Run("chart/"+p, func(t *testing.T) {
			t.Parallel()
			set := map[string]any{}
			if err := strvals.ParseInto("image.repository="+yourRepo+",image.tag="+yourTag, set); err != nil {
				t.Fatal(err)
			}
			files, err := renderProviderChart(t, loadProviderChart(t), filepath.Join("helm", "standalone", "provider-"+p+".yaml"), set)
			if err != nil {
				t.Fatal(err)
			}
			if _, c := findContainer(t, decodeRendered(t, files), isProvider); c.Image != yourImage {
				t.Errorf("with --set image.repository and image.tag, the provider runs %s, want %s", c.Image, yourImage)
			}
		})
	}
}
