package externalgrpc

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/reporting"
)

// The mutation RPCs: each request is checked, applied through the group,
// logged once and counted by outcome.

// mutate runs one resize of group id. bad is non-nil for a malformed
// request, which is refused before the group is touched, so it never reaches
// the cloud. Every request ends in one log line at the default level and one
// count by outcome (reporting.Provider.Mutate).
func (s *Server) mutate(ctx context.Context, id string, c reporting.Change, bad error, apply func(cloudprovider.NodeGroup) error) error {
	g, err := s.group(ctx, id)
	if err != nil {
		// Not counted: an unknown id must not become a metric label.
		reporting.LogMutation(id, c, -1, cloudprovider.MutationRefused, err, ClientOf(ctx))
		return toStatus(err, false)
	}
	if bad != nil {
		// A malformed request is refused before any call.
		from, _ := g.TargetSize(ctx)
		reporting.LogMutation(id, c, from, cloudprovider.MutationRefused, bad, ClientOf(ctx))
		s.opts.Metrics.ObserveMutation(id, c.Operation, cloudprovider.MutationRefused.String())
		return toStatus(bad, false)
	}
	err = s.provider.Mutate(ctx, g, c, ClientOf(ctx), func() error { return apply(g) })
	if err != nil {
		return toStatus(err, false)
	}
	return nil
}

// NodeGroupIncreaseSize implements the NodeGroupIncreaseSize RPC.
func (s *Server) NodeGroupIncreaseSize(ctx context.Context, req *protos.NodeGroupIncreaseSizeRequest) (*protos.NodeGroupIncreaseSizeResponse, error) {
	ctx = cloudhttp.WithMutationPriority(ctx)
	var bad error
	if req.GetDelta() <= 0 {
		bad = cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: size increase must be positive, got %d", req.GetId(), req.GetDelta())
	}
	c := reporting.Change{Operation: metrics.OperationIncrease, Delta: int(req.GetDelta())}
	err := s.mutate(ctx, req.GetId(), c, bad, func(g cloudprovider.NodeGroup) error { return g.IncreaseSize(ctx, int(req.GetDelta())) })
	if err != nil {
		return nil, err
	}
	return &protos.NodeGroupIncreaseSizeResponse{}, nil
}

// NodeGroupDeleteNodes implements the NodeGroupDeleteNodes RPC.
func (s *Server) NodeGroupDeleteNodes(ctx context.Context, req *protos.NodeGroupDeleteNodesRequest) (*protos.NodeGroupDeleteNodesResponse, error) {
	ctx = cloudhttp.WithMutationPriority(ctx)
	nodes, bad := deleteRequestNodes(req)
	c := reporting.Change{Operation: metrics.OperationDelete, Delta: -len(req.GetNodes())}
	for _, n := range req.GetNodes() {
		c.Nodes = append(c.Nodes, cloudprovider.NodeName(n.GetName(), n.GetProviderID()))
	}
	if err := s.mutate(ctx, req.GetId(), c, bad, func(g cloudprovider.NodeGroup) error { return g.DeleteNodes(ctx, nodes) }); err != nil {
		return nil, err
	}
	return &protos.NodeGroupDeleteNodesResponse{}, nil
}

// deleteRequestNodes rebuilds the request's nodes, refusing an empty list,
// nodes without identity and duplicates.
func deleteRequestNodes(req *protos.NodeGroupDeleteNodesRequest) ([]*corev1.Node, error) {
	if len(req.GetNodes()) == 0 {
		return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: no nodes to delete", req.GetId())
	}
	nodes := make([]*corev1.Node, 0, len(req.GetNodes()))
	seen := map[string]bool{}
	for _, n := range req.GetNodes() {
		if err := checkNode(n); err != nil {
			return nil, err
		}
		key := n.GetProviderID() + "\x00" + n.GetName()
		if seen[key] {
			return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s listed twice", cloudprovider.NodeName(n.GetName(), n.GetProviderID()))
		}
		seen[key] = true
		nodes = append(nodes, apiNode(n))
	}
	return nodes, nil
}

// NodeGroupDecreaseTargetSize implements the NodeGroupDecreaseTargetSize RPC.
func (s *Server) NodeGroupDecreaseTargetSize(ctx context.Context, req *protos.NodeGroupDecreaseTargetSizeRequest) (*protos.NodeGroupDecreaseTargetSizeResponse, error) {
	ctx = cloudhttp.WithMutationPriority(ctx)
	var bad error
	if req.GetDelta() >= 0 {
		bad = cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: size decrease must be negative, got %d", req.GetId(), req.GetDelta())
	}
	c := reporting.Change{Operation: metrics.OperationDecrease, Delta: int(req.GetDelta())}
	err := s.mutate(ctx, req.GetId(), c, bad, func(g cloudprovider.NodeGroup) error { return g.DecreaseTargetSize(ctx, int(req.GetDelta())) })
	if err != nil {
		return nil, err
	}
	return &protos.NodeGroupDecreaseTargetSizeResponse{}, nil
}
