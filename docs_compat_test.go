package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestDocsCAImageOverride applies the deploy guide's `images:` entry for CA
// to each example as an overlay and checks that CA's container then runs
// that tag while the provider's image stays as the example sets it, so the
// documented way to match CA to the cluster's minor really works.
func TestDocsCAImageOverride(t *testing.T) {
	sec := section(t, readDoc(t, "docs/deploy.md"), "## Pick the Cluster Autoscaler for your cluster")
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("docs/deploy.md: no yaml block under ## Pick the Cluster Autoscaler for your cluster")
	}
	// The block is one list entry, indented as in the examples' images: list.
	snippet := "images:\n" + m[1]
	tag := regexp.MustCompile(`newTag: (\S+)`).FindStringSubmatch(snippet)
	if tag == nil {
		t.Fatalf("snippet has no newTag:\n%s", snippet)
	}
	if readme := readDoc(t, "README.md"); !strings.Contains(readme, "newTag: "+tag[1]) || !strings.Contains(readme, "image.tag="+tag[1]) {
		t.Fatalf("README's override differs from the deploy guide's (%s)", tag[1])
	}
	for _, provider := range []string{"vultr", "volcengine", "exoscale"} {
		t.Run(provider, func(t *testing.T) {
			base, err := filepath.Abs(filepath.Join("examples", provider))
			if err != nil {
				t.Fatal(err)
			}
			overlay := t.TempDir()
			rel, err := filepath.Rel(overlay, base) // kustomize refuses absolute bases
			if err != nil {
				t.Fatal(err)
			}
			k := "resources:\n  - " + rel + "\n" + snippet
			if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(k), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), overlay)
			if err != nil {
				t.Fatalf("kustomize build with the documented override: %v", err)
			}
			out, err := res.AsYaml()
			if err != nil {
				t.Fatal(err)
			}
			images := regexp.MustCompile(`(?m)^\s+image: (\S+)$`).FindAllStringSubmatch(string(out), -1)
			var ca, provider []string
			for _, im := range images {
				if strings.HasPrefix(im[1], "registry.k8s.io/autoscaling/cluster-autoscaler:") {
					ca = append(ca, im[1])
				} else if strings.Contains(im[1], "cluster-autoscaler-provider") {
					provider = append(provider, im[1])
				}
			}
			if len(ca) != 1 || ca[0] != "registry.k8s.io/autoscaling/cluster-autoscaler:"+tag[1] {
				t.Fatalf("CA images %v, want one with tag %s", ca, tag[1])
			}
			if len(provider) == 0 || strings.HasSuffix(provider[0], ":"+tag[1]) {
				t.Fatalf("provider images %v: the override must touch CA only", provider)
			}
		})
	}
}
