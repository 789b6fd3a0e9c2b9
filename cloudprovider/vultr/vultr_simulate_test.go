package vultr

import (
	"context"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestSimulate(t *testing.T) {
	tests := []struct {
		name   string
		specs  []string
		groups []string // pool labels
	}{
		{name: "flagged pools", groups: []string{"general", "gpu"}},
		{name: "static via --nodes", specs: []string{"1:4:static"}, groups: []string{"general", "gpu", "static"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			sim, err := Simulate(ctx, cloudprovider.BuildOptions{NodeGroupSpecs: tc.specs})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			u, err := url.Parse(sim.URL)
			if err != nil || u.Hostname() != "127.0.0.1" {
				t.Fatalf("fake URL %q is not loopback", sim.URL)
			}
			if !strings.Contains(sim.Description, "gpu") || !strings.Contains(sim.Description, "static") {
				t.Fatalf("description %q", sim.Description)
			}
			gs, _ := sim.Provider.NodeGroups(ctx)
			var labels []string
			for _, g := range gs {
				ng := g.(*nodeGroup)
				ng.mu.Lock()
				labels = append(labels, ng.pool.Label)
				ng.mu.Unlock()
			}
			sort.Strings(labels)
			if strings.Join(labels, ",") != strings.Join(tc.groups, ",") {
				t.Fatalf("groups %v, want %v", labels, tc.groups)
			}
			types, err := sim.Provider.GetAvailableGPUTypes(ctx)
			if _, ok := types["NVIDIA_A16"]; err != nil || !ok {
				t.Fatalf("GPU types %v, %v", types, err)
			}
			// A scale-up is accepted at once; the nodes come later, in real time.
			g := gs[0]
			before, _ := g.TargetSize(ctx)
			if err := g.IncreaseSize(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if after, _ := g.TargetSize(ctx); after != before+1 {
				t.Fatalf("target %d, want %d", after, before+1)
			}
			for _, g := range gs {
				if _, err := g.TemplateNodeInfo(ctx); err != nil {
					t.Fatalf("template of %s: %v", g.Id(ctx), err)
				}
			}
		})
	}
}
