package volcengine

import (
	"context"
	"fmt"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

func init() {
	registry.RegisterCloudProvider(ProviderName, registry.Registration{
		Build:       Build,
		Simulate:    Simulate,
		CheckConfig: CheckConfig,
		RateLimit:   DefaultRateLimit,
		Location:    regionLocation,
		Warnings:    configWarnings,
		Endpoint:    endpoint,
		// Only template enrichment needs these.
		OptionalOperations: []string{
			"GET /?Action=" + volcapi.ActionDescribeSubnets,
			"GET /?Action=" + volcapi.ActionDescribeImages,
		},
	})
}

// DefaultRateLimit is the client-side budget for the OpenAPI gateway: 10
// requests per second, bursts of 10. Volcengine publishes no account limit.
var DefaultRateLimit = cloudhttp.RateLimit{Rate: 10, Burst: 10}

// cloudProvider implements cloudprovider.CloudProvider over the manager's snapshot.
type cloudProvider struct {
	registry.Answers
	m *manager
}

var _ cloudprovider.CloudProvider = (*cloudProvider)(nil)

// options is what Build and Simulate have in common.
type options struct {
	cfg       Config
	static    []groupconfig.NodeGroupSpec
	selectors []tagSelector
	// retrySleep replaces the retry transport's sleep (tests).
	retrySleep func(ctx context.Context, d time.Duration) error
	now        func() time.Time
}

// parseOptions checks all that needs no cloud call and reports every problem.
func parseOptions(opts registry.BuildOptions, getenv func(string) string) (options, error) {
	var errs []error
	cfg, err := LoadConfig(opts.CloudConfig, getenv)
	if err != nil {
		errs = append(errs, err)
	}
	static, err := groupconfig.ParseNodeGroupSpecs(opts.NodeGroupSpecs)
	if err != nil {
		errs = append(errs, err)
	}
	selectors, err := parseDiscoverySpecs(opts.NodeGroupAutoDiscoverySpecs)
	if err != nil {
		errs = append(errs, err)
	}
	if len(opts.NodeGroupSpecs) == 0 && len(opts.NodeGroupAutoDiscoverySpecs) == 0 {
		errs = append(errs, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument,
			"no node groups: give --nodes min:max:<scaling group id> or --node-group-auto-discovery=asg:tag=<key>[=<value>]"))
	}
	if err := cloudprovider.ConfigProblems(ProviderName, errs...); err != nil {
		return options{}, err
	}
	return options{cfg: cfg, static: static, selectors: selectors}, nil
}

// groupIDPattern is the form of a scaling group id.
var groupIDPattern = regexp.MustCompile(`^scg-[0-9A-Za-z][0-9A-Za-z-]*$`)

// configWarnings is the registration's Warnings: --nodes names not shaped
// like scaling group ids. Upstream asks DescribeScalingGroups for any id,
// and the first listing refuses one that names no group, so it only warns.
func configWarnings(opts registry.BuildOptions) []string {
	specs, err := groupconfig.ParseNodeGroupSpecs(opts.NodeGroupSpecs)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range specs {
		if !groupIDPattern.MatchString(s.Name) {
			out = append(out, fmt.Sprintf("--nodes %s: %q is not shaped like a scaling group id (scg- and letters or digits, as the console or DescribeScalingGroups shows it): it is looked up as given", s, s.Name))
		}
	}
	return out
}

// CheckConfig validates the configuration without contacting the cloud.
func CheckConfig(opts registry.BuildOptions) error {
	_, err := parseOptions(opts, opts.Env())
	return err
}

// Build constructs the provider; it makes no cloud call.
func Build(ctx context.Context, opts registry.BuildOptions) (cloudprovider.CloudProvider, error) {
	o, err := parseOptions(opts, opts.Env())
	if err != nil {
		return nil, err
	}
	o.retrySleep, o.now = opts.RetrySleep, opts.Now
	return build(ctx, opts, o)
}

func build(_ context.Context, opts registry.BuildOptions, o options) (*cloudProvider, error) {
	accessKey, secretKey := o.cfg.Credentials()
	client, err := volcapi.New(volcapi.Config{
		Region:     o.cfg.Region,
		AccessKey:  accessKey,
		SecretKey:  secretKey,
		Endpoint:   o.cfg.Endpoint,
		DisableSSL: o.cfg.Scheme == "http",
		// The shared stack retries, not the SDK.
		Build: opts,
		Retry: cloudhttp.RetryOptions{Sleep: o.retrySleep},
	})
	if err != nil {
		return nil, fmt.Errorf("%s provider: %w", ProviderName, err)
	}
	p := &cloudProvider{m: newManager(client, o.cfg.Region, o.static, o.selectors, opts.Guard, opts.MaxStalenessOrDefault(), o.now)}
	p.Answers = registry.Answers{ProviderName: ProviderName, GPULabelKey: GPULabel,
		Prices: groupconfig.Prices{Sheet: opts.PriceSheet, ProviderIDPrefix: ProviderIDPrefix, Snapshot: p.m}}
	opts.WireLookups(&p.m.unknownNodes, &p.m.specWatch)
	klog.InfoS("Built cloud provider", "provider", ProviderName, "config", o.cfg.String(),
		"staticGroups", len(o.static), "autoDiscovery", len(o.selectors))
	return p, nil
}

// NodeGroups implements cloudprovider.CloudProvider.
func (p *cloudProvider) NodeGroups(context.Context) ([]cloudprovider.NodeGroup, error) {
	return cloudprovider.AsNodeGroups(p.m.groupList()), nil
}

// NodeGroup implements cloudprovider.CloudProvider.
func (p *cloudProvider) NodeGroup(_ context.Context, id string) (cloudprovider.NodeGroup, error) {
	g, ok := p.m.group(id)
	return cloudprovider.FoundNodeGroup(id, g, ok)
}

// NodeGroupForNode resolves by providerID only. Instances the snapshot lacks
// share one refresh, as DescribeScalingInstances needs the group id.
func (p *cloudProvider) NodeGroupForNode(ctx context.Context, node *corev1.Node) (cloudprovider.NodeGroup, error) {
	if node == nil {
		return nil, nil
	}
	id, err := cloudprovider.ParseProviderID(ProviderIDPrefix, node.Spec.ProviderID)
	if err != nil {
		return nil, nil
	}
	return refresh.ResolveNodeGroup(ctx, &p.m.unknownNodes, id, func(id string) (*nodeGroup, bool) {
		g, _ := p.m.groupForInstance(id)
		return g, false
	}), nil
}

// GetAvailableGPUTypes returns the GPU models of the managed groups' templates.
func (p *cloudProvider) GetAvailableGPUTypes(context.Context) (map[string]struct{}, error) {
	return p.m.gpuTypes(), nil
}

// Refresh implements cloudprovider.CloudProvider.
func (p *cloudProvider) Refresh(ctx context.Context) error {
	if err := p.m.Refresh(ctx); err != nil {
		return err
	}
	p.m.unknownNodes.Refreshed()
	return nil
}
