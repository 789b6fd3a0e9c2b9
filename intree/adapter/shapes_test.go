package adapter_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	caprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	caconfig "k8s.io/autoscaler/cluster-autoscaler/config"
	coreoptions "k8s.io/autoscaler/cluster-autoscaler/core/options"

	"github.com/ca-providers/cluster-autoscaler-provider/intree/adapter"

	_ "github.com/ca-providers/cluster-autoscaler-provider/intree/exoscale"
	_ "github.com/ca-providers/cluster-autoscaler-provider/intree/volcengine"
)

// upstreamShape is how upstream's example install of the in-tree provider
// (cluster-autoscaler/cloudprovider/<p>/examples, CA 1.36.1) configures
// it: a --cloud-config file, environment variables from its Secret, and
// CA's --nodes.
type upstreamShape struct {
	cloudConfig string // file content; "" gives no --cloud-config
	env         map[string]string
	nodes       []string
}

var upstreamShapes = map[string]upstreamShape{
	"vultr": {cloudConfig: `{"cluster_id": "6b8b7c8e-7314-4d17-bb0c-fcc9777230fa", "token": "tok-VULTR-5ecret-9f3a"}`},
	"volcengine": {
		env: map[string]string{
			"ACCESS_KEY": "AKLT-volc-5ecret-11aa", "SECRET_KEY": "sk-volc-5ecret-22bb",
			"REGION_ID": "cn-shanghai", "ENDPOINT": "open.volcengineapi.com",
		},
		nodes: []string{"1:10:scg-example"},
	},
	"exoscale": {env: map[string]string{"EXOSCALE_API_KEY": "EXO-5ecret-33cc", "EXOSCALE_API_SECRET": "exo-5ecret-44dd", "EXOSCALE_ZONE": "de-fra-1"}},
}

// TestUpstreamShapesBuild: each provider builds, in-tree, from exactly what
// upstream's example gives upstream's provider, without a cloud call (the
// build never calls the cloud), and its name is the one CA asked for. The
// environment reaches the provider through Build's getenv, as CA's own
// does through os.Getenv.
func TestUpstreamShapesBuild(t *testing.T) {
	t.Parallel()
	for name, shape := range upstreamShapes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := &coreoptions.AutoscalerOptions{}
			if shape.cloudConfig != "" {
				opts.CloudConfig = filepath.Join(t.TempDir(), "cloud-config")
				if err := os.WriteFile(opts.CloudConfig, []byte(shape.cloudConfig), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			do := caprovider.NodeGroupDiscoveryOptions{NodeGroupSpecs: shape.nodes}
			p, err := adapter.Build(context.Background(), name, opts, do, nil, prometheus.NewRegistry(), func(k string) string { return shape.env[k] })
			if err != nil {
				t.Fatalf("upstream's %s shape: %v", name, err)
			}
			if p.Name() != name {
				t.Fatalf("Name() = %q, want %q", p.Name(), name)
			}
		})
	}
}

// TestBuildRefusesBadSettings: each setting the environment carries is
// checked before the provider is built, with an error naming it and its
// fix; the secret in the configuration never shows.
func TestBuildRefusesBadSettings(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "cloud-config")
	if err := os.WriteFile(cfg, []byte(upstreamShapes["vultr"].cloudConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		env   map[string]string
		nodes []string
		want  string
	}{
		{map[string]string{adapter.EnvMaxStaleness: "1s"}, nil, "CAP_MAX_STALENESS=\"1s\": want a duration between 10s and 1h"},
		{map[string]string{adapter.EnvCloudAPIRateLimit: "fast"}, nil, "CAP_CLOUD_API_RATE_LIMIT"},
		{map[string]string{adapter.EnvUnknownOutcomeWindow: "-5s"}, nil, "CAP_UNKNOWN_OUTCOME_WINDOW"},
		{map[string]string{adapter.EnvPriceSheet: "/nonexistent/prices"}, nil, "CAP_PRICE_SHEET"},
		{nil, []string{"1:x:pool"}, "--nodes"},
	}
	for _, c := range cases {
		getenv := func(k string) string { return c.env[k] }
		_, err := adapter.Build(context.Background(), "vultr", &coreoptions.AutoscalerOptions{AutoscalingOptions: autoscalingOptions(cfg)},
			caprovider.NodeGroupDiscoveryOptions{NodeGroupSpecs: c.nodes}, nil, nil, getenv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("env %v nodes %v: err %v, want one naming %q", c.env, c.nodes, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "5ecret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line without the secret: %q", err)
		}
	}
	// A bad configuration file is the provider's error, named once.
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte(`{"cluster_id": ""}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := adapter.Build(context.Background(), "vultr", &coreoptions.AutoscalerOptions{AutoscalingOptions: autoscalingOptions(bad)},
		caprovider.NodeGroupDiscoveryOptions{}, nil, nil, func(string) string { return "" })
	if err == nil || !strings.HasPrefix(err.Error(), "vultr") || strings.Count(strings.ToLower(err.Error()), "vultr: vultr") > 0 {
		t.Errorf("bad cloud config: %v, want one error starting with the provider's name once", err)
	}
	if _, err := adapter.Build(context.Background(), "nimbus", &coreoptions.AutoscalerOptions{}, caprovider.NodeGroupDiscoveryOptions{}, nil, nil, func(string) string { return "" }); err == nil {
		t.Error("an unlinked provider built")
	}
}

func autoscalingOptions(cloudConfig string) caconfig.AutoscalingOptions {
	return caconfig.AutoscalingOptions{CloudConfig: cloudConfig}
}
