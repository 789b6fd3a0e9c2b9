// Package legacyca is a test-only externalgrpc client with the field layout of
// Cluster Autoscaler 1.34.1 and older, so tests can check that our server
// serves such a CA: it reads only the Kubernetes-typed fields CA 1.35 removed.
// Messages are generated from legacyca.proto (hack/update-proto.sh); Client
// calls upstream's method paths.
package legacyca

import (
	"context"

	"google.golang.org/grpc"
)

// ServiceName is upstream's service, the one every CA release calls.
const ServiceName = "clusterautoscaler.cloudprovider.v1.externalgrpc.CloudProvider"

// Client calls the 15 externalgrpc RPCs with CA 1.34.1's messages.
type Client struct {
	conn grpc.ClientConnInterface
}

// NewClient returns a client over conn.
func NewClient(conn grpc.ClientConnInterface) *Client { return &Client{conn: conn} }

func call[Resp any](ctx context.Context, c *Client, method string, req any) (*Resp, error) {
	out := new(Resp)
	if err := c.conn.Invoke(ctx, "/"+ServiceName+"/"+method, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// NodeGroups calls the NodeGroups RPC.
func (c *Client) NodeGroups(ctx context.Context, req *NodeGroupsRequest) (*NodeGroupsResponse, error) {
	return call[NodeGroupsResponse](ctx, c, "NodeGroups", req)
}

// NodeGroupForNode calls the NodeGroupForNode RPC.
func (c *Client) NodeGroupForNode(ctx context.Context, req *NodeGroupForNodeRequest) (*NodeGroupForNodeResponse, error) {
	return call[NodeGroupForNodeResponse](ctx, c, "NodeGroupForNode", req)
}

// PricingNodePrice calls the PricingNodePrice RPC.
func (c *Client) PricingNodePrice(ctx context.Context, req *PricingNodePriceRequest) (*PricingNodePriceResponse, error) {
	return call[PricingNodePriceResponse](ctx, c, "PricingNodePrice", req)
}

// PricingPodPrice calls the PricingPodPrice RPC.
func (c *Client) PricingPodPrice(ctx context.Context, req *PricingPodPriceRequest) (*PricingPodPriceResponse, error) {
	return call[PricingPodPriceResponse](ctx, c, "PricingPodPrice", req)
}

// GPULabel calls the GPULabel RPC.
func (c *Client) GPULabel(ctx context.Context, req *GPULabelRequest) (*GPULabelResponse, error) {
	return call[GPULabelResponse](ctx, c, "GPULabel", req)
}

// GetAvailableGPUTypes calls the GetAvailableGPUTypes RPC.
func (c *Client) GetAvailableGPUTypes(ctx context.Context, req *GetAvailableGPUTypesRequest) (*GetAvailableGPUTypesResponse, error) {
	return call[GetAvailableGPUTypesResponse](ctx, c, "GetAvailableGPUTypes", req)
}

// Cleanup calls the Cleanup RPC.
func (c *Client) Cleanup(ctx context.Context, req *CleanupRequest) (*CleanupResponse, error) {
	return call[CleanupResponse](ctx, c, "Cleanup", req)
}

// Refresh calls the Refresh RPC.
func (c *Client) Refresh(ctx context.Context, req *RefreshRequest) (*RefreshResponse, error) {
	return call[RefreshResponse](ctx, c, "Refresh", req)
}

// NodeGroupTargetSize calls the NodeGroupTargetSize RPC.
func (c *Client) NodeGroupTargetSize(ctx context.Context, req *NodeGroupTargetSizeRequest) (*NodeGroupTargetSizeResponse, error) {
	return call[NodeGroupTargetSizeResponse](ctx, c, "NodeGroupTargetSize", req)
}

// NodeGroupIncreaseSize calls the NodeGroupIncreaseSize RPC.
func (c *Client) NodeGroupIncreaseSize(ctx context.Context, req *NodeGroupIncreaseSizeRequest) (*NodeGroupIncreaseSizeResponse, error) {
	return call[NodeGroupIncreaseSizeResponse](ctx, c, "NodeGroupIncreaseSize", req)
}

// NodeGroupDeleteNodes calls the NodeGroupDeleteNodes RPC.
func (c *Client) NodeGroupDeleteNodes(ctx context.Context, req *NodeGroupDeleteNodesRequest) (*NodeGroupDeleteNodesResponse, error) {
	return call[NodeGroupDeleteNodesResponse](ctx, c, "NodeGroupDeleteNodes", req)
}

// NodeGroupDecreaseTargetSize calls the NodeGroupDecreaseTargetSize RPC.
func (c *Client) NodeGroupDecreaseTargetSize(ctx context.Context, req *NodeGroupDecreaseTargetSizeRequest) (*NodeGroupDecreaseTargetSizeResponse, error) {
	return call[NodeGroupDecreaseTargetSizeResponse](ctx, c, "NodeGroupDecreaseTargetSize", req)
}

// NodeGroupNodes calls the NodeGroupNodes RPC.
func (c *Client) NodeGroupNodes(ctx context.Context, req *NodeGroupNodesRequest) (*NodeGroupNodesResponse, error) {
	return call[NodeGroupNodesResponse](ctx, c, "NodeGroupNodes", req)
}

// NodeGroupTemplateNodeInfo calls the NodeGroupTemplateNodeInfo RPC.
func (c *Client) NodeGroupTemplateNodeInfo(ctx context.Context, req *NodeGroupTemplateNodeInfoRequest) (*NodeGroupTemplateNodeInfoResponse, error) {
	return call[NodeGroupTemplateNodeInfoResponse](ctx, c, "NodeGroupTemplateNodeInfo", req)
}

// NodeGroupGetOptions calls the NodeGroupGetOptions RPC.
func (c *Client) NodeGroupGetOptions(ctx context.Context, req *NodeGroupAutoscalingOptionsRequest) (*NodeGroupAutoscalingOptionsResponse, error) {
	return call[NodeGroupAutoscalingOptionsResponse](ctx, c, "NodeGroupGetOptions", req)
}
