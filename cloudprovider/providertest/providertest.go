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
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// env is one provider bound to a freshly seeded fake of its cloud.
type env interface {
	provider() cloudprovider.CloudProvider
	// kitEnv is the kit's view of the environment.
	kitEnv(t *testing.T) *cloudprovidertest.Env
}

// harness is the kit's Harness over the environments newEnv builds from
// the kit's options and --nodes specs (the harness's own when nil).
func harness[E env](newEnv func(t *testing.T, opts registry.BuildOptions, specs []string) (E, error), notApplicable map[cloudprovidertest.Hook]string) cloudprovidertest.Harness {
	return cloudprovidertest.Harness{
		Serve:     serve,
		ServeConn: serveConn,
		StartWithSpecs: func(t *testing.T, specs []string) error {
			e, err := newEnv(t, registry.BuildOptions{}, specs)
			if err != nil {
				return err
			}
			return start(e.provider())
		},
		NewEnvWithOptions: func(t *testing.T, opts registry.BuildOptions) *cloudprovidertest.Env {
			e, err := newEnv(t, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			return e.kitEnv(t)
		},
		NotApplicable: notApplicable,
	}
}

// examplePolicy is the policy a deployment example ships, as load reads it.
func examplePolicy(t *testing.T, load func() (*fakecloud.Permissions, error)) *fakecloud.Permissions {
	t.Helper()
	p, err := load()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serve is Harness.Serve: p through the real externalgrpc server.
func serve(t testing.TB, p cloudprovider.CloudProvider) protos.CloudProviderClient {
	return grpctest.Serve(t, p, externalgrpc.Options{})
}

// serveConn is Harness.ServeConn: serve returning the connection, for both
// CA generations.
func serveConn(t testing.TB, p cloudprovider.CloudProvider) grpc.ClientConnInterface {
	return grpctest.ServeConn(t, p, externalgrpc.Options{})
}

// start is what Harness.StartWithSpecs returns for a provider built
// without error: the error of its first Refresh.
func start(p cloudprovider.CloudProvider) error {
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
