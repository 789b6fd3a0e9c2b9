package vultr

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// simClusterID is the demo cluster's id.
const simClusterID = "5e3d6a1c-0c5b-4f4e-9d55-5a1b2c3d4e5f"

// Simulate starts a fake Vultr API on loopback, seeds a demo cluster (pools
// general and gpu flagged auto_scaler, static not) and returns its provider.
func Simulate(ctx context.Context, opts registry.BuildOptions) (*registry.Simulation, error) {
	pace := simcloud.DemoPace()
	fake := fakeapi.New(fakeapi.Options{
		AppearAfter: pace.Appear, ActiveAfter: pace.Provision, CloseLinger: pace.Removal,
		Seed: time.Now().UnixNano(),
		// Without a key in the environment the fake uses its own dummy.
		Token: registry.SimulationCredential(EnvAPIKey, ""),
	})
	pools, err := seedDemo(fake)
	if err != nil {
		return nil, err
	}
	ids := slices.Sorted(maps.Values(pools))
	sim, err := registry.StartSimulation(ProviderName, fake.API, opts,
		func() []simcloud.Group { return SimulatedGroups(fake, simClusterID, ids...) },
		func(url string) (cloudprovider.CloudProvider, error) {
			specs, err := groupconfig.ParseNodeGroupSpecs(opts.NodeGroupSpecs)
			if err != nil {
				return nil, fmt.Errorf("vultr: %w", err)
			}
			cfg := &Config{ClusterID: simClusterID, Token: credential.Secret(fake.Token()), APIURL: url}
			p, err := newProvider(ctx, cfg, specs, opts, cloudhttp.RetryOptions{}, nil)
			if err != nil {
				return nil, err
			}
			klog.V(2).InfoS("Simulated Vultr API listening", "provider", ProviderName, "url", url, "cluster", simClusterID)
			return p, nil
		})
	if err != nil {
		return nil, err
	}
	sim.Description = fmt.Sprintf("fake Vultr API: VKE cluster %s in ewr with pools general %s (vc2-2c-4gb, auto_scaler 1..5), "+
		"gpu %s (NVIDIA A16, auto_scaler 1..3) and static %s (vhf-4c-16gb, not autoscaled; add --nodes=1:4:static to manage it); "+
		"new nodes are pending after %s and active after %s",
		simClusterID, pools["general"], pools["gpu"], pools["static"], pace.Appear, pace.Provision)
	sim.GroupNames = invert(pools)
	sim.Deliberate = []string{registry.DeliberateMalformedSetting("general "+pools["general"], groupconfig.OptionMaxNodeProvisionTime, "soon")}
	return sim, nil
}

// SimulatedGroups is the fake's truth about the given pools of cluster.
func SimulatedGroups(fake *fakeapi.Server, cluster string, poolIDs ...string) []simcloud.Group {
	pool := func(id string) (fakeapi.PoolView, bool) { return fake.Pool(cluster, id) }
	return simcloud.Groups(poolIDs, pool, func(v fakeapi.PoolView) simcloud.Group {
		g := simcloud.Group{IDs: []string{v.ID, v.Label}, Desired: v.Quantity}
		for _, n := range v.Nodes {
			g.Instances = append(g.Instances, simcloud.Instance{ProviderID: ProviderIDPrefix + n.ID, State: n.Status, Gone: n.Status == "closed"})
		}
		return g
	})
}

// invert turns label → id into id → label.
func invert(idsByName map[string]string) map[string]string {
	namesByID := make(map[string]string, len(idsByName))
	for name, id := range idsByName {
		namesByID[id] = name
	}
	return namesByID
}

// simPoolID derives a pool's id from its label, stable across restarts.
func simPoolID(label string) string {
	sum := sha256.Sum256([]byte(simClusterID + "/" + label))
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}

// seedDemo seeds the demo cluster and returns its pools' ids by label.
func seedDemo(fake *fakeapi.Server) (map[string]string, error) {
	fake.AddPlans(fakeapi.StandardPlans()...)
	fake.AddMetalPlans(fakeapi.StandardMetalPlans()...)
	fake.AddCluster(fakeapi.ClusterSpec{ID: simClusterID, Label: "demo", Region: "ewr", Version: "v1.33.0+1"})
	pools := []fakeapi.PoolSpec{
		// The general pool shows per-group settings, one of them malformed.
		{Label: "general", Plan: "vc2-2c-4gb", Quantity: 2, Min: 1, Max: 5, AutoScaler: true,
			Labels: map[string]string{
				"workload": "general",
				groupconfig.NodeLabelOptionKey(groupconfig.OptionScaleDownUnneededTime):       "5m",
				groupconfig.NodeLabelOptionKey(groupconfig.OptionIgnoreDaemonSetsUtilization): "true",
				groupconfig.NodeLabelOptionKey(groupconfig.OptionMaxNodeProvisionTime):        "soon",
				groupconfig.NodeLabelResourceKey("example.com/license"):                       "4",
			}},
		{Label: "gpu", Plan: "vcg-a16-6c-64g-16vram", Quantity: 1, Min: 1, Max: 3, AutoScaler: true,
			Labels: map[string]string{LabelGPUType: "NVIDIA_A16"},
			Taints: []fakeapi.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}},
		{Label: "static", Plan: "vhf-4c-16gb", Quantity: 2, Min: 2, Max: 2, AutoScaler: false},
	}
	ids := map[string]string{}
	for _, p := range pools {
		p.ID = simPoolID(p.Label)
		if _, err := fake.AddPool(simClusterID, p); err != nil {
			return nil, err
		}
		ids[p.Label] = p.ID
	}
	return ids, nil
}
