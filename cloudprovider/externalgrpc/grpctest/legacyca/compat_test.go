package legacyca_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest/legacyca"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	_ "github.com/ca-providers/cluster-autoscaler-provider/router" // the providers compiled into the binary
)

// rpcCtx gives each call CA's default 5 s deadline.
func rpcCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// expectation is what one provider answers an old CA on the optional RPCs.
type expectation struct {
	pricing codes.Code // PricingNodePrice and PricingPodPrice
	options codes.Code // NodeGroupGetOptions with CA's defaults
}

// TestOldCAAgainstSimulatedProviders drives all 15 RPCs with the CA 1.34.1
// layout through the real server, for each provider over the fake cloud its
// --simulate uses.
func TestOldCAAgainstSimulatedProviders(t *testing.T) {
	want := map[string]expectation{
		"vultr":      {pricing: codes.OK, options: codes.Unimplemented},
		"volcengine": {pricing: codes.Unimplemented, options: codes.Unimplemented},
		"exoscale":   {pricing: codes.Unimplemented, options: codes.Unimplemented},
	}
	for name, exp := range want {
		t.Run(name, func(t *testing.T) {
			reg, ok := registry.Lookup(name)
			if !ok {
				t.Skipf("%s is not compiled in", name)
			}
			sim, err := reg.Simulate(context.Background(), registry.BuildOptions{UserAgent: "legacyca-test"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sim.Close)
			conn := grpctest.ServeConn(t, sim.Provider, externalgrpc.Options{})
			driveAllRPCs(t, conn, exp)
		})
	}
}

// TestOldCAAgainstInMemoryProvider does the same with the in-memory provider,
// whose pool-b returns option overrides, so OK answers are covered too.
func TestOldCAAgainstInMemoryProvider(t *testing.T) {
	p := cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud(
		cloudprovidertest.CloudGroup{ID: "pool-a", Min: 1, Max: 5, Running: 2},
		cloudprovidertest.CloudGroup{ID: "pool-b", Min: 0, Max: 3, Running: 1, Options: true},
	))
	conn := grpctest.ServeConn(t, p, externalgrpc.Options{})
	answers := driveAllRPCs(t, conn, expectation{pricing: codes.OK, options: codes.Unimplemented})
	if a := answers["pool-b"]; a.OptionsCode != codes.OK || a.Options.GetScaleDownUnneededTime().GetDuration() != int64(42*time.Minute) {
		t.Fatalf("pool-b options %v (%s): want the in-memory override of 42m", a.Options, a.OptionsCode)
	}
}

