package vultr

import (
	"context"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// vultrClient holds only the Vultr calls the manager makes; *vultrapi.Client
// implements it, and tests may substitute a stateful fake.
type vultrClient interface {
	GetCluster(ctx context.Context, clusterID string) (*vultrapi.Cluster, error)
	ListNodePools(ctx context.Context, clusterID string) ([]vultrapi.NodePool, error)
	GetNodePool(ctx context.Context, clusterID, poolID string) (*vultrapi.NodePool, error)
	SetNodePoolQuantity(ctx context.Context, clusterID, poolID string, quantity int) (*vultrapi.NodePool, error)
	DeleteNode(ctx context.Context, clusterID, poolID, nodeID string) error
	ListPlans(ctx context.Context) ([]vultrapi.Plan, error)
	ListMetalPlans(ctx context.Context) ([]vultrapi.MetalPlan, error)
}

var _ vultrClient = (*vultrapi.Client)(nil)

// newAPIClient builds the Vultr client on the shared HTTP stack
// (cloudhttp.NewHTTPClient), so the lifetime, retries, rate limit,
// instrumentation and User-Agent apply to every call.
func newAPIClient(cfg *Config, opts registry.BuildOptions, retry cloudhttp.RetryOptions) (*vultrapi.Client, error) {
	return vultrapi.New(vultrapi.Options{
		BaseURL: cfg.apiURL(),
		Build:   opts,
		Token:   cfg.TokenSource(),
		Retry:   retry,
	})
}
