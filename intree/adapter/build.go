package adapter

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	caprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider/builder"
	coreoptions "k8s.io/autoscaler/cluster-autoscaler/core/options"
	"k8s.io/client-go/informers"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// The environment variables that carry what the sidecar takes as flags
// and CA has no flag for; each has the flag's syntax and default.
const (
	EnvMaxStaleness         = "CAP_MAX_STALENESS"
	EnvPriceSheet           = "CAP_PRICE_SHEET"
	EnvCloudAPIRateLimit    = "CAP_CLOUD_API_RATE_LIMIT"
	EnvUnknownOutcomeWindow = "CAP_UNKNOWN_OUTCOME_WINDOW"
)

// Register registers our provider name with CA's builder in place of
// upstream's provider of that name; the router file's blank import of the
// per-provider package calls it from init. The provider package itself
// must be linked in (it registers with our registry).
func Register(name string) {
	builder.RegisterCloudProvider(name, func(opts *coreoptions.AutoscalerOptions, do caprovider.NodeGroupDiscoveryOptions, rl *caprovider.ResourceLimiter, _ informers.SharedInformerFactory) caprovider.CloudProvider {
		p, err := Build(context.Background(), name, opts, do, rl, legacyregistry.Registerer(), os.Getenv)
		if err != nil {
			// Upstream's providers stop CA on a bad configuration too; exit 2
			// as the sidecar does for one.
			klog.ErrorS(nil, err.Error())
			klog.FlushAndExit(klog.ExitFlushTimeout, 2)
		}
		return p
	})
	builder.SetDefaultCloudProvider(name)
}

// Build builds our provider name from CA's options and the environment
// (getenv) and adapts it. Its metrics are registered with reg (CA's own
// registry, which CA serves on its metrics port); nil registers none. It
// never calls the cloud: an error is the configuration's, one line naming
// the setting.
func Build(ctx context.Context, name string, opts *coreoptions.AutoscalerOptions, do caprovider.NodeGroupDiscoveryOptions, rl *caprovider.ResourceLimiter, reg prometheus.Registerer, getenv func(string) string) (*Provider, error) {
	rp, ok := registry.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("--cloud-provider=%s: this build does not link our %s provider", name, name)
	}
	bo, err := buildOptions(name, rp, opts, do, getenv)
	if err != nil {
		return nil, err
	}
	var m *metrics.Metrics
	if reg != nil {
		m = metrics.New(reg)
		m.SetBuildInfo("in-tree", name)
		bo.InstrumentTransport = m.InstrumentTransport(name)
		bo.ReportUnmatchedSpecs = m.SetUnmatchedSpecs
		bo.ObserveRateLimit = m.ObserveRateLimit(name)
		bo.NodeLookupFailed = m.NodeLookupFailed(name)
		bo.NodeIdentityMismatch = m.NodeIdentityMismatch
	}
	p, err := rp.Build(ctx, bo)
	if err != nil {
		return nil, providerError(name, err)
	}
	for _, w := range rp.ConfigWarnings(name, bo) {
		klog.InfoS("Warning: "+w, "provider", name)
	}
	klog.InfoS("Cloud provider built in-tree from cluster-autoscaler-provider", "provider", name,
		"cloudConfig", opts.CloudConfig, "nodes", do.NodeGroupSpecs, "nodeGroupAutoDiscovery", do.NodeGroupAutoDiscoverySpecs,
		"maxStaleness", bo.MaxStalenessOrDefault(), "unknownOutcomeWindow", windowText(bo.Guard.UnknownOutcomeWindow),
		"cloudRateLimit", rateText(bo.RateLimit), "priceSheet", bo.PriceSheet != nil)
	return New(p, m, rl), nil
}

// buildOptions maps CA's options and our environment variables to what
// the sidecar's flags would set.
func buildOptions(name string, rp registry.Registration, opts *coreoptions.AutoscalerOptions, do caprovider.NodeGroupDiscoveryOptions, getenv func(string) string) (registry.BuildOptions, error) {
	bo := registry.BuildOptions{
		CloudConfig:                 opts.CloudConfig,
		NodeGroupSpecs:              do.NodeGroupSpecs,
		NodeGroupAutoDiscoverySpecs: do.NodeGroupAutoDiscoverySpecs,
		UserAgent:                   "cluster-autoscaler-provider-intree/" + name,
		MaxStaleness:                refresh.DefaultMaxStaleness,
		RateLimit:                   rp.RateLimit,
		// The provider reads its own variables (credentials, region,
		// endpoint) from the same environment as ours.
		Getenv: getenv,
	}
	if _, err := groupconfig.ParseNodeGroupSpecs(do.NodeGroupSpecs); err != nil {
		return bo, fmt.Errorf("--nodes: %w", err)
	}
	if v := getenv(EnvMaxStaleness); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 10*time.Second || d > time.Hour {
			return bo, fmt.Errorf("%s=%q: want a duration between 10s and 1h, e.g. 60s", EnvMaxStaleness, v)
		}
		bo.MaxStaleness = d
	}
	if v := getenv(EnvCloudAPIRateLimit); v != "" {
		limit, useDefault, err := cloudhttp.ParseRateLimit(v)
		if err != nil {
			return bo, fmt.Errorf("%s: %w", EnvCloudAPIRateLimit, err)
		}
		if !useDefault {
			bo.RateLimit = limit
		}
	}
	if v := getenv(EnvUnknownOutcomeWindow); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return bo, fmt.Errorf("%s=%q: want a duration >= 0, e.g. 60s (0 turns the quarantine off)", EnvUnknownOutcomeWindow, v)
		}
		bo.Guard.UnknownOutcomeWindow = d
		if d == 0 {
			bo.Guard.UnknownOutcomeWindow = groupstate.NoUnknownOutcomeWindow
		}
	}
	if v := getenv(EnvPriceSheet); v != "" {
		sheet, err := groupconfig.LoadPriceSheet(v)
		if err != nil {
			return bo, fmt.Errorf("%s: %w", EnvPriceSheet, err)
		}
		bo.PriceSheet = sheet
	}
	return bo, nil
}

// windowText is the quarantine window as the guard applies it: zero is
// the default, negative is off.
func windowText(d time.Duration) string {
	switch {
	case d == 0:
		return groupstate.DefaultUnknownOutcomeWindow.String()
	case d < 0:
		return "off"
	}
	return d.String()
}

func rateText(l cloudhttp.RateLimit) string {
	if l.Rate <= 0 {
		return "off"
	}
	return fmt.Sprintf("%g/s burst %d", l.Rate, l.Burst)
}

// providerError names the provider once and drops the trailing class
// sentinel, as the sidecar prints a configuration error.
func providerError(name string, err error) error {
	err = cloudprovider.WithoutClass(err)
	if strings.HasPrefix(strings.ToLower(err.Error()), strings.ToLower(name)) {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}
