package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDemoDeletesOnlyAfterTheNewNodeRuns runs hack/demo.sh (make demo) for
// each provider against the built binary: the node the scale-up adds must
// be seen running, after any state it passed through, before the demo
// deletes a node, and the node deleted is an older one.
func TestDemoDeletesOnlyAfterTheNewNodeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo, about 10 s of simulated boot per provider")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found; hack/demo.sh needs it")
	}
	bin := os.Getenv(binaryEnv)
	if bin == "" {
		bin = buildBinary(t)
	}
	for _, provider := range []string{"vultr", "volcengine", "exoscale"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			out := runDemo(t, bash, bin, provider)
			checkDemoOrder(t, out)
		})
	}
}

// buildBinary builds the binary with every provider into a temporary
// directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "cluster-autoscaler-provider")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runDemo runs hack/demo.sh for provider and returns its output; the
// script's process group is killed if the test's deadline passes.
func runDemo(t *testing.T, bash, bin, provider string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, filepath.Join("hack", "demo.sh"))
	cmd.Env = append(os.Environ(), "PROVIDER="+provider, "DEMO_BIN="+bin, "DEMO_OUT="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("hack/demo.sh PROVIDER=%s: %v\n%s", provider, err, out.String())
	}
	return out.String()
}

var (
	demoProgress = regexp.MustCompile(`(?m)^  after \d+s: (\S+) (\S+)$`)
	demoDeletion = regexp.MustCompile(`(?m)^== deletion: inspect --delete (\S+) `)
)

// checkDemoOrder checks, in the demo's output, that the new node reaches
// running before the deletion, that it was listed as nothing else after
// running, and that the node deleted is not the new one.
func checkDemoOrder(t *testing.T, out string) {
	t.Helper()
	del := demoDeletion.FindStringSubmatchIndex(out)
	if del == nil {
		t.Fatalf("the demo deleted no node:\n%s", out)
	}
	victim := out[del[2]:del[3]]
	var newNode string
	runningAt := -1
	for _, m := range demoProgress.FindAllStringSubmatchIndex(out, -1) {
		id, state := out[m[2]:m[3]], out[m[4]:m[5]]
		if newNode == "" {
			newNode = id
		}
		if id != newNode {
			t.Fatalf("the demo followed %s and then %s; want one new node:\n%s", newNode, id, out)
		}
		if runningAt >= 0 {
			t.Fatalf("the new node %s went from running to %s:\n%s", id, state, out)
		}
		if state == "running" {
			runningAt = m[0]
		}
	}
	switch {
	case runningAt < 0:
		t.Fatalf("the demo never saw the new node running:\n%s", out)
	case runningAt > del[0]:
		t.Fatalf("the demo deleted %s before the new node %s ran:\n%s", victim, newNode, out)
	case victim == newNode:
		t.Fatalf("the demo deleted the node it had just added (%s); want an older one:\n%s", victim, out)
	}
	// inspect --scale-up prints the group before it acts.
	scaleUp := strings.Index(out, "== scale-up")
	actions := strings.Index(out, "== actions")
	if scaleUp < 0 || actions < scaleUp || strings.Contains(out[scaleUp:actions], newNode) {
		t.Fatalf("the node followed (%s) was in the group before the scale-up:\n%s", newNode, out)
	}
}