// driveAllRPCs calls every RPC as an old CA does and checks the answers it
// relies on; exp.options applies to groups without overrides.
func driveAllRPCs(t *testing.T, conn *grpc.ClientConn, exp expectation) map[string]legacyca.OptionalAnswers {
	t.Helper()
	c := legacyca.NewClient(conn)
	called := map[string]bool{}
	must := func(method string, err error) {
		t.Helper()
		called[method] = true
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}

	_, err := c.Refresh(rpcCtx(t), &legacyca.RefreshRequest{})
	must("Refresh", err)
	groups, err := c.NodeGroups(rpcCtx(t), &legacyca.NodeGroupsRequest{})
	must("NodeGroups", err)
	if len(groups.GetNodeGroups()) == 0 {
		t.Fatal("no node groups")
	}
	_, err = c.GPULabel(rpcCtx(t), &legacyca.GPULabelRequest{})
	must("GPULabel", err)
	_, err = c.GetAvailableGPUTypes(rpcCtx(t), &legacyca.GetAvailableGPUTypesRequest{})
	must("GetAvailableGPUTypes", err)

	answers := map[string]legacyca.OptionalAnswers{}
	templates := 0
	var grow, shrink *legacyca.NodeGroup
	for _, g := range groups.GetNodeGroups() {
		id := g.GetId()
		ts, err := c.NodeGroupTargetSize(rpcCtx(t), &legacyca.NodeGroupTargetSizeRequest{Id: id})
		must("NodeGroupTargetSize", err)
		nodes, err := c.NodeGroupNodes(rpcCtx(t), &legacyca.NodeGroupNodesRequest{Id: id})
		must("NodeGroupNodes", err)

		a := legacyca.CheckOptionalRPCs(rpcCtx(t), t, conn, id)
		for _, m := range []string{"NodeGroupTemplateNodeInfo", "NodeGroupGetOptions", "PricingNodePrice", "PricingPodPrice"} {
			called[m] = true
		}
		answers[id] = a
		if a.Template != nil {
			templates++
			if a.Template.Status.Capacity.Cpu().IsZero() {
				t.Errorf("template of %s has no cpu capacity", id)
			}
		}
		if a.NodePriceCode != exp.pricing || a.PodPriceCode != exp.pricing {
			t.Errorf("%s pricing codes %s/%s, want %s", id, a.NodePriceCode, a.PodPriceCode, exp.pricing)
		}
		if exp.pricing == codes.OK && (a.NodePrice <= 0 || a.PodPrice < 0) {
			t.Errorf("%s prices node %v pod %v", id, a.NodePrice, a.PodPrice)
		}
		if a.OptionsCode == codes.OK {
			checkOverride(t, a.Options)
		} else if a.OptionsCode != exp.options {
			t.Errorf("%s GetOptions code %s, want %s", id, a.OptionsCode, exp.options)
		}

		if shrink == nil && ts.GetTargetSize() > g.GetMinSize() && runningInstance(nodes) != nil {
			shrink = g
		} else if grow == nil && ts.GetTargetSize() < g.GetMaxSize() {
			// Another group than shrink's when there is one: a decrease may
			// remove any node of its group (Vultr picks).
			grow = g
		}
	}
	if templates == 0 {
		t.Fatal("no group has a template: scale-from-zero is not covered")
	}

	// Mutations use messages both generations share; checked for completeness.
	if grow == nil || shrink == nil {
		t.Fatalf("seed has no group to grow (%v) or to shrink (%v)", grow, shrink)
	}
	target := func(id string) int32 {
		ts, err := c.NodeGroupTargetSize(rpcCtx(t), &legacyca.NodeGroupTargetSizeRequest{Id: id})
		must("NodeGroupTargetSize", err)
		return ts.GetTargetSize()
	}
	before := target(grow.GetId())
	_, err = c.NodeGroupIncreaseSize(rpcCtx(t), &legacyca.NodeGroupIncreaseSizeRequest{Id: grow.GetId(), Delta: 1})
	must("NodeGroupIncreaseSize", err)
	if got := target(grow.GetId()); got != before+1 {
		t.Fatalf("target of %s %d after +1 from %d", grow.GetId(), got, before)
	}
	_, err = c.NodeGroupDecreaseTargetSize(rpcCtx(t), &legacyca.NodeGroupDecreaseTargetSizeRequest{Id: grow.GetId(), Delta: -1})
	wantTarget := before
	if status.Code(err) == codes.FailedPrecondition {
		// The cloud created the instance already (the provider reads the
		// group fresh before a shrink): nothing is left to cancel.
		called["NodeGroupDecreaseTargetSize"] = true
		wantTarget = before + 1
	} else {
		must("NodeGroupDecreaseTargetSize", err)
	}
	if got := target(grow.GetId()); got != wantTarget {
		t.Fatalf("target of %s %d after -1 (err %v), want %d", grow.GetId(), got, err, wantTarget)
	}

	nodes, err := c.NodeGroupNodes(rpcCtx(t), &legacyca.NodeGroupNodesRequest{Id: shrink.GetId()})
	must("NodeGroupNodes", err)
	victim := runningInstance(nodes)
	if victim == nil {
		t.Fatalf("%s has no running instance left to delete", shrink.GetId())
	}
	node := &legacyca.ExternalGrpcNode{ProviderID: victim.GetId(), Name: victim.GetId(), Labels: map[string]string{}, Annotations: map[string]string{}}
	owner, err := c.NodeGroupForNode(rpcCtx(t), &legacyca.NodeGroupForNodeRequest{Node: node})
	must("NodeGroupForNode", err)
	if owner.GetNodeGroup().GetId() != shrink.GetId() {
		t.Fatalf("NodeGroupForNode(%s) = %v, want %s", victim.GetId(), owner.GetNodeGroup(), shrink.GetId())
	}
	stranger, err := c.NodeGroupForNode(rpcCtx(t), &legacyca.NodeGroupForNodeRequest{Node: &legacyca.ExternalGrpcNode{ProviderID: "other://1", Name: "control-plane"}})
	must("NodeGroupForNode", err)
	if stranger.GetNodeGroup().GetId() != "" {
		t.Fatalf("a foreign node belongs to %v", stranger.GetNodeGroup())
	}
	before = target(shrink.GetId())
	_, err = c.NodeGroupDeleteNodes(rpcCtx(t), &legacyca.NodeGroupDeleteNodesRequest{Id: shrink.GetId(), Nodes: []*legacyca.ExternalGrpcNode{node}})
	must("NodeGroupDeleteNodes", err)
	if got := target(shrink.GetId()); got != before-1 {
		t.Fatalf("target of %s %d after deleting a node, want %d", shrink.GetId(), got, before-1)
	}

	_, err = c.Cleanup(rpcCtx(t), &legacyca.CleanupRequest{})
	must("Cleanup", err)
	if len(called) != len(protos.CloudProvider_ServiceDesc.Methods) {
		t.Fatalf("called %d of the %d RPCs: %v", len(called), len(protos.CloudProvider_ServiceDesc.Methods), called)
	}
	return answers
}

