package examples

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// providerBinary builds the real binary once per test process, so the
// examples' arguments meet the real flag parser and provider config checks.
func providerBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		// go test puts the toolchain that runs it first on PATH.
		goCmd, err := exec.LookPath("go")
		if err != nil {
			goCmd = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		}
		binDir, binErr = os.MkdirTemp("", "cap-examples-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "cluster-autoscaler-provider")
		// The flags of make build, so CI reuses the packages it compiled there.
		cmd := exec.Command(goCmd, "build", "-trimpath", "-o", binPath, ".")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			binErr = &buildError{err: err, out: out.String()}
		}
	})
	if binErr != nil {
		t.Fatalf("build provider binary: %v", binErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// testDir is this package's directory, for its testdata; the tests run
// in examples/ (see TestMain).
var testDir string

func TestMain(m *testing.M) {
	// Helm's linter reports required/fail in lint mode through slog; the
	// chart tests assert on its messages instead.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	// The tests name the examples and the repository's files relative to
	// examples/, the folder they check.
	wd, err := os.Getwd()
	if err == nil {
		testDir = wd
		err = os.Chdir(filepath.Join("..", "..", "examples"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot change to examples/:", err)
		os.Exit(1)
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestProviderArgsPassCheckConfig runs the real binary with each example's
// provider arguments and environment, against a copy of the files the pod
// would see (ConfigMaps, the generated Secret, issued certificates) laid out
// under a temporary root. Removing the credentials mount must then fail, so
// the check is known to look at them.
func TestProviderArgsPassCheckConfig(t *testing.T) {
	bin := providerBinary(t)
	for _, ex := range allExamples() {
		t.Run(ex.dir, func(t *testing.T) {
			o := build(t, ex.dir)
			secrets := generatedSecrets(t, ex)
			d, c := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })

			code, stdout, stderr := checkConfig(t, bin, o, secrets, d, c)
			if code != 0 || !strings.Contains(stdout, "configuration OK for "+ex.provider) {
				t.Fatalf("--check-config: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}

			var without []corev1.VolumeMount
			for _, m := range c.VolumeMounts {
				if m.Name != "credentials" {
					without = append(without, m)
				}
			}
			if len(without) == len(c.VolumeMounts) {
				t.Fatal("the provider container has no credentials mount")
			}
			c.VolumeMounts = without
			code, _, stderr = checkConfig(t, bin, o, secrets, d, c)
			if code != 2 || !strings.HasPrefix(stderr, "error: ") {
				t.Fatalf("without credentials: exit %d, stderr %q; want exit 2 and an error line", code, stderr)
			}
			for _, v := range credentials(ex.provider) {
				if strings.Contains(stderr, v) {
					t.Fatal("an error message contains a credential")
				}
			}
		})
	}
}

// checkConfig materialises c's mounts under a temporary root, rewrites the
// mount paths in args, env and config files to that root, and runs
// --check-config with only c's environment.
func checkConfig(t *testing.T, bin string, o *objects, secrets map[string]*corev1.Secret, d *appsv1.Deployment, c corev1.Container) (int, string, string) {
	t.Helper()
	root := t.TempDir()
	mounts := make([]string, 0, len(c.VolumeMounts))
	for _, m := range c.VolumeMounts {
		mounts = append(mounts, filepath.Clean(m.MountPath))
	}
	// Longest first, so /etc/x/config wins over /etc/x.
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	rewrite := func(s string) string {
		for _, m := range mounts {
			s = strings.ReplaceAll(s, m+"/", filepath.Join(root, m)+"/")
		}
		return s
	}
	for _, m := range c.VolumeMounts {
		v := volume(d, m.Name)
		if v == nil {
			t.Fatalf("mount %s has no volume", m.Name)
		}
		files := map[string][]byte{}
		switch {
		case v.ConfigMap != nil:
			for k, val := range o.configMaps[v.ConfigMap.Name].Data {
				files[k] = []byte(rewrite(val))
			}
		case v.Secret != nil:
			s := secrets[v.Secret.SecretName]
			if s == nil {
				t.Fatalf("Secret %s is not generated", v.Secret.SecretName)
			}
			files = s.Data
		default:
			t.Fatalf("provider mounts an unexpected volume %s", m.Name)
		}
		dir := filepath.Join(root, m.MountPath)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for k, b := range files {
			if err := os.WriteFile(filepath.Join(dir, k), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	var env []string
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef != nil {
			for k, v := range o.configMaps[ef.ConfigMapRef.Name].Data {
				env = append(env, k+"="+rewrite(v))
			}
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+rewrite(e.Value))
		case e.ValueFrom.SecretKeyRef != nil:
			r := e.ValueFrom.SecretKeyRef
			if s := secrets[r.Name]; s != nil && s.Data[r.Key] != nil {
				env = append(env, e.Name+"="+string(s.Data[r.Key]))
			}
		case e.ValueFrom.ConfigMapKeyRef != nil:
			r := e.ValueFrom.ConfigMapKeyRef
			env = append(env, e.Name+"="+o.configMaps[r.Name].Data[r.Key])
		}
	}
	args := make([]string, 0, len(c.Args)+1)
	for _, a := range c.Args {
		args = append(args, rewrite(a))
	}
	args = append(args, "--check-config")
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

// TestExoscaleLearningSettingsCheckedByCheckConfig: the example's provider
// container with the optional learnt-pool settings passes --check-config,
// and a bad value exits 2 with one error line naming the variable.
func TestExoscaleLearningSettingsCheckedByCheckConfig(t *testing.T) {
	t.Parallel()
	bin := providerBinary(t)
	ex := example{dir: "exoscale", provider: "exoscale"}
	o := build(t, ex.dir)
	secrets := generatedSecrets(t, ex)
	d, c := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })
	base := c.Env
	for _, tc := range []struct {
		env      []corev1.EnvVar
		wantCode int
		wantErr  string
	}{
		{env: []corev1.EnvVar{{Name: "EXOSCALE_LEARNT_POOL_BOUNDS", Value: "1:5"}}, wantCode: 0},
		{env: []corev1.EnvVar{{Name: "EXOSCALE_LEARN_POOLS", Value: "false"}}, wantCode: 0},
		{env: []corev1.EnvVar{{Name: "EXOSCALE_LEARNT_POOL_BOUNDS", Value: "5:2"}}, wantCode: 2, wantErr: `EXOSCALE_LEARNT_POOL_BOUNDS="5:2"`},
		{env: []corev1.EnvVar{{Name: "EXOSCALE_LEARN_POOLS", Value: "maybe"}}, wantCode: 2, wantErr: `EXOSCALE_LEARN_POOLS="maybe"`},
	} {
		c.Env = append(append([]corev1.EnvVar(nil), base...), tc.env...)
		code, _, stderr := checkConfig(t, bin, o, secrets, d, c)
		if code != tc.wantCode {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.env, code, tc.wantCode, stderr)
			continue
		}
		if tc.wantErr != "" && (!strings.HasPrefix(stderr, "error: ") || !strings.Contains(stderr, tc.wantErr) || strings.Count(strings.TrimSpace(stderr), "\n") != 0) {
			t.Errorf("%v: stderr %q, want one error line naming %s", tc.env, stderr, tc.wantErr)
		}
	}
}
