package vultr

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

func TestSimulate(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			sim, err := Simulate(ctx, registry.BuildOptions{NodeGroupSpecs: tc.specs})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			if err := sim.Provider.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
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

// TestScaleUpThroughGRPC drives the provider through the externalgrpc server
// as CA would: a scale-up makes new nodes appear in the fake cloud, first
// creating (pending), then running (active).
func TestScaleUpThroughGRPC(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, withFake(func(o *fakeapi.Options) { o.AppearAfter = 5 * time.Second; o.ActiveAfter = 60 * time.Second }))
	c := grpctest.Serve(t, e.p, externalgrpc.Options{})

	refresh := func() {
		t.Helper()
		if _, err := c.Refresh(e.ctx(), &protos.RefreshRequest{}); err != nil {
			t.Fatalf("Refresh: %v", err)
		}
	}
	states := func(id string) map[protos.InstanceStatus_InstanceState]int {
		t.Helper()
		resp, err := c.NodeGroupNodes(e.ctx(), &protos.NodeGroupNodesRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		m := map[protos.InstanceStatus_InstanceState]int{}
		for _, in := range resp.GetInstances() {
			m[in.GetStatus().GetInstanceState()]++
		}
		return m
	}
	refresh()
	groups, err := c.NodeGroups(e.ctx(), &protos.NodeGroupsRequest{})
	if err != nil || len(groups.GetNodeGroups()) != 3 {
		t.Fatalf("NodeGroups: %v, %v", groups, err)
	}
	id := "a-main"
	if _, err := c.NodeGroupIncreaseSize(e.ctx(), &protos.NodeGroupIncreaseSizeRequest{Id: id, Delta: 2}); err != nil {
		t.Fatal(err)
	}
	ts, err := c.NodeGroupTargetSize(e.ctx(), &protos.NodeGroupTargetSizeRequest{Id: id})
	if err != nil || ts.GetTargetSize() != 5 {
		t.Fatalf("TargetSize after IncreaseSize: %v, %v", ts, err)
	}
	if _, err := c.NodeGroupIncreaseSize(e.ctx(), &protos.NodeGroupIncreaseSizeRequest{Id: id, Delta: 4}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("IncreaseSize past max: %v, want FailedPrecondition", err)
	}
	running, creating := protos.InstanceStatus_instanceRunning, protos.InstanceStatus_instanceCreating
	steps := []struct {
		name    string
		advance time.Duration
		want    map[protos.InstanceStatus_InstanceState]int
		cloud   map[string]int
	}{
		{name: "requested", want: map[protos.InstanceStatus_InstanceState]int{running: 3}, cloud: map[string]int{"active": 3}},
		{name: "pending", advance: 5 * time.Second, want: map[protos.InstanceStatus_InstanceState]int{running: 3, creating: 2},
			cloud: map[string]int{"active": 3, "pending": 2}},
		{name: "active", advance: time.Minute, want: map[protos.InstanceStatus_InstanceState]int{running: 5}, cloud: map[string]int{"active": 5}},
	}
	for _, s := range steps {
		// Not parallel: the steps share one environment and run in order.
		t.Run(s.name, func(t *testing.T) {
			e.clock.Advance(s.advance)
			refresh()
			if got := states(id); fmt.Sprint(got) != fmt.Sprint(s.want) {
				t.Fatalf("instances %v, want %v", got, s.want)
			}
			cloud := map[string]int{}
			for _, n := range e.pool(id).Nodes {
				cloud[n.Status]++
			}
			if fmt.Sprint(cloud) != fmt.Sprint(s.cloud) {
				t.Fatalf("fake cloud nodes %v, want %v", cloud, s.cloud)
			}
		})
	}
	tmpl, err := c.NodeGroupTemplateNodeInfo(e.ctx(), &protos.NodeGroupTemplateNodeInfoRequest{Id: "b-gpu"})
	if err != nil {
		t.Fatal(err)
	}
	var node corev1.Node
	if err := node.Unmarshal(tmpl.GetNodeBytes()); err != nil || node.Labels[LabelGPUType] != "NVIDIA_A16" {
		t.Fatalf("template over the wire: %v, labels %v", err, node.Labels)
	}
	label, err := c.GPULabel(e.ctx(), &protos.GPULabelRequest{})
	if err != nil || label.GetLabel() != LabelGPUType {
		t.Fatalf("GPULabel: %v, %v", label, err)
	}
}

// TestSimulateKeepsPoolIDsAcrossRestarts: commands pasted from the banner
// name pool ids, so a restart must bring the same ids back, and the banner
// must show each pool's name next to its id.
func TestSimulateKeepsPoolIDsAcrossRestarts(t *testing.T) {
	t.Parallel()
	start := func() (ids []string, description string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		sim, err := Simulate(ctx, registry.BuildOptions{NodeGroupSpecs: []string{"1:4:static"}})
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		if err := sim.Provider.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		groups, err := sim.Provider.NodeGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			ids = append(ids, g.Id(ctx))
		}
		sort.Strings(ids)
		for _, label := range []string{"general", "gpu", "static"} {
			if sim.GroupNames[simPoolID(label)] != label {
				t.Errorf("GroupNames %v does not name pool %s %q", sim.GroupNames, simPoolID(label), label)
			}
		}
		return ids, sim.Description
	}
	first, description := start()
	second, _ := start()
	if strings.Join(first, ",") != strings.Join(second, ",") {
		t.Fatalf("pool ids changed across restarts: %v then %v", first, second)
	}
	for _, label := range []string{"general", "gpu", "static"} {
		if want := label + " " + simPoolID(label); !strings.Contains(description, want) {
			t.Errorf("banner %q does not show %q", description, want)
		}
	}
}
