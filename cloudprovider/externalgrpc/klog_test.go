package externalgrpc

import (
	"bytes"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// captureKlog sends klog's output to the returned buffer until the test
// ends. klog's output is process-wide, so callers do not run in parallel.
func captureKlog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	klog.LogToStderr(false)
	klog.SetOutput(&buf)
	t.Cleanup(func() {
		klog.Flush()
		klog.SetOutput(os.Stderr)
		klog.LogToStderr(true)
	})
	return &buf
}
