package inspect

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

func TestProbe(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()
	service := protos.CloudProvider_ServiceDesc.ServiceName
	probe := func(args ...string) (int, string) {
		var out, errb strings.Builder
		code := ProbeMain(context.Background(), args, &out, &errb)
		return code, out.String() + errb.String()
	}

	hs.SetServingStatus(service, healthpb.HealthCheckResponse_NOT_SERVING)
	if code, msg := probe("--address", lis.Addr().String()); code != 1 || !strings.Contains(msg, "NOT_SERVING") {
		t.Fatalf("not serving: code %d %q", code, msg)
	}
	hs.SetServingStatus(service, healthpb.HealthCheckResponse_SERVING)
	if code, msg := probe("--address", lis.Addr().String()); code != 0 || !strings.Contains(msg, "is SERVING") {
		t.Fatalf("serving: code %d %q", code, msg)
	}
	if code, _ := probe("--address", "127.0.0.1:1"); code != 1 {
		t.Fatalf("unreachable server: code %d, want 1", code)
	}
	if code, _ := probe("--address", "nope"); code != 2 {
		t.Fatalf("bad address: code %d, want 2", code)
	}
}
