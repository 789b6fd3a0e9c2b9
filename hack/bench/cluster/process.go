package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is the provider binary running as a child process.
type Process struct {
	// GRPCAddr is where it serves externalgrpc.
	GRPCAddr string
	// MetricsURL is its /metrics URL.
	MetricsURL string

	cmd    *exec.Cmd
	done   chan struct{}
	err    error
	mu     sync.Mutex
	stdout strings.Builder
}

var (
	servingLine = regexp.MustCompile(`^Serving \S+ on (\S+) \(`)
	metricsLine = regexp.MustCompile(`^Metrics on (http://\S+/metrics)$`)
)

// StartProcess runs binary with args and extra env, and waits (up to
// startTimeout) until it reports its gRPC and metrics addresses. stderr
// receives the child's log.
func StartProcess(ctx context.Context, binary string, args, env []string, stderr io.Writer, startTimeout time.Duration) (*Process, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	if stderr == nil {
		stderr = io.Discard
	}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	addrs := make(chan [2]string, 1)
	go func() {
		var grpcAddr, metricsURL string
		sent := false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stdout.WriteString(line + "\n")
			p.mu.Unlock()
			if m := servingLine.FindStringSubmatch(line); m != nil {
				grpcAddr = m[1]
			}
			if m := metricsLine.FindStringSubmatch(line); m != nil {
				metricsURL = m[1]
			}
			if !sent && grpcAddr != "" && metricsURL != "" {
				addrs <- [2]string{grpcAddr, metricsURL}
				sent = true
			}
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	t := time.NewTimer(startTimeout)
	defer t.Stop()
	select {
	case a := <-addrs:
		p.GRPCAddr, p.MetricsURL = a[0], a[1]
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before serving: %v; stdout: %s", binary, p.err, p.Stdout())
	case <-t.C:
		p.Stop(time.Second)
		return nil, fmt.Errorf("%s did not report its addresses within %s", binary, startTimeout)
	case <-ctx.Done():
		p.Stop(time.Second)
		return nil, ctx.Err()
	}
}

// WaitReady waits (up to timeout) until the child reports a first snapshot
// on /readyz.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration) error {
	readyz := strings.TrimSuffix(p.MetricsURL, "/metrics") + "/readyz"
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyz, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-tick.C:
		case <-p.done:
			return fmt.Errorf("provider exited before its first snapshot: %v; stdout: %s", p.err, p.Stdout())
		case <-deadline.C:
			return fmt.Errorf("provider not ready (no first snapshot) within %s", timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Stdout returns what the child printed so far.
func (p *Process) Stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String()
}

// Stop sends SIGTERM, then kills the child if it has not exited within grace.
// It returns the child's exit error (nil for a clean exit).
func (p *Process) Stop(grace time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return p.err
}
