package legacyca

import (
	"bytes"
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// NewTime encodes t as CA 1.34.1 does (meta.v1.Time: both fields written).
func NewTime(t time.Time) *Time {
	return &Time{Seconds: proto.Int64(t.Unix()), Nanos: proto.Int32(int32(t.Nanosecond()))}
}

// NewDuration encodes d as CA 1.34.1 does (meta.v1.Duration).
func NewDuration(d time.Duration) *Duration {
	return &Duration{Duration: proto.Int64(int64(d))}
}

// CADefaults are the GetOptions defaults CA 1.34.1 sends when run with its
// default flags: all seven fields, the durations in the legacy fields.
func CADefaults() *NodeGroupAutoscalingOptions {
	return &NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold:    0.5,
		ScaleDownGpuUtilizationThreshold: 0.5,
		ScaleDownUnneededTime:            NewDuration(10 * time.Minute),
		ScaleDownUnreadyTime:             NewDuration(20 * time.Minute),
		MaxNodeProvisionTime:             NewDuration(15 * time.Minute),
	}
}

// OptionalAnswers is what a server answered an old CA on the four optional
// RPCs for one group; the codes are OK or Unimplemented (anything else fails
// the check).
type OptionalAnswers struct {
	Group string
	// Template is the Node decoded from field 1, nil when Unimplemented.
	Template     *corev1.Node
	TemplateCode codes.Code
	// Options is the answer decoded from the legacy fields, nil when the
	// server answered Unimplemented or without options.
	Options                     *NodeGroupAutoscalingOptions
	OptionsCode                 codes.Code
	NodePrice, PodPrice         float64
	NodePriceCode, PodPriceCode codes.Code
}

// CheckOptionalRPCs asks the four optional RPCs for group the way CA 1.34.1
// and older do (legacy defaults, legacy price window, legacy pod), and checks
// what such a CA relies on: an OK template carries field 1 and it decodes to
// the same Node as field 2 (read by a CA 1.35+ client on the same
// connection); OK options carry the three legacy durations CA dereferences;
// prices come out the same as for the same request in the current layout.
// Codes other than OK and Unimplemented fail t.
func CheckOptionalRPCs(ctx context.Context, t testing.TB, conn grpc.ClientConnInterface, group string) OptionalAnswers {
	t.Helper()
	old, cur := NewClient(conn), protos.NewCloudProviderClient(conn)
	out := OptionalAnswers{Group: group}

	tmpl, err := old.NodeGroupTemplateNodeInfo(ctx, &NodeGroupTemplateNodeInfoRequest{Id: group})
	out.TemplateCode = optionalCode(t, "NodeGroupTemplateNodeInfo "+group, err)
	if err == nil {
		if len(tmpl.GetNodeInfo()) == 0 {
			t.Fatalf("template of %s: OK without nodeInfo (field 1): CA 1.34.1 would crash", group)
		}
		node := &corev1.Node{}
		if err := node.Unmarshal(tmpl.GetNodeInfo()); err != nil {
			t.Fatalf("template of %s: field 1 is not a core/v1 Node: %v", group, err)
		}
		curTmpl, err := cur.NodeGroupTemplateNodeInfo(ctx, &protos.NodeGroupTemplateNodeInfoRequest{Id: group})
		if err != nil {
			t.Fatalf("template of %s for a current CA: %v", group, err)
		}
		// Field 1 and field 2 of one answer hold the same bytes. Two answers
		// are two builds, whose condition timestamps may differ by a second,
		// so across the two calls the Node is compared without them.
		//lint:ignore SA1019 the deprecated field is what CA 1.34.1 reads.
		if !bytes.Equal(curTmpl.GetNodeBytes(), curTmpl.GetNodeInfo()) {
			t.Fatalf("template of %s: field 1 and field 2 hold different Nodes", group)
		}
		curNode := &corev1.Node{}
		if err := curNode.Unmarshal(curTmpl.GetNodeBytes()); err != nil {
			t.Fatalf("template of %s: field 2 is not a core/v1 Node: %v", group, err)
		}
		if !equality.Semantic.DeepEqual(withoutTimestamps(node), withoutTimestamps(curNode)) {
			t.Fatalf("template of %s: an old and a current CA get different Nodes", group)
		}
		out.Template = node
	}

	opts, err := old.NodeGroupGetOptions(ctx, &NodeGroupAutoscalingOptionsRequest{Id: group, Defaults: CADefaults()})
	out.OptionsCode = optionalCode(t, "NodeGroupGetOptions "+group, err)
	if o := opts.GetNodeGroupAutoscalingOptions(); err == nil && o != nil {
		if o.GetScaleDownUnneededTime() == nil || o.GetScaleDownUnreadyTime() == nil || o.GetMaxNodeProvisionTime() == nil {
			t.Fatalf("options of %s lack a legacy duration CA 1.34.1 dereferences: %v", group, o)
		}
		out.Options = o
	}

	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	end := start.Add(time.Hour)
	node := &ExternalGrpcNode{Name: "template-node-for-" + group + "-1", Labels: map[string]string{}, Annotations: map[string]string{}}
	if out.Template != nil {
		node.Labels = out.Template.Labels
	}
	np, err := old.PricingNodePrice(ctx, &PricingNodePriceRequest{Node: node, StartTime: NewTime(start), EndTime: NewTime(end)})
	out.NodePriceCode = optionalCode(t, "PricingNodePrice "+group, err)
	if err == nil {
		out.NodePrice = np.GetPrice()
		want, err := cur.PricingNodePrice(ctx, &protos.PricingNodePriceRequest{
			Node:           &protos.ExternalGrpcNode{Name: node.Name, Labels: node.Labels, Annotations: node.Annotations},
			StartTimestamp: timestamppb.New(start), EndTimestamp: timestamppb.New(end)})
		if err != nil || want.GetPrice() != out.NodePrice {
			t.Fatalf("node price of %s: %v in the legacy layout, %v (%v) in the current one", group, out.NodePrice, want.GetPrice(), err)
		}
	}

	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = "web-1", "default"
	pod.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx"}}
	podBytes, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	pp, err := old.PricingPodPrice(ctx, &PricingPodPriceRequest{Pod: podBytes, StartTime: NewTime(start), EndTime: NewTime(end)})
	out.PodPriceCode = optionalCode(t, "PricingPodPrice "+group, err)
	if err == nil {
		out.PodPrice = pp.GetPrice()
		want, err := cur.PricingPodPrice(ctx, &protos.PricingPodPriceRequest{PodBytes: podBytes,
			StartTimestamp: timestamppb.New(start), EndTimestamp: timestamppb.New(end)})
		if err != nil || want.GetPrice() != out.PodPrice {
			t.Fatalf("pod price: %v in the legacy layout, %v (%v) in the current one", out.PodPrice, want.GetPrice(), err)
		}
	}
	return out
}

// optionalCode accepts OK and Unimplemented, the two answers CA 1.29+ handles
// on the optional RPCs (Unimplemented means "not implemented": defaults, no
// scale-from-zero template, or no price for that option).
func optionalCode(t testing.TB, what string, err error) codes.Code {
	t.Helper()
	code := status.Code(err)
	if code != codes.OK && code != codes.Unimplemented {
		t.Fatalf("%s: %v, want OK or Unimplemented", what, err)
	}
	return code
}

// withoutTimestamps returns a copy of n with its condition times cleared.
func withoutTimestamps(n *corev1.Node) *corev1.Node {
	c := n.DeepCopy()
	for i := range c.Status.Conditions {
		c.Status.Conditions[i].LastHeartbeatTime = metav1.Time{}
		c.Status.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	return c
}
