package cloudprovidertest

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

func TestInMemoryProviderConforms(t *testing.T) {
	t.Parallel()
	Run(t, Harness{
		NewEnv: func(t *testing.T) *Env {
			return NewInMemoryEnv(
				CloudGroup{ID: "pool-a", Min: 1, Max: 10, Running: 3},
				CloudGroup{ID: "pool-b", Min: 0, Max: 5, Running: 1, NoTemplate: true, Options: true},
			)
		},
		Serve: func(t testing.TB, p cloudprovider.CloudProvider) protos.CloudProviderClient {
			return grpctest.Serve(t, p, externalgrpc.Options{})
		},
		ServeConn: func(t testing.TB, p cloudprovider.CloudProvider) grpc.ClientConnInterface {
			return grpctest.ServeConn(t, p, externalgrpc.Options{})
		},
		NotApplicable: InMemoryNotApplicable(),
	})
}
