// Package vultr serves Vultr Kubernetes Engine (VKE) node pools flagged
// auto_scaler or named in --nodes to the upstream Cluster Autoscaler.
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
		Warnings:    configWarnings,
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

// Build reads the cloud config and builds the provider without a cloud call.
func Build(ctx context.Context, opts registry.BuildOptions) (cloudprovider.CloudProvider, error) {
	cfg, specs, err := loadOptions(opts)
	if err != nil {
		return nil, err
	}
	return newProvider(ctx, cfg, specs, opts, cloudhttp.RetryOptions{Sleep: opts.RetrySleep}, opts.Now)
}

// newProvider is Build after the config is read; tests and --simulate call it.
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
// node-id label counts only without one, since a node can write its labels.
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

// GetAvailableGPUTypes implements cloudprovider.CloudProvider. It fails until
// the plans are loaded, because CA keeps its first successful answer forever.
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

// newAPIClient builds the Vultr client on the shared HTTP stack.
func newAPIClient(cfg *Config, opts registry.BuildOptions, retry cloudhttp.RetryOptions) (*vultrapi.Client, error) {
	return vultrapi.New(vultrapi.Options{
		BaseURL: cfg.apiURL(),
		Build:   opts,
		Token:   cfg.TokenSource(),
		Retry:   retry,
	})
}
