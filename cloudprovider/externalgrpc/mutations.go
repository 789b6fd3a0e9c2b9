package externalgrpc

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// The mutation RPCs: each request is checked, applied through the group (whose
// decoration reports what it left, reporting.go), logged once and counted by
// outcome.

// maxLoggedInstances bounds the instances one mutation's log line names.
const maxLoggedInstances = 20

// change is one mutation CA asked for, as logged and counted.
type change struct {
	// operation is metrics.OperationIncrease, OperationDecrease or OperationDelete.
	operation string
	// delta is the requested change of the target (negative for decrease
	// and delete).
	delta int
	// nodes names the nodes to delete.
	nodes []string
}

// mutate runs one resize of group id: the request is checked (bad is non-nil
// for a malformed request) before the group is touched, so a bad request never
// reaches the cloud; the group's decoration reports the sizes and the
// quarantine the change leaves (reportingProvider.mutated). Every request ends in one log line at the default level and one count, with its
// outcome (cloudprovider.OutcomeOf): what an operator follows of the
// autoscaler's decisions.
func (s *Server) mutate(ctx context.Context, id string, c change, bad error, apply func(cloudprovider.NodeGroup) error) error {
	g, err := s.group(ctx, id)
	if err != nil {
		// Not counted: an unknown id must not become a metric label.
		s.logMutation(ctx, id, c, -1, cloudprovider.MutationRefused, err)
		return toStatus(err, false)
	}
	from, _ := g.TargetSize(ctx)
	err, outcome := bad, cloudprovider.MutationRefused
	if err == nil {
		// A malformed request is refused before any call; otherwise the
		// outcome is what the call's error says.
		err = apply(g)
		outcome = cloudprovider.OutcomeOf(err)
	}
	s.logMutation(ctx, id, c, from, outcome, err)
	s.opts.Metrics.ObserveMutation(id, c.operation, outcome.String())
	if err != nil {
		return toStatus(err, false)
	}
	return nil
}

// logMutation writes the one line of a mutation: group, target from -> to
// (the target asked for), the instances named, the outcome and the client.
// from is -1 when the group is unknown.
func (s *Server) logMutation(ctx context.Context, id string, c change, from int, outcome cloudprovider.MutationOutcome, err error) {
	kv := []any{"nodeGroup", id, "operation", c.operation}
	if from >= 0 {
		kv = append(kv, "from", from, "to", from+c.delta)
	} else {
		kv = append(kv, "delta", c.delta)
	}
	if n := len(c.nodes); n > maxLoggedInstances {
		kv = append(kv, "instances", append(c.nodes[:maxLoggedInstances:maxLoggedInstances], fmt.Sprintf("and %d more", n-maxLoggedInstances)))
	} else if n > 0 {
		kv = append(kv, "instances", c.nodes)
	}
	kv = append(kv, "outcome", outcome.String(), "client", ClientOf(ctx))
	if err == nil {
		klog.InfoS("Node group changed", kv...)
		return
	}
	klog.ErrorS(err, "Node group change not applied", kv...)
}

// NodeGroupIncreaseSize implements the NodeGroupIncreaseSize RPC.
func (s *Server) NodeGroupIncreaseSize(ctx context.Context, req *protos.NodeGroupIncreaseSizeRequest) (*protos.NodeGroupIncreaseSizeResponse, error) {
	ctx = cloudhttp.WithMutationPriority(ctx)
	var bad error
	if req.GetDelta() <= 0 {
		bad = cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: size increase must be positive, got %d", req.GetId(), req.GetDelta())
	}
	c := change{operation: metrics.OperationIncrease, delta: int(req.GetDelta())}
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
	c := change{operation: metrics.OperationDelete, delta: -len(req.GetNodes())}
	for _, n := range req.GetNodes() {
		c.nodes = append(c.nodes, cloudprovider.NodeName(n.GetName(), n.GetProviderID()))
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
	c := change{operation: metrics.OperationDecrease, delta: int(req.GetDelta())}
	err := s.mutate(ctx, req.GetId(), c, bad, func(g cloudprovider.NodeGroup) error { return g.DecreaseTargetSize(ctx, int(req.GetDelta())) })
	if err != nil {
		return nil, err
	}
	return &protos.NodeGroupDecreaseTargetSizeResponse{}, nil
}
