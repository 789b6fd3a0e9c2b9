package volcengine

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

// Without --price-sheet CA's price expander is told Unimplemented; with one,
// both CA generations get each group's template priced from the sheet,
// through the real gRPC server.
func TestPricesFromSheet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	conn := grpctest.ServeConn(t, e.p, externalgrpc.Options{})
	if a := legacyca.CheckOptionalRPCs(testCtx(t), t, conn, mainGroupID); a.NodePriceCode != codes.Unimplemented || a.PodPriceCode != codes.Unimplemented {
		t.Fatalf("without a sheet: node %s pod %s, want Unimplemented", a.NodePriceCode, a.PodPriceCode)
	}

	sheet, err := groupconfig.ParsePriceSheet("sheet", strings.NewReader("currency CNY\necs.g3i.xlarge 1.2\necs.gni2.3xlarge 9.6\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.p.Prices.Sheet = sheet
	for group, hourly := range map[string]float64{mainGroupID: 1.2, otherGroupID: 9.6} {
		a := legacyca.CheckOptionalRPCs(testCtx(t), t, conn, group)
		if a.NodePriceCode != codes.OK || a.NodePrice != hourly {
			t.Errorf("%s: node price %v (%s), want %v for one hour", group, a.NodePrice, a.NodePriceCode, hourly)
		}
		if a.PodPriceCode != codes.OK {
			t.Errorf("%s: pod price %s", group, a.PodPriceCode)
		}
	}

	pm, err := e.p.Pricing(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	if p, err := pm.PodPrice(testCtx(t), pod, start, start.Add(time.Hour)); err != nil || p <= 0 {
		t.Errorf("pod price %v, %v", p, err)
	}
	// A registered node without the label is priced by its group's type.
	inst := strings.TrimPrefix(e.p.m.groupList()[0].Read().Instances[0].Id, ProviderIDPrefix)
	byID := &corev1.Node{Spec: corev1.NodeSpec{ProviderID: ProviderIDPrefix + inst}}
	if p, err := pm.NodePrice(testCtx(t), byID, start, start.Add(time.Hour)); err != nil || p != 1.2 {
		t.Errorf("node %s by providerID: %v, %v; want 1.2", inst, p, err)
	}
	unlisted := &corev1.Node{}
	unlisted.Labels = map[string]string{corev1.LabelInstanceTypeStable: "ecs.unknown"}
	if _, err := pm.NodePrice(testCtx(t), unlisted, start, start.Add(time.Hour)); !errors.Is(err, cloudprovider.ErrNotFound) {
		t.Errorf("unlisted type: %v, want ErrNotFound", err)
	}
}
