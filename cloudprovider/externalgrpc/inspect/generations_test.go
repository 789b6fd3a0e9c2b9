//lint:file-ignore SA1019 these tests emulate servers of either generation, deprecated fields included.

package inspect

import (
	"context"
	"net"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// oneGeneration turns our server into one that knows a single generation of
// the protocol: requests lose the other generation's fields before the
// server reads them, answers lose them before they are sent. legacy selects
// a server built on CA 1.34's proto, otherwise one built on CA 1.35's.
func oneGeneration(legacy bool) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		switch r := req.(type) {
		case *protos.PricingNodePriceRequest:
			if legacy {
				r.StartTimestamp, r.EndTimestamp = nil, nil
			} else {
				r.StartTime, r.EndTime = nil, nil
			}
		case *protos.NodeGroupAutoscalingOptionsRequest:
			stripOptions(r.GetDefaults(), legacy)
		}
		resp, err := handler(ctx, req)
		if err != nil {
			return resp, err
		}
		switch r := resp.(type) {
		case *protos.NodeGroupTemplateNodeInfoResponse:
			if legacy {
				r.NodeBytes = nil
			} else {
				r.NodeInfo = nil
			}
		case *protos.NodeGroupAutoscalingOptionsResponse:
			stripOptions(r.GetNodeGroupAutoscalingOptions(), legacy)
		}
		return resp, err
	}
}

func stripOptions(o *protos.NodeGroupAutoscalingOptions, legacy bool) {
	if o == nil {
		return
	}
	if legacy {
		o.ScaleDownUnneededDuration, o.ScaleDownUnreadyDuration, o.MaxNodeProvisionDuration = nil, nil, nil
	} else {
		o.ScaleDownUnneededTime, o.ScaleDownUnreadyTime, o.MaxNodeProvisionTime = nil, nil, nil
	}
}

// TestInspectReadsEitherGeneration runs inspect against a server of each
// generation and against ours (both): the report is the same, and the
// compatibility warnings name the generation of CA a server would break.
func TestInspectReadsEitherGeneration(t *testing.T) {
	cases := []struct {
		name        string
		interceptor grpc.UnaryServerInterceptor
		warning     string // in every compatibility warning; "" = none expected
	}{
		{"server of CA 1.34 and older", oneGeneration(true), "CA 1.35 and later"},
		{"server of CA 1.35 and later", oneGeneration(false), "CA 1.34.1 and older"},
		{"our server (both)", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var opts []grpc.ServerOption
			if tc.interceptor != nil {
				opts = append(opts, grpc.UnaryInterceptor(tc.interceptor))
			}
			gs := grpc.NewServer(opts...)
			protos.RegisterCloudProviderServer(gs, externalgrpc.NewServer(newFakeProvider(), externalgrpc.Options{}))
			go func() { _ = gs.Serve(lis) }()
			t.Cleanup(gs.Stop)

			code, out, stderr := inspectRun(t, "--address", lis.Addr().String(), "-o", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r := decodeResult(t, out).Report
			w, g := r.Groups[0], r.Groups[1]
			if w.Template == nil || w.Template.Capacity["cpu"] != "4" {
				t.Fatalf("workers template %+v (%s)", w.Template, w.TemplateNote)
			}
			if w.PricePerHour == nil || *w.PricePerHour != 0.25 {
				t.Fatalf("workers price %v (%s): the window did not reach the server", w.PricePerHour, w.PriceNote)
			}
			want := &Options{ScaleDownUtilizationThreshold: 0.2, ScaleDownGpuUtilizationThreshold: 0.3, ZeroOrMaxNodeScaling: true,
				ScaleDownUnneededTime: "10m0s", ScaleDownUnreadyTime: "20m0s", MaxNodeProvisionTime: "15m0s",
				Overrides: []string{"scaledownutilizationthreshold=0.2 (default 0.5)", "scaledowngpuutilizationthreshold=0.3 (default 0.5)", "zeroormaxnodescaling=true (default false)"}}
			if !reflect.DeepEqual(g.Options, want) {
				t.Fatalf("gpu options %+v, want %+v", g.Options, want)
			}
			warnings := append(append([]string(nil), w.Compatibility...), g.Compatibility...)
			if tc.warning == "" {
				if len(warnings) != 0 {
					t.Fatalf("warnings against a server of both generations: %v", warnings)
				}
				return
			}
			if len(w.Compatibility) == 0 || len(g.Compatibility) == 0 {
				t.Fatalf("want a template and an options warning, got %v / %v", w.Compatibility, g.Compatibility)
			}
			for _, s := range warnings {
				if !strings.Contains(s, tc.warning) {
					t.Errorf("warning %q does not name %s", s, tc.warning)
				}
			}
			code, text, _ := inspectRun(t, "--address", lis.Addr().String())
			if code != 0 || !strings.Contains(text, "WARNING "+w.Compatibility[0]) {
				t.Fatalf("text report (exit %d) lacks the warning:\n%s", code, text)
			}
		})
	}
}
