// Package grpctest serves a provider through the real externalgrpc server on a
// loopback listener for tests, and returns a client generated from our proto,
// so provider tests talk to it exactly as CA does.
package grpctest

import (
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// Serve starts the externalgrpc server for p (with the production interceptor)
// on 127.0.0.1:0 and returns a plaintext client; both stop when the test ends.
func Serve(t testing.TB, p cloudprovider.CloudProvider, opts externalgrpc.Options) protos.CloudProviderClient {
	t.Helper()
	return protos.NewCloudProviderClient(ServeConn(t, p, opts))
}

// ServeConn is Serve returning the connection, for clients of another
// generation of the protocol (see package legacyca) to share it.
func ServeConn(t testing.TB, p cloudprovider.CloudProvider, opts externalgrpc.Options) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(externalgrpc.UnaryInterceptor(opts.Metrics)))
	protos.RegisterCloudProviderServer(srv, externalgrpc.NewServer(p, opts))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
