package exoscale

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

func init() {
	registry.RegisterCloudProvider(ProviderName, registry.Registration{
		Build:    Build,
		Simulate: Simulate,
		CheckConfig: func(opts registry.BuildOptions) error {
			_, err := LoadConfig(opts, opts.Env())
			return err
		},
		RateLimit: DefaultRateLimit,
		Location:  zoneLocation,
		Endpoint:  endpoint,
	})
}

// DefaultRateLimit is the client-side budget for the Exoscale v2 API, which
// publishes no limit: 10 requests per second is a conservative guess.
var DefaultRateLimit = cloudhttp.RateLimit{Rate: 10, Burst: 10}

// Build builds the provider from the environment without a cloud call.
func Build(_ context.Context, opts registry.BuildOptions) (cloudprovider.CloudProvider, error) {
	cfg, err := LoadConfig(opts, opts.Env())
	if err != nil {
		return nil, err
	}
	p, err := newProvider(cfg, providerDeps{build: opts, now: opts.Now, retry: cloudhttp.RetryOptions{Sleep: opts.RetrySleep}})
	if err != nil {
		return nil, err
	}
	p.useOptions(opts)
	klog.InfoS("Exoscale provider configured", "provider", ProviderName, "config", cfg.String())
	return p, nil
}

// useOptions applies the staleness bound, the price sheet and the metric hooks.
func (p *cloudProvider) useOptions(opts registry.BuildOptions) {
	p.m.fresh = refresh.NewFreshness(opts.MaxStalenessOrDefault(), p.m.now)
	opts.WireLookups(&p.m.unknownNodes, &p.m.specWatch)
	p.Prices.Sheet = opts.PriceSheet
}

// providerDeps are the parts tests replace.
type providerDeps struct {
	build registry.BuildOptions
	now   func() time.Time
	retry cloudhttp.RetryOptions
}

// cloudProvider implements cloudprovider.CloudProvider.
type cloudProvider struct {
	registry.Answers
	cfg Config
	m   *manager
}

func newProvider(cfg Config, deps providerDeps) (*cloudProvider, error) {
	client, err := exoapi.New(exoapi.Options{
		APIKey: cfg.apiKey(), APISecret: cfg.apiSecret(), Endpoint: cfg.APIEndpoint(),
		Build: deps.build, Retry: deps.retry,
	})
	if err != nil {
		return nil, fmt.Errorf("exoscale client: %w", err)
	}
	p := &cloudProvider{cfg: cfg, m: newManager(cfg, client, deps.now, deps.build.Guard)}
	p.Answers = registry.Answers{ProviderName: ProviderName, GPULabelKey: LabelGPUType,
		Prices: groupconfig.Prices{ProviderIDPrefix: ProviderIDPrefix, Snapshot: p.m}}
	return p, nil
}

// String never shows credentials.
func (p *cloudProvider) String() string { return "exoscale provider: " + p.cfg.String() }

// GoString never shows credentials.
func (p *cloudProvider) GoString() string { return p.String() }

// NodeGroups implements cloudprovider.CloudProvider.
func (p *cloudProvider) NodeGroups(context.Context) ([]cloudprovider.NodeGroup, error) {
	return cloudprovider.AsNodeGroups(p.m.nodeGroups()), nil
}

// NodeGroup implements cloudprovider.CloudProvider.
func (p *cloudProvider) NodeGroup(_ context.Context, id string) (cloudprovider.NodeGroup, error) {
	g := p.m.group(id)
	return cloudprovider.FoundNodeGroup(id, g, g != nil)
}

// NodeGroupForNode implements cloudprovider.CloudProvider by providerID
// only: CA's placeholder nodes carry nothing else.
func (p *cloudProvider) NodeGroupForNode(ctx context.Context, node *corev1.Node) (cloudprovider.NodeGroup, error) {
	if node == nil || node.Spec.ProviderID == "" {
		return nil, nil
	}
	pid := node.Spec.ProviderID
	if rest, ok := strings.CutPrefix(pid, placeholderPrefix); ok {
		groupID, _, _ := strings.Cut(rest, "/")
		if g := p.m.group(groupID); g != nil {
			return g, nil
		}
		return nil, nil
	}
	id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, pid)
	if err != nil {
		return nil, nil
	}
	return p.m.nodeGroupForInstance(ctx, id), nil
}

// GetAvailableGPUTypes implements cloudprovider.CloudProvider.
func (p *cloudProvider) GetAvailableGPUTypes(context.Context) (map[string]struct{}, error) {
	return p.m.gpuTypes(), nil
}

// Refresh implements cloudprovider.CloudProvider.
func (p *cloudProvider) Refresh(ctx context.Context) error { return p.m.refresh(ctx, false) }
