package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths and identities inside the image. The Dockerfile uses the same values
// (dockerfile_test.go keeps the two in step).
const (
	binaryPath   = "/cluster-autoscaler-provider"
	caBundlePath = "/etc/ssl/certs/ca-certificates.crt"
	nonRootUID   = 65532
	nonRootUser  = "65532:65532"
	homeDir      = "/home/nonroot"
)

// OCI label keys. labelProvider is ours: the PROVIDER the image was built
// for (vultr, volcengine, exoscale or all), as in the Dockerfile.
const (
	labelSource   = "org.opencontainers.image.source"
	labelRevision = "org.opencontainers.image.revision"
	labelVersion  = "org.opencontainers.image.version"
	labelTitle    = "org.opencontainers.image.title"
	labelCreated  = "org.opencontainers.image.created"
	labelProvider = "io.ca-providers.provider"
)

// Platform is one os/arch the index holds.
type Platform struct {
	OS, Arch string
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ParsePlatforms reads "linux/amd64,linux/arm64".
func ParsePlatforms(s string) ([]Platform, error) {
	var out []Platform
	seen := map[Platform]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		osName, arch, ok := strings.Cut(f, "/")
		if !ok || osName == "" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("platform %q: want os/arch such as linux/amd64", f)
		}
		p := Platform{OS: osName, Arch: arch}
		if seen[p] {
			return nil, fmt.Errorf("platform %q given twice", f)
		}
		seen[p] = true
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no platforms given")
	}
	return out, nil
}

// ImageSpec is every input of the image. Equal specs give equal digests:
// nothing here reads the clock, the host user or file modes.
type ImageSpec struct {
	// Provider is the PROVIDER value: vultr, volcengine, exoscale or all.
	Provider string
	Version  string
	Revision string
	Source   string
	// Created stamps the config, the layer entries and the created label. Use
	// the commit time (SOURCE_DATE_EPOCH) so rebuilds of a commit match.
	Created time.Time
	// CABundle is the PEM bundle installed at caBundlePath.
	CABundle []byte
	// Binaries maps each platform to its statically linked binary.
	Binaries map[Platform][]byte
	// Order fixes the order of platforms in the index.
	Order []Platform
	// ClusterAutoscaler marks an image of the upstream Cluster Autoscaler
	// built with our providers in-tree (make ca-container): the binary sits
	// where upstream's image has it, under upstream's title and port.
	ClusterAutoscaler bool
}

// Upstream's image layout, for the in-tree Cluster Autoscaler image.
const (
	caBinaryPath = "/cluster-autoscaler"
	caTitle      = "cluster-autoscaler"
	caPort       = "8085/tcp"
)

// binary is where the image's binary is installed and runs from.
func (s ImageSpec) binary() string {
	if s.ClusterAutoscaler {
		return caBinaryPath
	}
	return binaryPath
}

// Labels returns the OCI labels of the image config.
func (s ImageSpec) Labels() map[string]string {
	return map[string]string{
		labelSource:   s.Source,
		labelRevision: s.Revision,
		labelVersion:  s.Version,
		labelTitle:    s.title(),
		labelCreated:  s.Created.UTC().Format(time.RFC3339),
		labelProvider: s.Provider,
	}
}

func (s ImageSpec) title() string {
	if s.ClusterAutoscaler {
		return caTitle
	}
	return "cluster-autoscaler-provider"
}

func (s ImageSpec) ports() map[string]struct{} {
	if s.ClusterAutoscaler {
		return map[string]struct{}{caPort: {}}
	}
	return map[string]struct{}{"8086/tcp": {}, "8087/tcp": {}}
}

// BuildIndex assembles the multi-platform OCI image index.
func BuildIndex(spec ImageSpec) (v1.ImageIndex, error) {
	if len(spec.CABundle) == 0 {
		return nil, fmt.Errorf("empty CA bundle")
	}
	if spec.Provider == "" || spec.Version == "" {
		return nil, fmt.Errorf("provider and version are required")
	}
	base, err := baseLayer(spec.CABundle, spec.Created)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range spec.Order {
		bin, ok := spec.Binaries[p]
		if !ok {
			return nil, fmt.Errorf("no binary for %s", p)
		}
		img, err := platformImage(spec, p, base, bin)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img,
			Descriptor: v1.Descriptor{
				MediaType: types.OCIManifestSchema1,
				Platform:  &v1.Platform{OS: p.OS, Architecture: p.Arch},
			},
		})
	}
	return idx, nil
}

