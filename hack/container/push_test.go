package main

import (
	"archive/tar"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

const (
	registryUser     = "pusher"
	registryPassword = "s3cret-push-password"
)

// basicAuth makes the in-process registry demand credentials, so the test
// proves that push reads them from the Docker config.
func basicAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != registryUser || p != registryPassword {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeDockerConfig(t *testing.T, host string) {
	t.Helper()
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(registryUser + ":" + registryPassword))
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s", root)
	}
	return root
}

// TestPushAndPullBack builds the real Vultr-only binary for this machine's
// architecture, packs it, pushes the index with `push` (Docker config
// credentials) to an in-process registry, pulls it back and runs the binary
// from the layer.
func TestPushAndPullBack(t *testing.T) {
	goCmd, err := lookGo()
	if err != nil {
		t.Skip("go command not found")
	}
	const version = "v9.9.9-pushtest"
	host := Platform{OS: "linux", Arch: runtime.GOARCH}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	bin, err := compile(ctx, compileConfig{goCmd: goCmd, moduleDir: moduleRoot(t), tags: "vultr", ldflags: "-s -w -X main.version=" + version}, host, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compiled at %s", time.Since(t0))
	idx, err := BuildIndex(ImageSpec{
		Provider: "vultr", Version: version, Revision: "abc123", Source: defaultSource,
		Created: time.Unix(1700000000, 0), CABundle: []byte(testCABundle),
		Binaries: map[Platform][]byte{host: bin}, Order: []Platform{host},
	})
	if err != nil {
		t.Fatal(err)
	}
	layoutDir := filepath.Join(t.TempDir(), "oci")
	want, err := writeLayout(layoutDir, idx, version)
	if err != nil {
		t.Fatal(err)
	}

	t.Logf("layout written at %s", time.Since(t0))
	srv := httptest.NewServer(basicAuth(registry.New(registry.Logger(log.New(io.Discard, "", 0)))))
	defer srv.Close()
	regHost := strings.TrimPrefix(srv.URL, "http://")
	image := regHost + "/ca-providers/cluster-autoscaler-provider"

	t.Run("without credentials the registry refuses", func(t *testing.T) {
		t.Setenv("DOCKER_CONFIG", t.TempDir())
		if _, err := push(ctx, idx, pushOptions{image: image, tag: "denied", insecure: true}); err == nil {
			t.Fatal("push succeeded without credentials")
		}
	})

	writeDockerConfig(t, regHost)
	var stdout, stderr strings.Builder
	if code := run(ctx, []string{"push", "--layout", layoutDir, "--image", image, "--tag", "v9", "--insecure"}, &stdout, &stderr); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), want.String()) {
		t.Errorf("push output %q does not name digest %s", stdout.String(), want)
	}
	if strings.Contains(stdout.String()+stderr.String(), registryPassword) {
		t.Error("push printed the registry password")
	}

	t.Logf("pushed at %s", time.Since(t0))
	ref, err := name.ParseReference(image+":v9", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(ref, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := pulled.Digest(); got != want {
		t.Fatalf("pulled index %s, pushed %s", got, want)
	}
	m, err := pulled.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("index manifests: %v %v", m, err)
	}
	img, err := pulled.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != nonRootUser || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != binaryPath {
		t.Errorf("user %q, entrypoint %q", cf.Config.User, cf.Config.Entrypoint)
	}
	if cf.Config.Labels[labelVersion] != version || cf.Config.Labels[labelProvider] != "vultr" || cf.Config.Labels[labelRevision] != "abc123" || cf.Config.Labels[labelSource] != defaultSource {
		t.Errorf("labels %v", cf.Config.Labels)
	}

	// The binary, as stored in the pulled layers.
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var exe string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if "/"+h.Name == binaryPath {
			if h.Mode&0o111 == 0 {
				t.Errorf("binary mode %o is not executable", h.Mode)
			}
			exe = filepath.Join(t.TempDir(), "cap")
			b, _ := io.ReadAll(tr)
			if err := os.WriteFile(exe, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("extracted at %s", time.Since(t0))
	if exe == "" {
		t.Fatal("no binary in the pulled image")
	}
	if runtime.GOOS != "linux" {
		t.Skipf("cannot run a linux binary on %s", runtime.GOOS)
	}
	out, err := exec.CommandContext(ctx, exe, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v: %s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "cluster-autoscaler-provider "+version+" (providers: vultr)"; got != want {
		t.Fatalf("--version printed %q, want %q", got, want)
	}
}
