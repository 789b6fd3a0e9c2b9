package volcengine

import (
	"context"
	"fmt"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// Simulation defaults: a demo cluster with a general-purpose group and a GPU group.
const (
	simRegion         = "cn-beijing"
	simGeneralGroupID = "scg-sim-general"
	simGPUGroupID     = "scg-sim-gpu"
)

// seedDemo fills a fake with the demo cluster: "general" with 2 running and an
// empty "gpu" group that CA scales from zero using the template.
func seedDemo(f *fakeapi.Server) {
	f.AddSubnet(fakeapi.Subnet{ID: "subnet-sim-a", ZoneID: "cn-beijing-a"})
	f.AddSubnet(fakeapi.Subnet{ID: "subnet-sim-b", ZoneID: "cn-beijing-b"})
	f.AddImage(fakeapi.Image{ID: "image-sim-linux", Architecture: "x86_64", OSType: "Linux"})
	f.AddInstanceType(fakeapi.InstanceType{ID: "ecs.g3i.xlarge", Family: "ecs.g3i", CPUs: 4, MemoryMiB: 16384})
	f.AddInstanceType(fakeapi.InstanceType{ID: "ecs.gni2.3xlarge", Family: "ecs.gni2", CPUs: 12, MemoryMiB: 47104, GPUCount: 1, GPUModel: "NVIDIA A10"})
	f.AddConfiguration(fakeapi.Configuration{ID: "scc-sim-general", GroupID: simGeneralGroupID, InstanceTypes: []string{"ecs.g3i.xlarge"}, ImageID: "image-sim-linux"})
	f.AddConfiguration(fakeapi.Configuration{ID: "scc-sim-gpu", GroupID: simGPUGroupID, InstanceTypes: []string{"ecs.gni2.3xlarge"}, ImageID: "image-sim-linux"})
	f.AddGroup(fakeapi.Group{
		ID: simGeneralGroupID, Name: "general", Min: 1, Max: 10, Desired: 2,
		ActiveConfigID: "scc-sim-general", SubnetIDs: []string{"subnet-sim-a"},
		// Per-group settings, one malformed (docs/group-settings.md).
		Tags: map[string]string{
			"k8s.io/cluster-autoscaler/enabled": "true", "pool": "general",
			groupconfig.OptionKey(groupconfig.OptionScaleDownUnneededTime):       "5m",
			groupconfig.OptionKey(groupconfig.OptionIgnoreDaemonSetsUtilization): "true",
			groupconfig.OptionKey(groupconfig.OptionMaxNodeProvisionTime):        "soon",
			groupconfig.LabelHintKey("example.com/tier"):                         "general",
			groupconfig.TaintHintKey("example.com/maintenance"):                  "planned:PreferNoSchedule",
			groupconfig.ResourceHintKey("ephemeral-storage"):                     "40Gi",
		},
	})
	f.AddGroup(fakeapi.Group{
		ID: simGPUGroupID, Name: "gpu", Min: 0, Max: 4, Desired: 0,
		ActiveConfigID: "scc-sim-gpu", SubnetIDs: []string{"subnet-sim-b"},
		Tags: map[string]string{"k8s.io/cluster-autoscaler/enabled": "true", "pool": "gpu"},
	})
	f.Reconcile()
	f.Settle()
}

// Simulate starts the fake API with the demo cluster on a loopback port and
// builds the provider against it; without group flags it discovers both groups.
func Simulate(ctx context.Context, opts registry.BuildOptions) (*registry.Simulation, error) {
	accessKey := registry.SimulationCredential(envAccessKey, "AKLTsimulated")
	pace := simcloud.DemoPace()
	// The demo key holds exactly the example IAM policy's rights.
	policy, err := fakeapi.ExamplePolicy()
	if err != nil {
		return nil, fmt.Errorf("volcengine simulation: %w", err)
	}
	fake := fakeapi.New(fakeapi.Options{
		Policy:         policy,
		ProvisionDelay: pace.Provision,
		RemoveDelay:    pace.Removal,
		Region:         simRegion,
		// The gateway serves only the demo's region.
		Regions: []string{simRegion},
		// Another key is refused, as the gateway refuses it.
		AccessKey: accessKey,
	})
	seedDemo(fake)
	if len(opts.NodeGroupSpecs) == 0 && len(opts.NodeGroupAutoDiscoverySpecs) == 0 {
		opts.NodeGroupAutoDiscoverySpecs = []string{"asg:tag=k8s.io/cluster-autoscaler/enabled=true"}
	}
	sim, err := registry.StartSimulation(ProviderName, fake.API, opts,
		func() []simcloud.Group { return SimulatedGroups(fake, simGeneralGroupID, simGPUGroupID) },
		func(url string) (cloudprovider.CloudProvider, error) {
			static, err := groupconfig.ParseNodeGroupSpecs(opts.NodeGroupSpecs)
			if err != nil {
				return nil, fmt.Errorf("%s simulation: %w", ProviderName, err)
			}
			selectors, err := parseDiscoverySpecs(opts.NodeGroupAutoDiscoverySpecs)
			if err != nil {
				return nil, fmt.Errorf("%s simulation: %w", ProviderName, err)
			}
			o := options{
				cfg: Config{
					Region:    simRegion,
					AccessKey: credential.Secret(accessKey),
					SecretKey: credential.Secret(registry.SimulationCredential(envSecretKey, "simulated-secret")),
					Endpoint:  url,
					Scheme:    "http",
				},
				static:    static,
				selectors: selectors,
			}
			return build(ctx, opts, o)
		})
	if err != nil {
		return nil, err
	}
	sim.Description = fmt.Sprintf("fake Volcengine Auto Scaling in %s: group %s (ecs.g3i.xlarge, min 1 max 10, 2 running) and group %s (ecs.gni2.3xlarge with 1x NVIDIA A10, min 0 max 4, empty); instances take %s to come up",
		simRegion, simGeneralGroupID, simGPUGroupID, pace.Provision)
	sim.GroupNames = map[string]string{simGeneralGroupID: "general", simGPUGroupID: "gpu"}
	sim.Deliberate = []string{registry.DeliberateMalformedSetting(simGeneralGroupID, groupconfig.OptionMaxNodeProvisionTime, "soon")}
	return sim, nil
}

// SimulatedGroups is the fake's truth about the given groups (soak, --simulate).
func SimulatedGroups(fake *fakeapi.Server, groupIDs ...string) []simcloud.Group {
	return simcloud.Groups(groupIDs, fake.Group, func(g fakeapi.Group) simcloud.Group {
		st := simcloud.Group{IDs: []string{g.ID, g.Name}, Desired: g.Desired}
		for _, in := range fake.Instances(g.ID) {
			gone := in.Status == fakeapi.StatusRemoving || in.Status == fakeapi.StatusRemoveWait
			st.Instances = append(st.Instances, simcloud.Instance{ProviderID: ProviderIDPrefix + in.ID, State: in.Status, Gone: gone})
		}
		return st
	})
}
