package exoscale

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestSimulate(t *testing.T) {
	sim, err := Simulate(ctx5s(t), cloudprovider.BuildOptions{UserAgent: "sim-test"})
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	t.Cleanup(sim.Close)
	ctx := ctx5s(t)
	if err := sim.Provider.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	groups, _ := sim.Provider.NodeGroups(ctx)
	if len(groups) != 3 {
		t.Fatalf("simulation serves %d groups, want 3 (workers, gpu, batch)", len(groups))
	}
	var workers cloudprovider.NodeGroup
	for _, g := range groups {
		if strings.Contains(g.Debug(ctx), "nodepool workers") {
			workers = g
		}
	}
	if workers == nil {
		t.Fatal("no workers group")
	}
	if err := workers.IncreaseSize(ctx, 1); err != nil {
		t.Fatalf("IncreaseSize: %v", err)
	}
	if n, _ := workers.TargetSize(ctx); n != 3 {
		t.Fatalf("target after scale-up = %d, want 3", n)
	}
	members, _ := workers.Nodes(ctx)
	if err := workers.DeleteNodes(ctx, []*corev1.Node{node(members[0].Id)}); err != nil {
		t.Fatalf("DeleteNodes: %v", err)
	}
	if err := sim.Provider.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if n, _ := workers.TargetSize(ctx); n != 2 {
		t.Fatalf("target after scale-up and eviction = %d, want 2", n)
	}
}
