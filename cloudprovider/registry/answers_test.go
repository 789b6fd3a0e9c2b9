package registry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

type noTypes struct{}

func (noTypes) InstanceTypeOf(string) string { return "" }

func (noTypes) GroupInstanceTypes() map[string]groupconfig.InstanceTypeShape { return nil }

func TestAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := &Answers{ProviderName: "demo", GPULabelKey: "demo.example/gpu", Prices: groupconfig.Prices{ProviderIDPrefix: "demo://", Snapshot: noTypes{}}}
	if a.Name() != "demo" {
		t.Errorf("Name() = %q", a.Name())
	}
	if l, err := a.GPULabel(ctx); l != "demo.example/gpu" || err != nil {
		t.Errorf("GPULabel() = %q, %v", l, err)
	}
	if err := a.Cleanup(ctx); err != nil {
		t.Errorf("Cleanup() = %v, want nil: CA reconnects to the same server", err)
	}
	if _, err := a.Pricing(ctx); !errors.Is(err, cloudprovider.ErrNotImplemented) {
		t.Errorf("Pricing() without a price source = %v, want ErrNotImplemented", err)
	}
	sheet, err := groupconfig.ParsePriceSheet("sheet", strings.NewReader("currency EUR\nsmall 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	a.Prices.Sheet = sheet
	if m, err := a.Pricing(ctx); err != nil || m == nil {
		t.Errorf("Pricing() with a sheet = %v, %v; want the model", m, err)
	}
}
