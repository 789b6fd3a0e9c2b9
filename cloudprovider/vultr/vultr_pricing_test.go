package vultr

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

func TestNodePrice(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pm, err := e.p.Pricing(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		node    *corev1.Node
		hours   float64
		want    float64
		wantErr error
	}{
		{name: "template by instance type", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelInstanceTypeStable: "vc2-2c-4gb"}}},
			hours: 730, want: 20},
		{name: "gpu plan for 2h", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelInstanceTypeStable: "vcg-a16-6c-64g-16vram"}}},
			hours: 2, want: 501.22 / 730 * 2},
		{name: "by providerID", node: unregisteredNode(e.main.Nodes[0].ID), hours: 73, want: 2},
		{name: "metal plan", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelInstanceTypeStable: "vbm-8c-132gb"}}},
			hours: 730, want: 350},
		{name: "unknown plan", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelInstanceTypeStable: "nope"}}},
			hours: 1, wantErr: cloudprovider.ErrNotFound},
		{name: "nothing to go by", node: &corev1.Node{}, hours: 1, wantErr: cloudprovider.ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := pm.NodePrice(e.ctx(), tc.node, start, start.Add(time.Duration(tc.hours*float64(time.Hour))))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("price %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestPodPrice(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pm, _ := e.p.Pricing(e.ctx())
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(cpu, mem string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}}}
	}
	small, err := pm.PodPrice(e.ctx(), pod("100m", "128Mi"), start, start.Add(time.Hour))
	if err != nil || small <= 0 {
		t.Fatalf("small pod %v, %v", small, err)
	}
	big, _ := pm.PodPrice(e.ctx(), pod("2", "4Gi"), start, start.Add(time.Hour))
	longer, _ := pm.PodPrice(e.ctx(), pod("100m", "128Mi"), start, start.Add(3*time.Hour))
	if big <= small || math.Abs(longer-3*small) > 1e-12 {
		t.Fatalf("prices not monotonic: small %v big %v 3h %v", small, big, longer)
	}
	if _, err := pm.PodPrice(e.ctx(), nil, start, start); !errors.Is(err, cloudprovider.ErrInvalidArgument) {
		t.Fatalf("nil pod: %v", err)
	}
}

// With --price-sheet the sheet is the only price source: listed plans are
// priced from it, unlisted ones are NotFound rather than priced in USD from
// the API next to the sheet's currency.
func TestPriceSheetReplacesAPIPrices(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	sheet, err := groupconfig.ParsePriceSheet("sheet", strings.NewReader("currency EUR\nvc2-2c-4gb 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.p.Prices.Sheet = sheet
	pm, _ := e.p.Pricing(e.ctx())
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	listed := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelInstanceTypeStable: "vc2-2c-4gb"}}}
	if got, err := pm.NodePrice(e.ctx(), listed, start, start.Add(2*time.Hour)); err != nil || got != 1 {
		t.Fatalf("listed plan: %v, %v; want 1 (2h at 0.5 from the sheet)", got, err)
	}
	unlisted := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelInstanceTypeStable: "vhf-4c-16gb"}}}
	if _, err := pm.NodePrice(e.ctx(), unlisted, start, start.Add(time.Hour)); !errors.Is(err, cloudprovider.ErrNotFound) {
		t.Fatalf("unlisted plan: %v, want ErrNotFound", err)
	}
}
