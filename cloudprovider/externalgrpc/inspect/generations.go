//lint:file-ignore SA1019 this file is where inspect reads and writes the deprecated fields of CA 1.34 and older.

package inspect

import (
	"bytes"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// inspect works against any externalgrpc server, whichever CA generation its
// proto follows (see externalgrpc.proto): requests carry both generations, as
// CA 1.34.2-1.34.x sends them, and answers are read from either, the current
// fields first. What one generation of CA would miss is reported under
// Group.Compatibility.

// caDefaults are the defaults CA sends with NodeGroupGetOptions when run with
// its default flags (--scale-down-utilization-threshold=0.5 and so on).
func caDefaults() *protos.NodeGroupAutoscalingOptions {
	unneeded, unready, provision := 10*time.Minute, 20*time.Minute, 15*time.Minute
	return &protos.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold:    0.5,
		ScaleDownGpuUtilizationThreshold: 0.5,
		ScaleDownUnneededDuration:        durationpb.New(unneeded),
		ScaleDownUnreadyDuration:         durationpb.New(unready),
		MaxNodeProvisionDuration:         durationpb.New(provision),
		ScaleDownUnneededTime:            legacyDuration(unneeded),
		ScaleDownUnreadyTime:             legacyDuration(unready),
		MaxNodeProvisionTime:             legacyDuration(provision),
	}
}

func legacyDuration(d time.Duration) *protos.MetaV1Duration {
	return &protos.MetaV1Duration{Duration: proto.Int64(int64(d))}
}

func legacyTime(t time.Time) *protos.MetaV1Time {
	return &protos.MetaV1Time{Seconds: proto.Int64(t.Unix()), Nanos: proto.Int32(int32(t.Nanosecond()))}
}

// nodePriceRequest asks the price of node over [start, end) in both generations.
func nodePriceRequest(node *protos.ExternalGrpcNode, start, end time.Time) *protos.PricingNodePriceRequest {
	return &protos.PricingNodePriceRequest{
		Node:           node,
		StartTimestamp: timestamppb.New(start),
		EndTimestamp:   timestamppb.New(end),
		StartTime:      legacyTime(start),
		EndTime:        legacyTime(end),
	}
}

// templateBytes returns the template Node of an answer: nodeBytes, else the
// legacy nodeInfo. warnings name the CA generations that would not find it.
func templateBytes(r *protos.NodeGroupTemplateNodeInfoResponse) (node []byte, warnings []string) {
	current, legacy := r.GetNodeBytes(), r.GetNodeInfo()
	switch {
	case len(current) > 0 && len(legacy) == 0:
		warnings = append(warnings, "template only in nodeBytes: CA 1.34.1 and older would get none and crash (scale from zero)")
	case len(current) == 0 && len(legacy) > 0:
		warnings = append(warnings, "template only in the legacy nodeInfo: CA 1.35 and later would get none and crash (scale from zero)")
	case len(current) > 0 && !bytes.Equal(current, legacy):
		warnings = append(warnings, "nodeBytes and nodeInfo hold different templates: CA 1.34.1 and older see another node than CA 1.34.2 and later")
	}
	if len(current) > 0 {
		return current, warnings
	}
	return legacy, warnings
}

// optionDurations reads an answer's three durations, current fields first.
// warnings name the CA generations that would read them wrong.
func optionDurations(o *protos.NodeGroupAutoscalingOptions) (unneeded, unready, provision time.Duration, warnings []string) {
	currentSet := o.GetScaleDownUnneededDuration() != nil && o.GetScaleDownUnreadyDuration() != nil && o.GetMaxNodeProvisionDuration() != nil
	legacySet := o.GetScaleDownUnneededTime() != nil && o.GetScaleDownUnreadyTime() != nil && o.GetMaxNodeProvisionTime() != nil
	if !legacySet {
		warnings = append(warnings, "options lack a legacy duration (fields 3-5): CA 1.34.1 and older would crash")
	}
	if !currentSet {
		warnings = append(warnings, "options lack a duration (fields 8-10): CA 1.35 and later would read 0")
	}
	pick := func(current *durationpb.Duration, legacy *protos.MetaV1Duration) time.Duration {
		if current != nil {
			return current.AsDuration()
		}
		return time.Duration(legacy.GetDuration())
	}
	return pick(o.GetScaleDownUnneededDuration(), o.GetScaleDownUnneededTime()),
		pick(o.GetScaleDownUnreadyDuration(), o.GetScaleDownUnreadyTime()),
		pick(o.GetMaxNodeProvisionDuration(), o.GetMaxNodeProvisionTime()),
		warnings
}