func platformImage(spec ImageSpec, p Platform, base v1.Layer, bin []byte) (v1.Image, error) {
	app, err := layerFromEntries([]entry{{name: spec.binary(), mode: 0o755, data: bin}}, spec.Created)
	if err != nil {
		return nil, fmt.Errorf("binary layer: %w", err)
	}
	created := v1.Time{Time: spec.Created.UTC()}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "hack/container: CA certificates, passwd, group, /tmp, " + homeDir, Comment: "base"}},
		mutate.Addendum{Layer: app, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "hack/container: " + spec.binary(), Comment: spec.title() + " binary"}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS = p.OS
	cf.Architecture = p.Arch
	cf.Created = created
	cf.Config = v1.Config{
		User:       nonRootUser,
		Entrypoint: []string{spec.binary()},
		WorkingDir: "/",
		Env: []string{
			"PATH=/",
			"HOME=" + homeDir,
			"SSL_CERT_FILE=" + caBundlePath,
		},
		ExposedPorts: spec.ports(),
		Labels:       spec.Labels(),
	}
	return mutate.ConfigFile(img, cf)
}

// entry is one file or directory of a layer.
type entry struct {
	name     string
	mode     int64
	dir      bool
	uid, gid int
	data     []byte
}

// baseLayer replaces a distroless base: just enough for a static Go binary
// that talks TLS and runs as a named non-root user, and no shell.
func baseLayer(caBundle []byte, mtime time.Time) (v1.Layer, error) {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("nonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", nonRootUID, nonRootUID, homeDir)
	group := "root:x:0:\n" + fmt.Sprintf("nonroot:x:%d:\n", nonRootUID)
	return layerFromEntries([]entry{
		{name: "/etc", mode: 0o755, dir: true},
		{name: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "/etc/group", mode: 0o644, data: []byte(group)},
		// Go's resolver reads this to prefer /etc/hosts before DNS.
		{name: "/etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "/etc/ssl", mode: 0o755, dir: true},
		{name: "/etc/ssl/certs", mode: 0o755, dir: true},
		{name: caBundlePath, mode: 0o644, data: caBundle},
		{name: "/home", mode: 0o755, dir: true},
		{name: homeDir, mode: 0o700, dir: true, uid: nonRootUID, gid: nonRootUID},
		{name: "/tmp", mode: 0o1777, dir: true},
	}, mtime)
}

// layerFromEntries writes a reproducible gzip'd tar: sorted names, fixed
// times and owners, no user or group names, and a gzip header without name
// or time.
func layerFromEntries(entries []entry, mtime time.Time) (v1.Layer, error) {
	sorted := append([]entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	mt := mtime.UTC().Truncate(time.Second)
	for _, e := range sorted {
		name := strings.TrimPrefix(path.Clean(e.name), "/")
		h := &tar.Header{
			Name:    name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: mt,
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
			h.Name += "/"
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("tar header %s: %w", name, err)
		}
		if !e.dir {
			if _, err := tw.Write(e.data); err != nil {
				return nil, fmt.Errorf("tar %s: %w", name, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	// BestSpeed: for the 30 MB binary the layer is 11.7 MB instead of 10.4 MB
	// at the default level, and compression (most of the build and of the
	// race-enabled push test) takes less than half the time.
	var gzBuf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gzBuf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(tarBuf.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return newMemLayer(tarBuf.Bytes(), gzBuf.Bytes())
}

// memLayer is a layer held in memory with both hashes computed once, from
// the bytes at hand. (tarball.LayerFromOpener would gunzip the blob again for
// every DiffID request, which dominates build time for a 30 MB binary.)
type memLayer struct {
	compressed []byte
	digest     v1.Hash
	diffID     v1.Hash
}

func newMemLayer(uncompressed, compressed []byte) (*memLayer, error) {
	d, _, err := v1.SHA256(bytes.NewReader(compressed))
	if err != nil {
		return nil, err
	}
	u, _, err := v1.SHA256(bytes.NewReader(uncompressed))
	if err != nil {
		return nil, err
	}
	return &memLayer{compressed: compressed, digest: d, diffID: u}, nil
}

// Digest implements v1.Layer.
func (l *memLayer) Digest() (v1.Hash, error) { return l.digest, nil }

// DiffID implements v1.Layer.
func (l *memLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }

// Compressed implements v1.Layer.
func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.compressed)), nil
}

// Uncompressed implements v1.Layer.
func (l *memLayer) Uncompressed() (io.ReadCloser, error) {
	return gzip.NewReader(bytes.NewReader(l.compressed))
}

// Size implements v1.Layer.
func (l *memLayer) Size() (int64, error) { return int64(len(l.compressed)), nil }

// MediaType implements v1.Layer.
func (l *memLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }
