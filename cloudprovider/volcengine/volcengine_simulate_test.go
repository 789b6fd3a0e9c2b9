package volcengine

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestSimulate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sim, err := Simulate(ctx, cloudprovider.BuildOptions{UserAgent: "sim-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	if sim.URL == "" || sim.Description == "" {
		t.Fatalf("simulation = %+v", sim)
	}
	p := sim.Provider
	gs, err := p.NodeGroups(ctx)
	if err != nil || len(gs) != 2 {
		t.Fatalf("NodeGroups = %d, %v; want the 2 demo groups", len(gs), err)
	}
	var gpu cloudprovider.NodeGroup
	for _, g := range gs {
		if g.Id(ctx) == simGPUGroupID {
			gpu = g
		}
	}
	if gpu == nil {
		t.Fatal("no GPU group")
	}
	node, err := gpu.TemplateNodeInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if q := node.Status.Capacity[ResourceGPU]; q.Value() != 1 {
		t.Fatalf("GPU template capacity = %v", node.Status.Capacity)
	}
	if err := gpu.IncreaseSize(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n, _ := gpu.TargetSize(ctx); n != 1 {
		t.Fatalf("target %d, want 1", n)
	}
	if err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	insts, _ := gpu.Nodes(ctx)
	if len(insts) != 1 || insts[0].Status == nil || insts[0].Status.State != cloudprovider.InstanceCreating {
		t.Fatalf("instances = %+v; the fake should be provisioning one (real-time lag)", insts)
	}
	sim.Close()
	if _, err := http.Get(sim.URL); err == nil {
		t.Fatal("fake API still serving after Close")
	}
}
