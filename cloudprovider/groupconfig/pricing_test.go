package groupconfig

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// staticCatalog is a PriceCatalog over fixed maps.
type staticCatalog struct {
	byProviderID map[string]string
	hourly       map[string]float64
	shapes       map[string]InstanceTypeShape
}

func (c staticCatalog) InstanceTypeOfNode(n *corev1.Node) string {
	return c.byProviderID[n.Spec.ProviderID]
}

func (c staticCatalog) HourlyPrice(t string) (float64, error) {
	if p, ok := c.hourly[t]; ok {
		return p, nil
	}
	return 0, cloudprovider.Errorf(cloudprovider.ErrNotFound, "no price for %s", t)
}

func (c staticCatalog) GroupInstanceTypes() map[string]InstanceTypeShape { return c.shapes }

func labelled(instanceType string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{corev1.LabelInstanceTypeStable: instanceType}}}
}

func TestNodePrice(t *testing.T) {
	m := NewPricingModel(staticCatalog{
		byProviderID: map[string]string{"cloud://1": "small"},
		hourly:       map[string]float64{"small": 0.5, "big": 2},
	})
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		node    *corev1.Node
		end     time.Time
		want    float64
		wantErr error
	}{
		{"label first", labelled("big"), start.Add(3 * time.Hour), 6, nil},
		{"owning group when unlabelled", &corev1.Node{Spec: corev1.NodeSpec{ProviderID: "cloud://1"}}, start.Add(2 * time.Hour), 1, nil},
		{"reversed window costs nothing", labelled("big"), start.Add(-time.Hour), 0, nil},
		{"unpriced type", labelled("huge"), start.Add(time.Hour), 0, cloudprovider.ErrNotFound},
		{"nothing to go by", &corev1.Node{}, start.Add(time.Hour), 0, cloudprovider.ErrInvalidArgument},
		{"nil node", nil, start.Add(time.Hour), 0, cloudprovider.ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := m.NodePrice(context.Background(), tc.node, start, tc.end)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("NodePrice = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestPodPrice(t *testing.T) {
	pod := func(cpu, mem string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}}}
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	// Two types: 2 vCPU/4 GiB at 1/h and 4 vCPU/16 GiB at 4/h. Per type, half
	// of the price over vCPUs and half over GiB: cpu rates 0.25 and 0.5
	// (average 0.375), memory rates 0.125 and 0.125.
	m := NewPricingModel(staticCatalog{
		hourly: map[string]float64{"a": 1, "b": 4, "unpriced-shape-known": 9},
		shapes: map[string]InstanceTypeShape{
			"a": {VCPUs: 2, MemoryGiB: 4}, "b": {VCPUs: 4, MemoryGiB: 16},
			"no-price": {VCPUs: 1, MemoryGiB: 1}, "zero": {},
		},
	})
	got, err := m.PodPrice(context.Background(), pod("1", "2Gi"), start, start.Add(2*time.Hour))
	if want := (1*0.375 + 2*0.125) * 2; err != nil || math.Abs(got-want) > 1e-12 {
		t.Fatalf("PodPrice = %v, %v; want %v", got, err, want)
	}
	if _, err := m.PodPrice(context.Background(), nil, start, start); !errors.Is(err, cloudprovider.ErrInvalidArgument) {
		t.Errorf("nil pod: %v", err)
	}
	empty := NewPricingModel(staticCatalog{hourly: map[string]float64{"a": 1}, shapes: map[string]InstanceTypeShape{"b": {VCPUs: 1, MemoryGiB: 1}}})
	if _, err := empty.PodPrice(context.Background(), pod("1", "1Gi"), start, start.Add(time.Hour)); !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Errorf("no priced shape: %v, want ErrUnavailable", err)
	}
}

func TestPricesSources(t *testing.T) {
	t.Parallel()
	sheet, err := ParsePriceSheet("sheet", strings.NewReader("currency EUR\nsmall 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	cloud := func(instanceType string) (float64, error) {
		if instanceType == "big" {
			return 3, nil
		}
		return 0, cloudprovider.Errorf(cloudprovider.ErrNotFound, "no plan %s", instanceType)
	}
	tests := []struct {
		name       string
		prices     Prices
		offered    bool
		small, big float64 // 0: not priced
	}{
		{"no sheet, a cloud without prices: not offered", Prices{}, false, 0, 0},
		{"the sheet alone", Prices{Sheet: sheet}, true, 0.5, 0},
		{"the cloud's prices without a sheet", Prices{CloudPrice: cloud}, true, 0, 3},
		{"a sheet is the only source even where the cloud has prices", Prices{Sheet: sheet, CloudPrice: cloud}, true, 0.5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := tc.prices.Model(); (err == nil) != tc.offered || (err != nil && !errors.Is(err, cloudprovider.ErrNotImplemented)) {
				t.Fatalf("Model() error %v, offered %v", err, tc.offered)
			}
			for typ, want := range map[string]float64{"small": tc.small, "big": tc.big} {
				got, err := tc.prices.HourlyPrice(typ)
				if want == 0 {
					if !errors.Is(err, cloudprovider.ErrNotFound) {
						t.Errorf("HourlyPrice(%s) = %v, %v; want ErrNotFound", typ, got, err)
					}
					continue
				}
				if err != nil || got != want {
					t.Errorf("HourlyPrice(%s) = %v, %v; want %v", typ, got, err, want)
				}
			}
		})
	}
}

// recordingSnapshot is a SnapshotTypes over a fixed map that records the
// instance ids it is asked about.
type recordingSnapshot struct {
	types map[string]string
	asked []string
}

func (s *recordingSnapshot) InstanceTypeOf(id string) string {
	s.asked = append(s.asked, id)
	return s.types[id]
}

func (s *recordingSnapshot) GroupInstanceTypes() map[string]InstanceTypeShape { return nil }

func TestPricesInstanceTypeOfNode(t *testing.T) {
	t.Parallel()
	snap := &recordingSnapshot{types: map[string]string{"i-1": "small"}}
	p := Prices{ProviderIDPrefix: "cloud://", Snapshot: snap}
	for providerID, want := range map[string]string{"cloud://i-1": "small", "cloud://i-2": "", "other://i-1": "", "": "", "cloud://": ""} {
		if got := p.InstanceTypeOfNode(&corev1.Node{Spec: corev1.NodeSpec{ProviderID: providerID}}); got != want {
			t.Errorf("InstanceTypeOfNode(%q) = %q, want %q", providerID, got, want)
		}
	}
	sort.Strings(snap.asked)
	if want := []string{"i-1", "i-2"}; !slices.Equal(snap.asked, want) {
		t.Errorf("the snapshot was asked about %v, want only the ids of our providerIDs %v", snap.asked, want)
	}
}
