package externalgrpc

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// TestMalformedSettingsReportedOncePerChange: after each refresh the server
// counts every group's ignored settings in node_group_setting_errors and logs
// them when they change, not on every refresh.
func TestMalformedSettingsReportedOncePerChange(t *testing.T) {
	buf := captureKlog(t)
	bad := map[string]string{
		groupconfig.OptionKey(groupconfig.OptionScaleDownUnneededTime): "5 minutes",
		groupconfig.OptionKey(groupconfig.OptionScaleDownUnreadyTime):  "1m",
	}
	cloud := cloudprovidertest.NewInMemoryCloud(
		cloudprovidertest.CloudGroup{ID: "tagged", Min: 1, Max: 3, Running: 1, Tags: bad},
		cloudprovidertest.CloudGroup{ID: "plain", Min: 1, Max: 3, Running: 1},
	)
	reg := prometheus.NewRegistry()
	s := NewServer(cloudprovidertest.NewInMemoryProvider(cloud), Options{Metrics: metrics.New(reg)})
	refresh := func() {
		t.Helper()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	gauge := func(want string) {
		t.Helper()
		expected := "# HELP cluster_autoscaler_provider_node_group_setting_errors Per-group settings in the cloud's tags or labels (autoscaling options, template hints) that were ignored because they are malformed, by node group, at the last refresh.\n" +
			"# TYPE cluster_autoscaler_provider_node_group_setting_errors gauge\n" + want
		if err := testutil.GatherAndCompare(reg, strings.NewReader(expected), "cluster_autoscaler_provider_node_group_setting_errors"); err != nil {
			t.Fatal(err)
		}
	}
	refresh()
	refresh()
	gauge(`cluster_autoscaler_provider_node_group_setting_errors{node_group="plain"} 0` + "\n" +
		`cluster_autoscaler_provider_node_group_setting_errors{node_group="tagged"} 1` + "\n")
	klog.Flush()
	if n := strings.Count(buf.String(), "Ignoring a malformed per-group setting"); n != 1 {
		t.Fatalf("%d log lines for one malformed entry over two refreshes, want 1:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), `key="k8s.io/cluster-autoscaler/node-template/autoscaling-options/scaledownunneededtime"`) {
		t.Fatalf("the log line does not name the key:\n%s", buf.String())
	}

	cloud.SetTags("tagged", map[string]string{groupconfig.OptionKey(groupconfig.OptionScaleDownUnneededTime): "5m"})
	refresh()
	gauge(`cluster_autoscaler_provider_node_group_setting_errors{node_group="plain"} 0` + "\n" +
		`cluster_autoscaler_provider_node_group_setting_errors{node_group="tagged"} 0` + "\n")
	klog.Flush()
	if !strings.Contains(buf.String(), `"Per-group settings" nodeGroup="tagged" settings="from in-memory group tags: options scaledownunneededtime=5m0s"`) {
		t.Fatalf("the corrected settings are not logged:\n%s", buf.String())
	}
}
