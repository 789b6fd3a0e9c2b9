package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const testCABundle = `-----BEGIN CERTIFICATE-----
MIIBdzCCAR2gAwIBAgIBATAKBggqhkjOPQQDAjAWMRQwEgYDVQQDEwt0ZXN0LXJv
b3QtY2EwHhcNMjUwMTAxMDAwMDAwWhcNMzUwMTAxMDAwMDAwWjAWMRQwEgYDVQQD
Ewt0ZXN0LXJvb3QtY2EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAT3oJ0nY1rX
-----END CERTIFICATE-----
`

var (
	amd64 = Platform{OS: "linux", Arch: "amd64"}
	arm64 = Platform{OS: "linux", Arch: "arm64"}
)

func testSpec() ImageSpec {
	return ImageSpec{
		Provider: "vultr",
		Version:  "v1.2.3",
		Revision: "0123456789abcdef",
		Source:   defaultSource,
		Created:  time.Unix(1700000000, 0).UTC(),
		CABundle: []byte(testCABundle),
		Binaries: map[Platform][]byte{amd64: []byte("amd64 binary"), arm64: []byte("arm64 binary")},
		Order:    []Platform{amd64, arm64},
	}
}

func digest(t *testing.T, spec ImageSpec) v1.Hash {
	t.Helper()
	idx, err := BuildIndex(spec)
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSameInputsSameDigest builds the index twice from equal inputs, in
// memory and through an OCI layout on disk, and shows that each input on its
// own changes the digest.
func TestSameInputsSameDigest(t *testing.T) {
	base := digest(t, testSpec())
	if again := digest(t, testSpec()); again != base {
		t.Fatalf("same inputs, digests %s and %s", base, again)
	}
	idx, _ := BuildIndex(testSpec())
	dir := t.TempDir()
	d1, err := writeLayout(filepath.Join(dir, "a"), idx, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	// Writing over an existing layout must not accumulate entries.
	d2, err := writeLayout(filepath.Join(dir, "a"), idx, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	idx3, _ := BuildIndex(testSpec())
	d3, err := writeLayout(filepath.Join(dir, "b"), idx3, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if d1 != base || d2 != base || d3 != base {
		t.Fatalf("layout digests %s %s %s, want %s", d1, d2, d3, base)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "a", "index.json"))
	b, _ := os.ReadFile(filepath.Join(dir, "b", "index.json"))
	if !bytes.Equal(a, b) {
		t.Fatalf("index.json differs:\n%s\n%s", a, b)
	}
	loaded, err := loadLayoutIndex(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if ld, _ := loaded.Digest(); ld != base {
		t.Fatalf("layout reads back as %s, want %s", ld, base)
	}

	changes := []struct {
		name   string
		modify func(*ImageSpec)
	}{
		{"version", func(s *ImageSpec) { s.Version = "v1.2.4" }},
		{"revision", func(s *ImageSpec) { s.Revision = "fedcba" }},
		{"provider", func(s *ImageSpec) { s.Provider = "all" }},
		{"created", func(s *ImageSpec) { s.Created = s.Created.Add(time.Second) }},
		{"CA bundle", func(s *ImageSpec) { s.CABundle = append([]byte(testCABundle), '\n') }},
		{"one binary", func(s *ImageSpec) {
			s.Binaries = map[Platform][]byte{amd64: []byte("amd64 binary"), arm64: []byte("other")}
		}},
		{"platform order", func(s *ImageSpec) { s.Order = []Platform{arm64, amd64} }},
	}
	for _, tc := range changes {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec()
			tc.modify(&s)
			if digest(t, s) == base {
				t.Fatalf("changing %s kept digest %s", tc.name, base)
			}
		})
	}
}

func TestIndexAndConfig(t *testing.T) {
	idx, err := BuildIndex(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := idx.MediaType(); mt != types.OCIImageIndex {
		t.Fatalf("index media type %s", mt)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 {
		t.Fatalf("%d manifests, want 2", len(m.Manifests))
	}
	var baseDigests []v1.Hash
	for i, want := range []Platform{amd64, arm64} {
		desc := m.Manifests[i]
		if desc.Platform == nil || desc.Platform.OS != want.OS || desc.Platform.Architecture != want.Arch {
			t.Fatalf("manifest %d platform %+v, want %s", i, desc.Platform, want)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != want.OS || cf.Architecture != want.Arch {
			t.Errorf("config platform %s/%s, want %s", cf.OS, cf.Architecture, want)
		}
		if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != binaryPath {
			t.Errorf("user %q entrypoint %q", cf.Config.User, cf.Config.Entrypoint)
		}
		for k, v := range map[string]string{labelSource: defaultSource, labelRevision: "0123456789abcdef", labelVersion: "v1.2.3", labelProvider: "vultr", labelCreated: "2023-11-14T22:13:20Z"} {
			if cf.Config.Labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], v)
			}
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 2 {
			t.Fatalf("layers: %d, %v", len(layers), err)
		}
		d, _ := layers[0].Digest()
		baseDigests = append(baseDigests, d)
		files := layerFiles(t, layers[1])
		if got := string(files[binaryPath[1:]].data); got != want.Arch+" binary" {
			t.Errorf("binary layer holds %q", got)
		}
	}
	if baseDigests[0] != baseDigests[1] {
		t.Error("the base layer differs between platforms; it should be one shared blob")
	}
}

type tarFile struct {
	hdr  *tar.Header
	data []byte
}

func layerFiles(t *testing.T, l v1.Layer) map[string]tarFile {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	out := map[string]tarFile{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = tarFile{hdr: h, data: b}
	}
}

func TestBaseLayer(t *testing.T) {
	created := time.Unix(1700000000, 0).UTC()
	l, err := baseLayer([]byte(testCABundle), created)
	if err != nil {
		t.Fatal(err)
	}
	files := layerFiles(t, l)
	cases := []struct {
		name     string
		mode     int64
		uid      int
		contains string
	}{
		{"etc/ssl/certs/ca-certificates.crt", 0o644, 0, "BEGIN CERTIFICATE"},
		{"etc/passwd", 0o644, 0, "nonroot:x:65532:65532:"},
		{"etc/group", 0o644, 0, "nonroot:x:65532:"},
		{"etc/nsswitch.conf", 0o644, 0, "hosts: files dns"},
		{"tmp/", 0o1777, 0, ""},
		{"home/nonroot/", 0o700, 65532, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := files[tc.name]
			if !ok {
				t.Fatalf("missing; layer has %d entries", len(files))
			}
			if f.hdr.Mode != tc.mode || f.hdr.Uid != tc.uid || !f.hdr.ModTime.Equal(created) {
				t.Errorf("mode %o uid %d mtime %s", f.hdr.Mode, f.hdr.Uid, f.hdr.ModTime)
			}
			if !bytes.Contains(f.data, []byte(tc.contains)) {
				t.Errorf("content %q lacks %q", f.data, tc.contains)
			}
		})
	}
	for _, shell := range []string{"bin/sh", "bin/bash", "bin/busybox"} {
		if _, ok := files[shell]; ok {
			t.Errorf("the base holds %s", shell)
		}
	}
}

func TestParsePlatforms(t *testing.T) {
	cases := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"linux/amd64,linux/arm64", 2, false},
		{" linux/amd64 ", 1, false},
		{"", 0, true},
		{"amd64", 0, true},
		{"linux/arm/v7", 0, true},
		{"linux/amd64,linux/amd64", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParsePlatforms(tc.in)
			if (err != nil) != tc.wantErr || len(got) != tc.want {
				t.Fatalf("ParsePlatforms(%q) = %v, %v", tc.in, got, err)
			}
		})
	}
}

