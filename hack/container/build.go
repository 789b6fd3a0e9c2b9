package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// knownProviders is what a build without a provider tag compiles in, in the
// order --version prints them (sorted).
var knownProviders = []string{"exoscale", "volcengine", "vultr"}

// defaultCABundles are where common build hosts keep the system roots.
var defaultCABundles = []string{
	"/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Alpine
	"/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL
	"/etc/ssl/cert.pem",                  // macOS, BSDs
}

// providerTags returns the build tags and the --version provider list for a
// PROVIDER value.
func providerTags(provider string) (tags string, providers string, err error) {
	if provider == "all" || provider == "" {
		return "", strings.Join(knownProviders, ","), nil
	}
	for _, p := range knownProviders {
		if p == provider {
			return p, p, nil
		}
	}
	return "", "", fmt.Errorf("provider %q: want one of %s or all", provider, strings.Join(knownProviders, ", "))
}

// compileConfig says how to build the provider binary.
type compileConfig struct {
	goCmd     string
	moduleDir string
	tags      string
	ldflags   string
	// env is added to the environment of go build (tests pass GOCACHE etc.).
	env []string
}

// compile builds a static binary for p and returns its bytes. -buildvcs=false
// keeps the checkout state (an _out folder, an untracked file) out of the
// binary: the version and revision reach the image through ldflags and labels.
func compile(ctx context.Context, cfg compileConfig, p Platform, dir string) ([]byte, error) {
	out := filepath.Join(dir, "cluster-autoscaler-provider-"+p.OS+"-"+p.Arch)
	args := []string{"build", "-trimpath", "-buildvcs=false", "-tags", cfg.tags, "-ldflags", cfg.ldflags, "-o", out, "."}
	cmd := exec.CommandContext(ctx, cfg.goCmd, args...)
	cmd.Dir = cfg.moduleDir
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch), cfg.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build for %s: %w: %s", p, err, strings.TrimSpace(stderr.String()))
	}
	return os.ReadFile(out)
}

// readCABundle reads path, or the first default bundle that exists, and
// insists it holds at least one certificate.
func readCABundle(path string) ([]byte, string, error) {
	candidates := defaultCABundles
	if path != "" {
		candidates = []string{path}
	}
	for _, c := range candidates {
		b, err := os.ReadFile(c)
		if errors.Is(err, os.ErrNotExist) && path == "" {
			continue
		}
		if err != nil {
			return nil, c, fmt.Errorf("read CA bundle: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return nil, c, fmt.Errorf("CA bundle %s holds no PEM certificate", c)
		}
		return b, c, nil
	}
	return nil, "", fmt.Errorf("no CA bundle found in %s; install ca-certificates or pass --ca-bundle", strings.Join(defaultCABundles, ", "))
}

// writeLayout replaces dir with an OCI image layout holding idx, tagged
// refName. Starting from an empty folder matters: layout.Write appends to an
// existing index.json.
func writeLayout(dir string, idx v1.ImageIndex, refName string) (v1.Hash, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, fmt.Errorf("clean %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return v1.Hash{}, err
	}
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("create layout %s: %w", dir, err)
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": refName})); err != nil {
		return v1.Hash{}, fmt.Errorf("write layout %s: %w", dir, err)
	}
	return idx.Digest()
}

// loadLayoutIndex returns the single image index stored in an OCI layout
// written by writeLayout.
func loadLayoutIndex(dir string) (v1.ImageIndex, error) {
	outer, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("read layout %s: %w", dir, err)
	}
	m, err := outer.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read layout %s: %w", dir, err)
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("layout %s holds %d entries, want 1 image index (run make container)", dir, len(m.Manifests))
	}
	return outer.ImageIndex(m.Manifests[0].Digest)
}
