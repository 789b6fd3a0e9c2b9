// Package providertest holds each provider's conformance harness: the
// provider built as main builds it (its registered Build, with the kit's
// options) against a freshly seeded fake of its cloud. The providers' own
// tests run the kit (cloudprovidertest) with it, and the in-tree adapter's
// tests run the kit with it through upstream's interface. It is test
// code: only tests import it.
package providertest

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// serve is Harness.Serve: p through the real externalgrpc server.
func serve(t testing.TB, p cloudprovider.CloudProvider) protos.CloudProviderClient {
	return grpctest.Serve(t, p, externalgrpc.Options{})
}

// serveConn is Harness.ServeConn: serve returning the connection, for both
// CA generations.
func serveConn(t testing.TB, p cloudprovider.CloudProvider) grpc.ClientConnInterface {
	return grpctest.ServeConn(t, p, externalgrpc.Options{})
}

// start is what Harness.StartWithSpecs returns for a provider built with
// err: the error of the construction, else of its first Refresh.
func start(p cloudprovider.CloudProvider, err error) error {
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cloudprovidertest.CallDeadline)
	defer cancel()
	return p.Refresh(ctx)
}

// listsInstance recognises a group listing that holds providerID.
func listsInstance(providerID string) func([]cloudprovider.Instance) bool {
	return func(in []cloudprovider.Instance) bool {
		for _, i := range in {
			if i.Id == providerID {
				return true
			}
		}
		return false
	}
}
