package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// prepare runs hack/intree/prepare.sh with the core out of reach (no
// module proxy), returning its exit code and standard error.
func prepare(t *testing.T, args ...string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("not applicable: bash is not installed; prepare.sh is a bash script")
	}
	cmd := exec.Command("bash", append([]string{"../prepare.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "CA_CORE_SRC=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stderr.String()
	}
	t.Fatal(err)
	return 0, ""
}

// routerFiles are the router files prepare.sh requires of any tree.
func routerFiles(files map[string]string) map[string]string {
	for _, p := range []string{"vultr", "volcengine", "exoscale"} {
		files["cloudprovider/router/router_"+p+".go"] = "package router\n"
	}
	return files
}

func TestPrepareRefusesWhatItCannotBuild(t *testing.T) {
	t.Parallel()
	// A core version no module cache holds, so the download fails offline.
	const unreachable = "v0.0.0-20000101000000-000000000000"
	coreless := t.TempDir()
	writeFiles(t, coreless, routerFiles(map[string]string{
		"go.mod": "module k8s.io/autoscaler/cluster-autoscaler\n\ngo 1.26.0\n",
	}))
	split := t.TempDir()
	writeFiles(t, split, routerFiles(map[string]string{
		"go.mod": "module k8s.io/autoscaler/cluster-autoscaler\n\ngo 1.26.0\n\nrequire sigs.k8s.io/cluster-autoscaler " + unreachable + "\n",
	}))
	notCore := t.TempDir()
	writeFiles(t, notCore, map[string]string{"go.mod": "module example.com/other\n"})
	old := t.TempDir()
	writeFiles(t, old, map[string]string{"go.mod": "module k8s.io/autoscaler/cluster-autoscaler\n\ngo 1.26.0\n"})

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no CA_SRC", nil, []string{"CA_SRC is required"}},
		{"not a CA tree", []string{t.TempDir()}, []string{"is not a cluster-autoscaler tree"}},
		{"no router files", []string{old}, []string{"router_vultr.go", "1.36 or newer"}},
		{"neither generation", []string{coreless}, []string{"neither generation", "cloudprovider/cloud_provider.go", "sigs.k8s.io/cluster-autoscaler"}},
		{"split core out of reach", []string{split}, []string{"split-core tree", unreachable, "give CA_CORE_SRC="}},
		{"CA_CORE_SRC not the core", []string{split, "", notCore}, []string{"CA_CORE_SRC=" + notCore, "is not a sigs.k8s.io/cluster-autoscaler checkout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := tc.args
			out := filepath.Join(t.TempDir(), "ca-src")
			if len(args) > 1 {
				args[1] = out
			} else if len(args) == 1 {
				args = append(args, out)
			}
			code, stderr := prepare(t, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
				t.Errorf("want one error line, got:\n%s", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("prepare.sh wrote %s for a refused tree", out)
			}
		})
	}
}
