package externalgrpc

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest/legacyca"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// fuzzCall decodes data as the request of one RPC and calls its handler.
type fuzzCall struct {
	req  func() proto.Message
	call func(s *Server, ctx context.Context, m proto.Message) error
}

var fuzzCalls = []fuzzCall{
	{func() proto.Message { return &protos.NodeGroupsRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.NodeGroups(ctx, m.(*protos.NodeGroupsRequest))
		return err
	}},
	{func() proto.Message { return &protos.NodeGroupForNodeRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.NodeGroupForNode(ctx, m.(*protos.NodeGroupForNodeRequest))
		return err
	}},
	{func() proto.Message { return &protos.PricingNodePriceRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.PricingNodePrice(ctx, m.(*protos.PricingNodePriceRequest))
		return err
	}},
	{func() proto.Message { return &protos.PricingPodPriceRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.PricingPodPrice(ctx, m.(*protos.PricingPodPriceRequest))
		return err
	}},
	{func() proto.Message { return &protos.NodeGroupTargetSizeRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.NodeGroupTargetSize(ctx, m.(*protos.NodeGroupTargetSizeRequest))
		return err
	}},
	{func() proto.Message { return &protos.NodeGroupIncreaseSizeRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.NodeGroupIncreaseSize(ctx, m.(*protos.NodeGroupIncreaseSizeRequest))
		return err
	}},
	{func() proto.Message { return &protos.NodeGroupDeleteNodesRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.NodeGroupDeleteNodes(ctx, m.(*protos.NodeGroupDeleteNodesRequest))
		return err
	}},
	{func() proto.Message { return &protos.NodeGroupDecreaseTargetSizeRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.NodeGroupDecreaseTargetSize(ctx, m.(*protos.NodeGroupDecreaseTargetSizeRequest))
		return err
	}},
	{func() proto.Message { return &protos.NodeGroupNodesRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.NodeGroupNodes(ctx, m.(*protos.NodeGroupNodesRequest))
		return err
	}},
	{func() proto.Message { return &protos.NodeGroupTemplateNodeInfoRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.NodeGroupTemplateNodeInfo(ctx, m.(*protos.NodeGroupTemplateNodeInfoRequest))
		return err
	}},
	{func() proto.Message { return &protos.NodeGroupAutoscalingOptionsRequest{} }, func(s *Server, ctx context.Context, m proto.Message) error {
		_, err := s.NodeGroupGetOptions(ctx, m.(*protos.NodeGroupAutoscalingOptionsRequest))
		return err
	}},
}

// FuzzHandlers decodes random bytes as each RPC's request and calls the
// handler (without the interceptor's panic recovery) on an in-memory
// provider: no panic, and every error is a status other than Unknown.
func FuzzHandlers(f *testing.F) {
	now := time.Unix(1700000000, 0)
	node := &protos.ExternalGrpcNode{ProviderID: "inmemory://pool-a/1", Name: "n", Labels: map[string]string{"a": "b"}}
	seeds := map[int]proto.Message{
		1:  &protos.NodeGroupForNodeRequest{Node: node},
		2:  &protos.PricingNodePriceRequest{Node: node, StartTimestamp: timestamppb.New(now), EndTimestamp: timestamppb.New(now.Add(time.Hour))},
		3:  &protos.PricingPodPriceRequest{PodBytes: []byte{0x0a, 0x02, 0x0a, 0x00}, StartTimestamp: timestamppb.New(now), EndTimestamp: timestamppb.New(now)},
		4:  &protos.NodeGroupTargetSizeRequest{Id: "pool-a"},
		5:  &protos.NodeGroupIncreaseSizeRequest{Id: "pool-a", Delta: 1},
		6:  &protos.NodeGroupDeleteNodesRequest{Id: "pool-a", Nodes: []*protos.ExternalGrpcNode{node, node}},
		7:  &protos.NodeGroupDecreaseTargetSizeRequest{Id: "pool-b", Delta: -1},
		8:  &protos.NodeGroupNodesRequest{Id: "pool-b"},
		9:  &protos.NodeGroupTemplateNodeInfoRequest{Id: "pool-a"},
		10: &protos.NodeGroupAutoscalingOptionsRequest{Id: "pool-b", Defaults: &protos.NodeGroupAutoscalingOptions{MaxNodeProvisionDuration: durationpb.New(time.Minute)}},
	}
	for i, m := range seeds {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	// The same requests as CA 1.34.1 and older encode them (legacy fields only).
	legacySeeds := map[int]proto.Message{
		2: &legacyca.PricingNodePriceRequest{Node: &legacyca.ExternalGrpcNode{ProviderID: node.ProviderID, Name: node.Name},
			StartTime: legacyca.NewTime(now), EndTime: legacyca.NewTime(now.Add(time.Hour))},
		3:  &legacyca.PricingPodPriceRequest{Pod: []byte{0x0a, 0x02, 0x0a, 0x00}, StartTime: legacyca.NewTime(now), EndTime: legacyca.NewTime(now)},
		10: &legacyca.NodeGroupAutoscalingOptionsRequest{Id: "pool-b", Defaults: legacyca.CADefaults()},
	}
	for i, m := range legacySeeds {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Add(uint8(0), []byte{})
	p := cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud(
		cloudprovidertest.CloudGroup{ID: "pool-a", Min: 1, Max: 5, Running: 2},
		cloudprovidertest.CloudGroup{ID: "pool-b", Min: 0, Max: 3, Running: 1, NoTemplate: true, Options: true},
	))
	srv := NewServer(p, Options{})
	if err := srv.RefreshOnce(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, method uint8, data []byte) {
		c := fuzzCalls[int(method)%len(fuzzCalls)]
		m := c.req()
		if err := proto.Unmarshal(data, m); err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := c.call(srv, ctx, m)
		if err == nil {
			return
		}
		if st, ok := status.FromError(err); !ok || st.Code() == codes.Unknown {
			t.Fatalf("%T: error is not a classified status: %v", m, err)
		}
	})
}
