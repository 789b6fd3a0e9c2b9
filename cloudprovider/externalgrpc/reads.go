package externalgrpc

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// The read RPCs: answered from the provider's snapshot, never from the cloud.

// NodeGroups implements the NodeGroups RPC from the provider's snapshot.
func (s *Server) NodeGroups(ctx context.Context, _ *protos.NodeGroupsRequest) (*protos.NodeGroupsResponse, error) {
	if s.opts.MaxStaleness > 0 {
		// Outside a gRPC call (tests calling the method) there is no header to set.
		_ = grpc.SetHeader(ctx, metadata.Pairs(MaxStalenessHeader, s.opts.MaxStaleness.String()))
	}
	groups, err := s.provider.NodeGroups(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	resp := &protos.NodeGroupsResponse{NodeGroups: make([]*protos.NodeGroup, 0, len(groups))}
	for _, g := range groups {
		resp.NodeGroups = append(resp.NodeGroups, pbGroup(ctx, g))
	}
	return resp, nil
}

// NodeGroupForNode implements the NodeGroupForNode RPC. "Not ours" is OK with
// an empty group: CA reads an error as a failure, not as "not autoscaled".
func (s *Server) NodeGroupForNode(ctx context.Context, req *protos.NodeGroupForNodeRequest) (*protos.NodeGroupForNodeResponse, error) {
	if err := checkNode(req.GetNode()); err != nil {
		return nil, toStatus(err, false)
	}
	g, err := s.provider.NodeGroupForNode(ctx, apiNode(req.GetNode()))
	if err != nil {
		return nil, toStatus(err, false)
	}
	if g == nil {
		return &protos.NodeGroupForNodeResponse{NodeGroup: &protos.NodeGroup{}}, nil
	}
	return &protos.NodeGroupForNodeResponse{NodeGroup: pbGroup(ctx, g)}, nil
}

// GPULabel implements the GPULabel RPC.
func (s *Server) GPULabel(ctx context.Context, _ *protos.GPULabelRequest) (*protos.GPULabelResponse, error) {
	label, err := s.provider.GPULabel(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	return &protos.GPULabelResponse{Label: label}, nil
}

// GetAvailableGPUTypes implements the GetAvailableGPUTypes RPC. CA reads only
// the keys; the values carry the name as a StringValue for other readers.
func (s *Server) GetAvailableGPUTypes(ctx context.Context, _ *protos.GetAvailableGPUTypesRequest) (*protos.GetAvailableGPUTypesResponse, error) {
	types, err := s.provider.GetAvailableGPUTypes(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	resp := &protos.GetAvailableGPUTypesResponse{GpuTypes: make(map[string]*anypb.Any, len(types))}
	for name := range types {
		v, err := anypb.New(wrapperspb.String(name))
		if err != nil {
			return nil, toStatus(err, false)
		}
		resp.GpuTypes[name] = v
	}
	return resp, nil
}

// Cleanup implements the Cleanup RPC. It releases provider resources but the
// server keeps serving: CA sends Cleanup when it exits and reconnects later.
func (s *Server) Cleanup(ctx context.Context, _ *protos.CleanupRequest) (*protos.CleanupResponse, error) {
	if err := s.provider.Cleanup(ctx); err != nil {
		return nil, toStatus(err, false)
	}
	return &protos.CleanupResponse{}, nil
}

// NodeGroupTargetSize implements the NodeGroupTargetSize RPC.
func (s *Server) NodeGroupTargetSize(ctx context.Context, req *protos.NodeGroupTargetSizeRequest) (*protos.NodeGroupTargetSizeResponse, error) {
	g, err := s.group(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err, false)
	}
	n, err := g.TargetSize(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	return &protos.NodeGroupTargetSizeResponse{TargetSize: int32(n)}, nil
}

// NodeGroupNodes implements the NodeGroupNodes RPC.
func (s *Server) NodeGroupNodes(ctx context.Context, req *protos.NodeGroupNodesRequest) (*protos.NodeGroupNodesResponse, error) {
	g, err := s.group(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err, false)
	}
	instances, err := g.Nodes(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	resp := &protos.NodeGroupNodesResponse{Instances: make([]*protos.Instance, 0, len(instances))}
	for _, in := range instances {
		if in.Id == "" {
			// CA would treat an empty id as an unregistered node and delete it.
			klog.InfoS("Skipping instance without id", "nodeGroup", req.GetId())
			continue
		}
		resp.Instances = append(resp.Instances, pbInstance(in))
	}
	return resp, nil
}

func pbInstance(in cloudprovider.Instance) *protos.Instance {
	out := &protos.Instance{Id: in.Id}
	if in.Status == nil || in.Status.State == 0 {
		return out
	}
	out.Status = &protos.InstanceStatus{InstanceState: protos.InstanceStatus_InstanceState(in.Status.State)}
	if e := in.Status.ErrorInfo; e != nil && e.ErrorCode != "" {
		out.Status.ErrorInfo = &protos.InstanceErrorInfo{
			ErrorCode:          e.ErrorCode,
			ErrorMessage:       e.ErrorMessage,
			InstanceErrorClass: int32(e.ErrorClass),
		}
	}
	return out
}

// NodeGroupTemplateNodeInfo implements the optional NodeGroupTemplateNodeInfo
// RPC. Without a template it answers Unimplemented, never OK with empty bytes,
// which CA would cache as a nil template and later dereference.
func (s *Server) NodeGroupTemplateNodeInfo(ctx context.Context, req *protos.NodeGroupTemplateNodeInfoRequest) (*protos.NodeGroupTemplateNodeInfoResponse, error) {
	g, err := s.group(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err, true)
	}
	node, err := g.TemplateNodeInfo(ctx)
	if err != nil {
		if errors.Is(err, cloudprovider.ErrNodeGroupNotFound) || ctx.Err() != nil {
			return nil, toStatus(err, true)
		}
		// A template that cannot be built costs only this group its scale
		// from zero: Unimplemented is what CA reads as "no template". The
		// group is reported by its decoration (reporting.Provider).
		return nil, status.Error(codes.Unimplemented, err.Error())
	}
	if node == nil {
		return nil, status.Errorf(codes.Unimplemented, "node group %s has no template", req.GetId())
	}
	b, err := node.Marshal()
	if err != nil {
		return nil, toStatus(fmt.Errorf("marshal template of %s: %w", req.GetId(), err), true)
	}
	if len(b) == 0 {
		return nil, status.Errorf(codes.Unimplemented, "node group %s has an empty template", req.GetId())
	}
	return templateResponse(b), nil
}

// NodeGroupGetOptions implements the optional NodeGroupGetOptions RPC. A
// returned option set replaces all of CA's flags for the group (and zeroes two
// options the protocol cannot carry), so it answers Unimplemented unless the
// group really has overrides, and then starts from the request's defaults.
func (s *Server) NodeGroupGetOptions(ctx context.Context, req *protos.NodeGroupAutoscalingOptionsRequest) (*protos.NodeGroupAutoscalingOptionsResponse, error) {
	s.noteGeneration(ctx, optionsGeneration(req.GetDefaults()), "NodeGroupAutoscalingOptionsRequest")
	g, err := s.group(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err, true)
	}
	defaults := fromPBOptions(req.GetDefaults())
	opts, err := g.GetOptions(ctx, defaults)
	if err != nil {
		return nil, toStatus(err, true)
	}
	if opts == nil {
		return nil, status.Errorf(codes.Unimplemented, "node group %s has no option overrides", req.GetId())
	}
	return &protos.NodeGroupAutoscalingOptionsResponse{NodeGroupAutoscalingOptions: toPBOptions(*opts)}, nil
}
