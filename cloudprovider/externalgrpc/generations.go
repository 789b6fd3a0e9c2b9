//lint:file-ignore SA1019 this file is the one place that reads and writes the deprecated fields CA 1.34 and older use.

package externalgrpc

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// Two generations of CA use the server (see the header of
// externalgrpc.proto). Answers carry both sets of fields; requests are read
// from the current fields first and the legacy ones second, so CA 1.29 to
// 1.36 all work without configuration.

// noteGeneration counts a request whose fields show the CA generation, and
// logs the first one of each generation, so an operator can see which CA
// talks to the server. gen "" (a request with neither) and requests from
// our own tools (inspect) are ignored.
func (s *Server) noteGeneration(ctx context.Context, gen metrics.ProtocolGeneration, message string) {
	if gen == "" || ClientOf(ctx) != clientCA {
		return
	}
	s.opts.Metrics.ObserveProtocolGeneration(gen)
	seen := &s.seenCurrent
	hint := "CA 1.34.2 or later"
	if gen == metrics.GenerationLegacy {
		seen, hint = &s.seenLegacy, "CA 1.34.1 or older; both generations are answered"
	}
	if !seen.Load() && seen.CompareAndSwap(false, true) {
		klog.InfoS("First request from a Cluster Autoscaler of this protocol generation", "generation", string(gen), "message", message, "ca", hint)
	}
}

// generationOf classifies a request by which of its version-specific fields
// are set: any current field makes it current (CA 1.34.2+ fills both).
func generationOf(current, legacy bool) metrics.ProtocolGeneration {
	switch {
	case current:
		return metrics.GenerationCurrent
	case legacy:
		return metrics.GenerationLegacy
	}
	return ""
}

func nodePriceGeneration(req *protos.PricingNodePriceRequest) metrics.ProtocolGeneration {
	return generationOf(req.GetStartTimestamp() != nil || req.GetEndTimestamp() != nil,
		req.GetStartTime() != nil || req.GetEndTime() != nil)
}

func podPriceGeneration(req *protos.PricingPodPriceRequest) metrics.ProtocolGeneration {
	return generationOf(len(req.GetPodBytes()) > 0 || req.GetStartTimestamp() != nil || req.GetEndTimestamp() != nil,
		len(req.GetPod()) > 0 || req.GetStartTime() != nil || req.GetEndTime() != nil)
}

func optionsGeneration(o *protos.NodeGroupAutoscalingOptions) metrics.ProtocolGeneration {
	return generationOf(o.GetScaleDownUnneededDuration() != nil || o.GetScaleDownUnreadyDuration() != nil || o.GetMaxNodeProvisionDuration() != nil,
		o.GetScaleDownUnneededTime() != nil || o.GetScaleDownUnreadyTime() != nil || o.GetMaxNodeProvisionTime() != nil)
}

// requestTime reads one end of a price window: the current field, else the
// legacy one; zero when neither is set.
func requestTime(current *timestamppb.Timestamp, legacy *protos.MetaV1Time) time.Time {
	switch {
	case current != nil:
		return current.AsTime()
	case legacy != nil:
		return time.Unix(legacy.GetSeconds(), int64(legacy.GetNanos())).UTC()
	}
	return time.Time{}
}

func nodePriceWindow(req *protos.PricingNodePriceRequest) (start, end time.Time) {
	return requestTime(req.GetStartTimestamp(), req.GetStartTime()), requestTime(req.GetEndTimestamp(), req.GetEndTime())
}

func podPriceWindow(req *protos.PricingPodPriceRequest) (start, end time.Time) {
	return requestTime(req.GetStartTimestamp(), req.GetStartTime()), requestTime(req.GetEndTimestamp(), req.GetEndTime())
}

// podPriceBytes is the request's Pod: pod_bytes, else the legacy pod field
// (the same (*v1.Pod).Marshal() bytes on the wire).
func podPriceBytes(req *protos.PricingPodPriceRequest) []byte {
	if b := req.GetPodBytes(); len(b) > 0 {
		return b
	}
	return req.GetPod()
}

// requestDuration reads one option duration: the current field, else the
// legacy one, else 0.
func requestDuration(current *durationpb.Duration, legacy *protos.MetaV1Duration) time.Duration {
	switch {
	case current != nil:
		return current.AsDuration()
	case legacy != nil:
		return time.Duration(legacy.GetDuration())
	}
	return 0
}

func fromPBOptions(o *protos.NodeGroupAutoscalingOptions) cloudprovider.NodeGroupAutoscalingOptions {
	return cloudprovider.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold:    o.GetScaleDownUtilizationThreshold(),
		ScaleDownGpuUtilizationThreshold: o.GetScaleDownGpuUtilizationThreshold(),
		ZeroOrMaxNodeScaling:             o.GetZeroOrMaxNodeScaling(),
		IgnoreDaemonSetsUtilization:      o.GetIgnoreDaemonSetsUtilization(),
		ScaleDownUnneededTime:            requestDuration(o.GetScaleDownUnneededDuration(), o.GetScaleDownUnneededTime()),
		ScaleDownUnreadyTime:             requestDuration(o.GetScaleDownUnreadyDuration(), o.GetScaleDownUnreadyTime()),
		MaxNodeProvisionTime:             requestDuration(o.GetMaxNodeProvisionDuration(), o.GetMaxNodeProvisionTime()),
	}
}

func legacyDuration(d time.Duration) *protos.MetaV1Duration {
	return &protos.MetaV1Duration{Duration: proto.Int64(int64(d))}
}

// toPBOptions encodes options for every CA: CA 1.34.1 and older dereference
// the legacy durations of any options they receive, so those are always set.
func toPBOptions(o cloudprovider.NodeGroupAutoscalingOptions) *protos.NodeGroupAutoscalingOptions {
	return &protos.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold:    o.ScaleDownUtilizationThreshold,
		ScaleDownGpuUtilizationThreshold: o.ScaleDownGpuUtilizationThreshold,
		ZeroOrMaxNodeScaling:             o.ZeroOrMaxNodeScaling,
		IgnoreDaemonSetsUtilization:      o.IgnoreDaemonSetsUtilization,
		ScaleDownUnneededDuration:        durationpb.New(o.ScaleDownUnneededTime),
		ScaleDownUnreadyDuration:         durationpb.New(o.ScaleDownUnreadyTime),
		MaxNodeProvisionDuration:         durationpb.New(o.MaxNodeProvisionTime),
		ScaleDownUnneededTime:            legacyDuration(o.ScaleDownUnneededTime),
		ScaleDownUnreadyTime:             legacyDuration(o.ScaleDownUnreadyTime),
		MaxNodeProvisionTime:             legacyDuration(o.MaxNodeProvisionTime),
	}
}

// templateResponse carries the template Node in both fields: CA 1.34.1 and
// older read only nodeInfo and, answered OK without it, crash on the missing
// template.
func templateResponse(nodeBytes []byte) *protos.NodeGroupTemplateNodeInfoResponse {
	return &protos.NodeGroupTemplateNodeInfoResponse{NodeInfo: nodeBytes, NodeBytes: nodeBytes}
}
