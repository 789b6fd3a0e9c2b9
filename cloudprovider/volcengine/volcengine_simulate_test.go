package volcengine

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

func TestSimulate(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sim, err := Simulate(ctx, registry.BuildOptions{UserAgent: "sim-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	if sim.URL == "" || sim.Description == "" {
		t.Fatalf("simulation = %+v", sim)
	}
	p := sim.Provider
	if err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
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
	if q := node.Status.Capacity[groupconfig.ResourceGPU]; q.Value() != 1 {
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

// TestScaleUpThroughGRPC drives the provider through the externalgrpc server
// as CA would, against the demo seed with the provisioning lag on a fake clock:
// a scale-up of the empty GPU group is accepted at once, the instances show as
// creating, then as running once the lag has passed.
func TestScaleUpThroughGRPC(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withSeed(seedDemo), withDiscovery("asg:tag=k8s.io/cluster-autoscaler/enabled=true"))
	c := grpctest.Serve(t, e.p, externalgrpc.Options{})
	refresh := func() {
		t.Helper()
		if _, err := c.Refresh(testCtx(t), &protos.RefreshRequest{}); err != nil {
			t.Fatalf("Refresh: %v", err)
		}
	}
	states := func() map[protos.InstanceStatus_InstanceState]int {
		t.Helper()
		resp, err := c.NodeGroupNodes(testCtx(t), &protos.NodeGroupNodesRequest{Id: simGPUGroupID})
		if err != nil {
			t.Fatalf("NodeGroupNodes: %v", err)
		}
		out := map[protos.InstanceStatus_InstanceState]int{}
		for _, in := range resp.Instances {
			out[in.GetStatus().GetInstanceState()]++
		}
		return out
	}

	refresh()
	groups, err := c.NodeGroups(testCtx(t), &protos.NodeGroupsRequest{})
	if err != nil || len(groups.NodeGroups) != 2 {
		t.Fatalf("NodeGroups = %v, %v", groups, err)
	}
	tmpl, err := c.NodeGroupTemplateNodeInfo(testCtx(t), &protos.NodeGroupTemplateNodeInfoRequest{Id: simGPUGroupID})
	if err != nil || len(tmpl.GetNodeBytes()) == 0 {
		t.Fatalf("template: %d bytes, %v", len(tmpl.GetNodeBytes()), err)
	}
	var node corev1.Node
	if err := node.Unmarshal(tmpl.GetNodeBytes()); err != nil || node.Labels[GPULabel] != "NVIDIA-A10" {
		t.Fatalf("template node labels %v, %v", node.Labels, err)
	}
	if _, err := c.NodeGroupIncreaseSize(testCtx(t), &protos.NodeGroupIncreaseSizeRequest{Id: simGPUGroupID, Delta: 2}); err != nil {
		t.Fatal(err)
	}
	if ts, err := c.NodeGroupTargetSize(testCtx(t), &protos.NodeGroupTargetSizeRequest{Id: simGPUGroupID}); err != nil || ts.TargetSize != 2 {
		t.Fatalf("TargetSize = %v, %v", ts, err)
	}
	if _, err := c.NodeGroupIncreaseSize(testCtx(t), &protos.NodeGroupIncreaseSizeRequest{Id: simGPUGroupID, Delta: 3}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("increase past max: %v, want FailedPrecondition", err)
	}
	refresh()
	if got := states(); got[protos.InstanceStatus_instanceCreating] != 2 {
		t.Fatalf("after scale-up: %v, want 2 creating", got)
	}
	e.clock.Advance(time.Minute)
	refresh()
	if got := states(); got[protos.InstanceStatus_instanceRunning] != 2 {
		t.Fatalf("after the provisioning lag: %v, want 2 running", got)
	}
	if cg, _ := e.fake.Group(simGPUGroupID); cg.Desired != 2 {
		t.Fatalf("cloud desired %d, want 2", cg.Desired)
	}
}

// TestDeleteFailedAndNeverStartedThroughGRPC: CA's clean-up of a failed
// scale-up succeeds through the externalgrpc server against the --simulate
// seed on the strict fake: the Error instance (RemoveInstances would refuse
// it) and the slot the service never started an instance for, in either
// activity order.
func TestDeleteFailedAndNeverStartedThroughGRPC(t *testing.T) {
	t.Parallel()
	for _, oldestFirst := range []bool{false, true} {
		for _, noInstances := range []bool{false, true} {
			name := fmt.Sprintf("neverStarted=%v/oldestFirst=%v", noInstances, oldestFirst)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, withSeed(seedDemo), withDiscovery("asg:tag=k8s.io/cluster-autoscaler/enabled=true"),
					func(c *envConfig) { c.fakeOpts.ActivitiesOldestFirst = oldestFirst })
				c := grpctest.Serve(t, e.p, externalgrpc.Options{})
				e.fake.SetCreateFailure(simGPUGroupID, &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "no stock", NoInstances: noInstances})
				if _, err := c.NodeGroupIncreaseSize(testCtx(t), &protos.NodeGroupIncreaseSizeRequest{Id: simGPUGroupID, Delta: 1}); err != nil {
					t.Fatal(err)
				}
				// The service launches at its next check; the launch fails a
				// provisioning delay later.
				for range 2 {
					e.clock.Advance(time.Minute)
					if _, err := c.Refresh(testCtx(t), &protos.RefreshRequest{}); err != nil {
						t.Fatal(err)
					}
				}
				resp, err := c.NodeGroupNodes(testCtx(t), &protos.NodeGroupNodesRequest{Id: simGPUGroupID})
				if err != nil {
					t.Fatal(err)
				}
				var failed string
				for _, in := range resp.Instances {
					if in.GetStatus().GetErrorInfo() != nil {
						failed = in.Id
					}
				}
				if failed == "" {
					t.Fatalf("no failed instance reported: %v", resp.Instances)
				}
				removes := e.fake.CountOperation(fakeapi.ActionRemoveInstances)
				_, err = c.NodeGroupDeleteNodes(testCtx(t), &protos.NodeGroupDeleteNodesRequest{Id: simGPUGroupID, Nodes: []*protos.ExternalGrpcNode{{
					ProviderID:  failed,
					Name:        failed,
					Annotations: map[string]string{cloudprovider.FakeNodeReasonAnnotation: "create-error"},
				}}})
				if err != nil {
					t.Fatalf("DeleteNodes of the failed instance: %v", err)
				}
				if e.fake.CountOperation(fakeapi.ActionRemoveInstances) != removes {
					t.Fatal("RemoveInstances sent for an instance not in service")
				}
				if ts, err := c.NodeGroupTargetSize(testCtx(t), &protos.NodeGroupTargetSizeRequest{Id: simGPUGroupID}); err != nil || ts.TargetSize != 0 {
					t.Fatalf("TargetSize = %v, %v; want 0", ts, err)
				}
				// The service's health check takes the Error instance away and,
				// with desired 0, launches nothing in its place.
				e.fake.SetCreateFailure(simGPUGroupID, nil)
				e.clock.Advance(5 * time.Minute)
				e.fake.Settle()
				if insts := e.fake.Instances(simGPUGroupID); len(insts) != 0 {
					t.Fatalf("instances left: %+v", insts)
				}
			})
		}
	}
}