// checkOverride checks options answered OK: whatever the provider overrides
// starts from the defaults CA sent, so the untouched durations are CA's.
func checkOverride(t *testing.T, o *legacyca.NodeGroupAutoscalingOptions) {
	t.Helper()
	d := legacyca.CADefaults()
	if o.GetScaleDownUnreadyTime().GetDuration() != d.GetScaleDownUnreadyTime().GetDuration() ||
		o.GetMaxNodeProvisionTime().GetDuration() != d.GetMaxNodeProvisionTime().GetDuration() ||
		o.GetScaleDownUtilizationThreshold() != d.GetScaleDownUtilizationThreshold() {
		t.Errorf("options %v do not start from the legacy defaults %v", o, d)
	}
}

// TestInMemoryOverridesRoundTripBothGenerations sends GetOptions defaults in
// each generation and reads the answer in each: the in-memory provider's
// override (scale-down-unneeded 42m) and the defaults it keeps come out the
// same whichever generation asked and whichever reads.
func TestInMemoryOverridesRoundTripBothGenerations(t *testing.T) {
	p := cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud(
		cloudprovidertest.CloudGroup{ID: "pool-b", Min: 0, Max: 3, Running: 1, Options: true}))
	if err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn := grpctest.ServeConn(t, p, externalgrpc.Options{})
	want := map[string]time.Duration{"unneeded": 42 * time.Minute, "unready": 20 * time.Minute, "provision": 15 * time.Minute}

	legacyReq := &legacyca.NodeGroupAutoscalingOptionsRequest{Id: "pool-b", Defaults: legacyca.CADefaults()}
	currentReq := &protos.NodeGroupAutoscalingOptionsRequest{Id: "pool-b", Defaults: &protos.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold: 0.5, ScaleDownGpuUtilizationThreshold: 0.5,
		ScaleDownUnneededDuration: durationpb.New(10 * time.Minute), ScaleDownUnreadyDuration: durationpb.New(20 * time.Minute),
		MaxNodeProvisionDuration: durationpb.New(15 * time.Minute)}}
	for _, asked := range []struct {
		name string
		call func() ([]byte, error)
	}{
		{"legacy request", func() ([]byte, error) {
			r, err := legacyca.NewClient(conn).NodeGroupGetOptions(rpcCtx(t), legacyReq)
			if err != nil {
				return nil, err
			}
			return proto.Marshal(r) // keeps the current fields as unknown bytes
		}},
		{"current request", func() ([]byte, error) {
			r, err := protos.NewCloudProviderClient(conn).NodeGroupGetOptions(rpcCtx(t), currentReq)
			if err != nil {
				return nil, err
			}
			return proto.Marshal(r)
		}},
	} {
		t.Run(asked.name, func(t *testing.T) {
			b, err := asked.call()
			if err != nil {
				t.Fatal(err)
			}
			var old legacyca.NodeGroupAutoscalingOptionsResponse
			var cur protos.NodeGroupAutoscalingOptionsResponse
			if err := proto.Unmarshal(b, &old); err != nil {
				t.Fatal(err)
			}
			if err := proto.Unmarshal(b, &cur); err != nil {
				t.Fatal(err)
			}
			lo, co := old.GetNodeGroupAutoscalingOptions(), cur.GetNodeGroupAutoscalingOptions()
			got := map[string][2]time.Duration{
				"unneeded":  {time.Duration(lo.GetScaleDownUnneededTime().GetDuration()), co.GetScaleDownUnneededDuration().AsDuration()},
				"unready":   {time.Duration(lo.GetScaleDownUnreadyTime().GetDuration()), co.GetScaleDownUnreadyDuration().AsDuration()},
				"provision": {time.Duration(lo.GetMaxNodeProvisionTime().GetDuration()), co.GetMaxNodeProvisionDuration().AsDuration()},
			}
			for k, w := range want {
				if got[k] != [2]time.Duration{w, w} {
					t.Errorf("%s: legacy %s current %s, want %s in both", k, got[k][0], got[k][1], w)
				}
			}
			if lo.GetScaleDownUtilizationThreshold() != 0.5 || co.GetScaleDownUtilizationThreshold() != 0.5 {
				t.Errorf("threshold not kept: %v / %v", lo, co)
			}
		})
	}
	_, err := legacyca.NewClient(conn).NodeGroupGetOptions(rpcCtx(t), &legacyca.NodeGroupAutoscalingOptionsRequest{Id: "missing", Defaults: legacyca.CADefaults()})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("unknown group: %v, want NotFound", err)
	}
}

func runningInstance(nodes *legacyca.NodeGroupNodesResponse) *legacyca.Instance {
	for _, in := range nodes.GetInstances() {
		if in.GetStatus().GetInstanceState() == legacyca.InstanceStatus_instanceRunning {
			return in
		}
	}
	return nil
}
