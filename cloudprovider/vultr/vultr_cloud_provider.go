// Package vultr serves Vultr Kubernetes Engine (VKE) node pools to the
// upstream Cluster Autoscaler through its externalgrpc cloud provider.
//
// A node group is a VKE node pool flagged auto_scaler (bounds from the API,
// min clamped to VKE's floor of one node), or a pool named in --nodes (bounds
// from the flag). Every read is served from a snapshot that Refresh takes with
// one paginated node-pool list; mutations update the snapshot before they
// return. The Vultr API client lives in vultrapi, and a fake of the API, used
// by the tests and by --simulate, in vultrapi/fakeapi.
package vultr

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

func init() {
	registry.RegisterCloudProvider(ProviderName, registry.Registration{
		Build:       Build,
		Simulate:    Simulate,
		CheckConfig: CheckConfig,
		RateLimit:   DefaultRateLimit,
		Endpoint:    endpoint,
	})
}

// DefaultRateLimit is Vultr's documented API limit: 30 requests per second
// per source IP (https://www.vultr.com/api/, "Rate limit").
var DefaultRateLimit = cloudhttp.RateLimit{Rate: 30, Burst: 30}

// cloudProvider is the Vultr implementation of cloudprovider.CloudProvider.
type cloudProvider struct {
	registry.Answers
	m *manager
}

var _ cloudprovider.CloudProvider = (*cloudProvider)(nil)

// CheckConfig validates the cloud config and --nodes without calling Vultr.
func CheckConfig(opts registry.BuildOptions) error {
	_, _, err := loadOptions(opts)
	return err
}

func loadOptions(opts registry.BuildOptions) (*Config, []groupconfig.NodeGroupSpec, error) {
	cfg, err := LoadConfig(opts.CloudConfig, opts.Env())
	if err != nil {
		return nil, nil, err
	}
	specs, err := groupconfig.ParseNodeGroupSpecs(opts.NodeGroupSpecs)
	if err != nil {
		return nil, nil, fmt.Errorf("vultr: %w", err)
	}
	if len(opts.NodeGroupAutoDiscoverySpecs) > 0 {
		klog.InfoS("Ignoring --node-group-auto-discovery: Vultr pools are discovered by their auto_scaler flag",
			"provider", ProviderName)
	}
	return cfg, specs, nil
}

// Build reads the cloud config and builds the Vultr client. It makes no cloud
// call: the server takes the first snapshot (and retries it) before serving.
func Build(ctx context.Context, opts registry.BuildOptions) (cloudprovider.CloudProvider, error) {
	cfg, specs, err := loadOptions(opts)
	if err != nil {
		return nil, err
	}
	return newProvider(ctx, cfg, specs, opts, cloudhttp.RetryOptions{Sleep: opts.RetrySleep}, opts.Now)
}

// newProvider is Build without the file and environment reading; tests and
// --simulate call it directly.
func newProvider(ctx context.Context, cfg *Config, specs []groupconfig.NodeGroupSpec, opts registry.BuildOptions,
	retry cloudhttp.RetryOptions, now func() time.Time) (*cloudProvider, error) {
	client, err := newAPIClient(cfg, opts, retry)
	if err != nil {
		return nil, fmt.Errorf("vultr: %w", err)
	}
	p := &cloudProvider{m: newManager(client, cfg.ClusterID, specs, opts.Guard, now)}
	p.Answers = registry.Answers{ProviderName: ProviderName, GPULabelKey: LabelGPUType,
		Prices: groupconfig.Prices{Sheet: opts.PriceSheet, CloudPrice: p.m.planPrice, ProviderIDPrefix: ProviderIDPrefix, Snapshot: p.m}}
	opts.WireLookups(&p.m.unknownNodes, &p.m.specWatch)
	p.m.identityMismatch = opts.NodeIdentityMismatch
	klog.InfoS("Vultr provider configured", "provider", ProviderName, "config", cfg.String(), "nodeSpecs", len(specs))
	return p, nil
}

// NodeGroups implements cloudprovider.CloudProvider.
func (p *cloudProvider) NodeGroups(context.Context) ([]cloudprovider.NodeGroup, error) {
	return cloudprovider.AsNodeGroups(p.m.nodeGroups()), nil
}

// NodeGroup implements cloudprovider.CloudProvider.
func (p *cloudProvider) NodeGroup(_ context.Context, id string) (cloudprovider.NodeGroup, error) {
	g, ok := p.m.group(id)
	return cloudprovider.FoundNodeGroup(id, g, ok)
}

// NodeGroupForNode implements cloudprovider.CloudProvider by providerID; the
// VKE node-id label is read only for a node without one (CA's fake nodes
// carry only the providerID, and a node can write its own labels, so a label
// never overrules it). Nodes of pools we do not manage, and nodes of other
// clouds, belong to no group; a Vultr node the snapshot lacks is looked up
// by the shared rule (refresh.UnknownNodeLookup): one pool listing
// answers for every such node, at most once per refresh.
func (p *cloudProvider) NodeGroupForNode(ctx context.Context, node *corev1.Node) (cloudprovider.NodeGroup, error) {
	if node == nil {
		return nil, nil
	}
	id := nodeIDFromProviderID(node.Spec.ProviderID)
	if id == "" && node.Spec.ProviderID == "" {
		id = node.Labels[LabelNodeID]
	}
	if id == "" {
		return nil, nil
	}
	return refresh.ResolveNodeGroup(ctx, &p.m.unknownNodes, id, p.m.indexed), nil
}

// GetAvailableGPUTypes implements cloudprovider.CloudProvider. Before the
// plans were ever loaded it fails, because CA caches the first successful
// answer for the life of its process.
func (p *cloudProvider) GetAvailableGPUTypes(context.Context) (map[string]struct{}, error) {
	types, ok := p.m.gpuTypes()
	if !ok {
		return nil, cloudprovider.Errorf(cloudprovider.ErrUnavailable, "vultr plans not loaded yet")
	}
	return types, nil
}

// Refresh implements cloudprovider.CloudProvider.
func (p *cloudProvider) Refresh(ctx context.Context) error {
	if err := p.m.Refresh(ctx); err != nil {
		return err
	}
	p.m.unknownNodes.Refreshed()
	return nil
}

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
