package exoscale

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest/legacyca"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// With --price-sheet both CA generations get each group's template priced
// from the sheet (by "<family>.<size>"), through the real gRPC server.
func TestPricesFromSheet(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.refresh(t)
	sheet, err := groupconfig.ParsePriceSheet("sheet", strings.NewReader("currency CHF\nstandard.medium 0.05\ngpua5000.small 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.provider.Prices.Sheet = sheet
	conn := grpctest.ServeConn(t, e.provider, externalgrpc.Options{})
	for group, hourly := range map[string]float64{e.workersPool: 0.05, e.batchPool: 0.05, e.gpuPool: 2} {
		a := legacyca.CheckOptionalRPCs(ctx5s(t), t, conn, group)
		if a.NodePriceCode != codes.OK || a.NodePrice != hourly || a.PodPriceCode != codes.OK {
			t.Errorf("%s: node price %v (%s), pod %s; want %v for one hour", group, a.NodePrice, a.NodePriceCode, a.PodPriceCode, hourly)
		}
	}
	pm, err := e.provider.Pricing(ctx5s(t))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}}}}}}
	if p, err := pm.PodPrice(ctx5s(t), pod, start, start.Add(time.Hour)); err != nil || p <= 0 {
		t.Errorf("pod price %v, %v", p, err)
	}
	members, _ := e.group(t, e.batchPool).Nodes(ctx5s(t))
	byID := &corev1.Node{Spec: corev1.NodeSpec{ProviderID: members[0].Id}}
	if p, err := pm.NodePrice(ctx5s(t), byID, start, start.Add(2*time.Hour)); err != nil || p != 0.1 {
		t.Errorf("node by providerID: %v, %v; want 0.1", p, err)
	}
	unlisted := &corev1.Node{}
	unlisted.Labels = map[string]string{corev1.LabelInstanceTypeStable: "memory.huge"}
	if _, err := pm.NodePrice(ctx5s(t), unlisted, start, start.Add(time.Hour)); !errors.Is(err, cloudprovider.ErrNotFound) {
		t.Errorf("unlisted type: %v, want ErrNotFound", err)
	}
}

// A plain instance pool's labels are resource labels that stay in the
// cloud, so settings there use the AWS spelling, and its template shows the
// hints (it has no Kubernetes labels of its own).
func TestSettingsFromPlainPoolLabels(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	e.fake.AddLabels(e.batchPool, map[string]string{
		groupconfig.OptionKey(groupconfig.OptionScaleDownUnreadyTime):        "45m",
		groupconfig.LabelHintKey("workload"):                                 "batch",
		groupconfig.TaintHintKey("batch"):                                    ":NoSchedule",
		groupconfig.OptionKey(groupconfig.OptionIgnoreDaemonSetsUtilization): "maybe",
	}, nil)
	e.refresh(t)
	g := e.group(t, e.batchPool)
	o, err := g.GetOptions(ctx5s(t), cloudprovider.NodeGroupAutoscalingOptions{ScaleDownUnreadyTime: time.Minute, MaxNodeProvisionTime: time.Hour})
	if err != nil || o.ScaleDownUnreadyTime != 45*time.Minute || o.MaxNodeProvisionTime != time.Hour || o.IgnoreDaemonSetsUtilization {
		t.Fatalf("GetOptions = %+v, %v", o, err)
	}
	if p := g.Status(ctx5s(t)).SettingProblems; len(p) != 1 || !strings.Contains(p[0].Key, groupconfig.OptionIgnoreDaemonSetsUtilization) {
		t.Fatalf("problems %v", p)
	}
	n, err := g.TemplateNodeInfo(ctx5s(t))
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["workload"] != "batch" || len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "batch" {
		t.Fatalf("template labels %v taints %v", n.Labels, n.Spec.Taints)
	}
	for k := range n.Labels {
		if strings.HasPrefix(k, groupconfig.SettingsKeyPrefix) {
			t.Fatalf("a settings key leaked into the template labels: %s", k)
		}
	}
	if !strings.Contains(g.Debug(ctx5s(t)), "settings from instance pool labels") {
		t.Fatalf("Debug %q", g.Debug(ctx5s(t)))
	}
}
