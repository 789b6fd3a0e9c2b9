package externalgrpc

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// The optional pricing RPCs, for CA's price expander.

func checkWindow(start, end time.Time) error {
	if start.IsZero() || end.IsZero() || end.Before(start) {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "price window [%s, %s] is incomplete or reversed", start, end)
	}
	return nil
}

// PricingNodePrice implements the optional PricingNodePrice RPC.
func (s *Server) PricingNodePrice(ctx context.Context, req *protos.PricingNodePriceRequest) (*protos.PricingNodePriceResponse, error) {
	s.noteGeneration(ctx, nodePriceGeneration(req), "PricingNodePriceRequest")
	if err := checkNode(req.GetNode()); err != nil {
		return nil, toStatus(err, true)
	}
	start, end := nodePriceWindow(req)
	if err := checkWindow(start, end); err != nil {
		return nil, toStatus(err, true)
	}
	model, err := s.provider.Pricing(ctx)
	if err != nil {
		return nil, toStatus(err, true)
	}
	price, err := model.NodePrice(ctx, apiNode(req.GetNode()), start, end)
	if err != nil {
		return nil, toStatus(err, true)
	}
	return &protos.PricingNodePriceResponse{Price: price}, nil
}

// PricingPodPrice implements the optional PricingPodPrice RPC.
func (s *Server) PricingPodPrice(ctx context.Context, req *protos.PricingPodPriceRequest) (*protos.PricingPodPriceResponse, error) {
	s.noteGeneration(ctx, podPriceGeneration(req), "PricingPodPriceRequest")
	pod := &corev1.Pod{}
	if err := pod.Unmarshal(podPriceBytes(req)); err != nil {
		return nil, toStatus(cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "pod_bytes (or the legacy pod) is not a protobuf core/v1 Pod: %v", err), true)
	}
	start, end := podPriceWindow(req)
	if err := checkWindow(start, end); err != nil {
		return nil, toStatus(err, true)
	}
	model, err := s.provider.Pricing(ctx)
	if err != nil {
		return nil, toStatus(err, true)
	}
	price, err := model.PodPrice(ctx, pod, start, end)
	if err != nil {
		return nil, toStatus(err, true)
	}
	return &protos.PricingPodPriceResponse{Price: price}, nil
}
