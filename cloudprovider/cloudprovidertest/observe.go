package cloudprovidertest

import (
	"bytes"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/klog/v2"
)

// CaptureKlog sends klog's output to the returned buffer until the test
// ends. klog's output is process-wide, so callers do not run in parallel.
func CaptureKlog(t *testing.T) *bytes.Buffer {
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

// MetricValue is the value of the first series of name whose labels
// include labels (a counter or a gauge); 0 when no series matches. An
// unregistered name fails the test.
func MetricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	found, registered := MatchingSeries(t, reg, name, labels)
	if !registered {
		t.Fatalf("metric %s not registered", name)
	}
	if len(found) == 0 {
		return 0
	}
	if m := found[0]; m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return found[0].GetGauge().GetValue()
}

// MatchingSeries returns the series of name whose labels include labels,
// and whether name is registered at all.
func MatchingSeries(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (found []*dto.Metric, registered bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue series
				}
			}
			found = append(found, m)
		}
		return found, true
	}
	return nil, false
}
