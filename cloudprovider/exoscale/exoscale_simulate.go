package exoscale

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

// The demo's zone and default credentials; the fake verifies whichever are used.
const (
	simZone      = "ch-gva-2"
	simAPIKey    = "EXOsimulatedkey000000000"
	simAPISecret = "simulated-secret-not-a-real-one"
)

// simDefaultSpecs apply when --nodes is not given.
var simDefaultSpecs = []string{"1:10:workers", "0:3:gpu", "1:4:batch"}

// SeedDemo fills a fake with SKS cluster "demo" (nodepools "workers", "gpu")
// and pool "batch", and returns their pool ids by name, the same every start.
func SeedDemo(f *fakeapi.Server) map[string]string {
	medium := f.AddInstanceType(exoapi.InstanceType{Family: "standard", Size: "medium", CPUs: 2, MemoryBytes: 4 << 30})
	large := f.AddInstanceType(exoapi.InstanceType{Family: "standard", Size: "large", CPUs: 4, MemoryBytes: 8 << 30})
	gpu := f.AddInstanceType(exoapi.InstanceType{Family: "gpua5000", Size: "small", CPUs: 12, MemoryBytes: 56 << 30, GPUs: 1})
	cluster := f.AddSKSCluster("demo")
	// Settings in the node-label spelling, one of them malformed on purpose.
	ids := map[string]string{}
	_, ids["workers"] = f.AddNodepool(cluster, fakeapi.PoolSeed{Name: "workers", Size: 2, InstanceTypeID: medium, DiskSizeGiB: 50, Labels: map[string]string{
		"role": "worker",
		groupconfig.NodeLabelOptionKey(groupconfig.OptionScaleDownUnneededTime):       "5m",
		groupconfig.NodeLabelOptionKey(groupconfig.OptionIgnoreDaemonSetsUtilization): "true",
		groupconfig.NodeLabelOptionKey(groupconfig.OptionMaxNodeProvisionTime):        "soon",
		groupconfig.NodeLabelResourceKey("example.com/license"):                       "4",
	}})
	_, ids["gpu"] = f.AddNodepool(cluster, fakeapi.PoolSeed{
		Name: "gpu", Size: 0, InstanceTypeID: gpu, DiskSizeGiB: 100,
		Labels: map[string]string{"role": "gpu", LabelGPUType: "gpua5000"},
		Taints: []exoapi.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}},
	})
	ids["batch"] = f.AddInstancePool(fakeapi.PoolSeed{Name: "batch", Size: 1, InstanceTypeID: large, DiskSizeGiB: 50})
	f.AddInstance("demo-control-plane", medium)
	return ids
}

// Simulate starts the fake Exoscale API on loopback and returns a provider on it.
func Simulate(_ context.Context, opts registry.BuildOptions) (*registry.Simulation, error) {
	apiKey := registry.SimulationCredential(EnvAPIKey, simAPIKey)
	apiSecret := registry.SimulationCredential(EnvAPISecret, simAPISecret)
	pace := simcloud.DemoPace()
	// The demo key holds exactly the example role policy's rights.
	policy, err := fakeapi.ExamplePolicy()
	if err != nil {
		return nil, fmt.Errorf("exoscale simulation: %w", err)
	}
	fake := fakeapi.New(fakeapi.Options{
		Zone: simZone, APIKey: apiKey, APISecret: apiSecret,
		ProvisionDelay: pace.Provision, RemovalDelay: pace.Removal, OperationDelay: pace.Operation,
		Policy: policy,
	})
	groupIDs := SeedDemo(fake)
	poolIDs := slices.Sorted(maps.Values(groupIDs))
	if len(opts.NodeGroupSpecs) == 0 {
		opts.NodeGroupSpecs = simDefaultSpecs
	}
	sim, err := registry.StartSimulation(ProviderName, fake.API, opts,
		func() []simcloud.Group { return SimulatedGroups(fake, poolIDs...) },
		func(endpoint string) (cloudprovider.CloudProvider, error) {
			env := map[string]string{
				EnvAPIKey: apiKey, EnvAPISecret: apiSecret, EnvZone: simZone,
				EnvAPIEndpoint: endpoint, EnvSKSCluster: "demo", EnvRefreshInterval: "0s",
			}
			cfg, err := LoadConfig(opts, func(k string) string { return env[k] })
			if err != nil {
				return nil, fmt.Errorf("simulated exoscale configuration: %w", err)
			}
			p, err := newProvider(cfg, providerDeps{build: opts})
			if err != nil {
				return nil, err
			}
			p.useOptions(opts)
			return p, nil
		})
	if err != nil {
		return nil, err
	}
	sim.Description = fmt.Sprintf("Exoscale zone ch-gva-2: SKS cluster demo (nodepools workers %s 2x standard.medium, gpu %s 0x gpua5000.small) "+
		"and instance pool batch %s (1x standard.large); members boot in %s, evictions finish in %s",
		groupIDs["workers"], groupIDs["gpu"], groupIDs["batch"], pace.Provision, pace.Removal)
	sim.GroupNames = map[string]string{}
	for name, id := range groupIDs {
		sim.GroupNames[id] = name
	}
	sim.Deliberate = []string{registry.DeliberateMalformedSetting("workers "+groupIDs["workers"], groupconfig.OptionMaxNodeProvisionTime, "soon")}
	return sim, nil
}

// SimulatedGroups is the fake's state of the given pools, in simcloud's shape.
func SimulatedGroups(fake *fakeapi.Server, poolIDs ...string) []simcloud.Group {
	return simcloud.Groups(poolIDs, fake.Pool, func(v fakeapi.PoolView) simcloud.Group {
		st := simcloud.Group{Desired: v.Size}
		for _, gid := range []string{v.NodepoolID, v.ID, v.Name} {
			if gid != "" {
				st.IDs = append(st.IDs, gid)
			}
		}
		for _, m := range v.Members {
			gone := m.State == fakeapi.InstanceDestroying
			st.Instances = append(st.Instances, simcloud.Instance{ProviderID: ProviderIDPrefix + m.ID, State: m.State, Gone: gone})
		}
		return st
	})
}