func TestProviderTags(t *testing.T) {
	cases := []struct{ in, tags, providers string }{
		{"all", "", "exoscale,volcengine,vultr"},
		{"vultr", "vultr", "vultr"},
		{"exoscale", "exoscale", "exoscale"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			tags, providers, err := providerTags(tc.in)
			if err != nil || tags != tc.tags || providers != tc.providers {
				t.Fatalf("providerTags(%q) = %q, %q, %v", tc.in, tags, providers, err)
			}
		})
	}
	if _, _, err := providerTags("aws"); err == nil {
		t.Fatal("unknown provider accepted")
	}
}

func TestParseEpoch(t *testing.T) {
	if got, err := parseEpoch(""); err != nil || got.Unix() != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
	if got, err := parseEpoch("1700000000"); err != nil || got.Unix() != 1700000000 {
		t.Fatalf("number: %v %v", got, err)
	}
	for _, bad := range []string{"yesterday", "-1"} {
		if _, err := parseEpoch(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestReadCABundle(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readCABundle(empty); err == nil {
		t.Error("a file without certificates was accepted")
	}
	if _, _, err := readCABundle(filepath.Join(dir, "missing.pem")); err == nil {
		t.Error("a missing file was accepted")
	}
}

// TestClusterAutoscalerImage: the in-tree CA image puts the binary where
// upstream's image has it, runs it from there, exposes CA's metrics port
// and is titled after CA; the same inputs give the same digest.
func TestClusterAutoscalerImage(t *testing.T) {
	t.Parallel()
	spec := testSpec()
	spec.ClusterAutoscaler = true
	first, second := digest(t, spec), digest(t, spec)
	if first != second {
		t.Fatalf("the same inputs gave two digests: %s, %s", first, second)
	}
	if first == digest(t, testSpec()) {
		t.Fatal("the CA image has the provider image's digest")
	}
	idx, err := BuildIndex(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/cluster-autoscaler" {
		t.Errorf("entrypoint %q, want upstream's /cluster-autoscaler", cf.Config.Entrypoint)
	}
	if _, ok := cf.Config.ExposedPorts["8085/tcp"]; !ok || len(cf.Config.ExposedPorts) != 1 {
		t.Errorf("ports %v, want CA's 8085 only", cf.Config.ExposedPorts)
	}
	if cf.Config.Labels[labelTitle] != "cluster-autoscaler" {
		t.Errorf("title %q", cf.Config.Labels[labelTitle])
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[len(layers)-1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	hdr, err := tar.NewReader(rc).Next()
	if err != nil {
		t.Fatal(err)
	}
	if "/"+strings.TrimPrefix(hdr.Name, "/") != "/cluster-autoscaler" {
		t.Errorf("binary layer holds %s, want /cluster-autoscaler", hdr.Name)
	}
}
