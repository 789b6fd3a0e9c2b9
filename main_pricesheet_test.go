package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest/legacyca"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// A bad --price-sheet stops the start with exit 2 and one line naming the
// file, the line and the problem; a good one passes validation.
func TestPriceSheetValidatedAtStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.txt", "currency EUR\nstandard.medium cheap\nstandard.large -2\n")
	code, _, stderr := runArgs(t, "--cloud-provider", testProvider, "--simulate", "--check-config", "--price-sheet", bad)
	if code != 2 {
		t.Fatalf("bad sheet: exit %d, want 2 (%q)", code, stderr)
	}
	for _, want := range []string{"--price-sheet " + bad + " line 2", `"cheap"`, "line 3"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("stderr is not one line: %q", stderr)
	}
	if code, _, stderr := runArgs(t, "--cloud-provider", testProvider, "--simulate", "--check-config", "--price-sheet", filepath.Join(dir, "missing")); code != 2 || !strings.Contains(stderr, "--price-sheet") {
		t.Errorf("missing sheet: exit %d %q", code, stderr)
	}
	good := write("good.txt", "currency EUR\nstandard.medium 0.04\n")
	if code, _, stderr := runArgs(t, "--cloud-provider", testProvider, "--simulate", "--check-config", "--price-sheet", good); code != 0 {
		t.Errorf("good sheet: exit %d %q", code, stderr)
	}
}

// TestSimulatedProvidersPriceFromSheet: with a price sheet every provider's
// simulated cloud answers PricingNodePrice and PricingPodPrice to both CA
// generations through the real gRPC server, each template priced at its
// instance type's hourly price; without one, Volcengine and Exoscale answer
// Unimplemented (Vultr prices from its API).
func TestSimulatedProvidersPriceFromSheet(t *testing.T) {
	sheet, err := groupconfig.ParsePriceSheet("sheet", strings.NewReader(`currency USD
vc2-2c-4gb             0.03
vcg-a16-6c-64g-16vram  0.9
ecs.g3i.xlarge         0.2
ecs.gni2.3xlarge       1.5
standard.medium        0.04
standard.large         0.08
gpua5000.small         1.2
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, provider := range []string{"vultr", "volcengine", "exoscale"} {
		t.Run(provider, func(t *testing.T) {
			reg, ok := registry.Lookup(provider)
			if !ok {
				t.Skipf("%s is not compiled in", provider)
			}
			for _, withSheet := range []bool{false, true} {
				opts := registry.BuildOptions{UserAgent: "price-sheet-test"}
				if withSheet {
					opts.PriceSheet = sheet
				}
				sim, err := reg.Simulate(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(sim.Close)
				conn := grpctest.ServeConn(t, sim.Provider, externalgrpc.Options{})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if _, err := protos.NewCloudProviderClient(conn).Refresh(ctx, &protos.RefreshRequest{}); err != nil {
					t.Fatal(err)
				}
				groups, err := legacyca.NewClient(conn).NodeGroups(ctx, &legacyca.NodeGroupsRequest{})
				if err != nil {
					t.Fatal(err)
				}
				priced := 0
				for _, g := range groups.GetNodeGroups() {
					a := legacyca.CheckOptionalRPCs(ctx, t, conn, g.GetId())
					if !withSheet {
						if want := map[bool]codes.Code{true: codes.OK, false: codes.Unimplemented}[provider == "vultr"]; a.NodePriceCode != want {
							t.Errorf("%s without a sheet: node price %s, want %s", g.GetId(), a.NodePriceCode, want)
						}
						continue
					}
					if a.Template == nil {
						continue
					}
					hourly, err := sheet.HourlyPrice(a.Template.Labels[corev1.LabelInstanceTypeStable])
					if err != nil {
						t.Fatal(err)
					}
					if a.NodePriceCode != codes.OK || a.NodePrice != hourly || a.PodPriceCode != codes.OK {
						t.Errorf("%s: node price %v (%s), pod %s; want %v from the sheet", g.GetId(), a.NodePrice, a.NodePriceCode, a.PodPriceCode, hourly)
					}
					priced++
				}
				if withSheet && priced == 0 {
					t.Fatal("no group was priced")
				}
			}
		})
	}
}
