package cluster

import (
	"fmt"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	exofake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine"
	volcfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr"
	vultrfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

// Provisioning lag used when a Clock drives the fake (soak); without a clock
// the fake provisions at once (benchmark).
const (
	lagAppear  = 2 * time.Second
	lagReady   = 5 * time.Second
	lagRemove  = 3 * time.Second
	lagOperate = 2 * time.Second
)

// Credentials seeded into the fakes and the provider configuration. They are
// recognisable on purpose: the soak and benchmark scan nothing for them, the
// secret-hygiene test in the root package uses its own.
const (
	vultrToken    = "bench-vultr-token-0123456789"
	volcAccessKey = "AKLTbenchaccesskey0123456789"
	volcSecretKey = "bench-volc-secret-0123456789"
	exoAPIKey     = "EXObenchkey0123456789abcd"
	exoAPISecret  = "bench-exo-secret-0123456789"
	vultrCluster  = "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f"
	volcRegion    = "cn-beijing"
	exoZone       = "ch-gva-2"
	exoSKSCluster = "bench"
	volcTagKey    = "k8s.io/cluster-autoscaler/enabled"
)

func groupName(i int) string { return fmt.Sprintf("pool-%03d", i) }

func startVultr(f *Fake) error {
	o := f.opts
	// The strictest plausible VKE: a pool refuses resizes while it creates nodes.
	fo := vultrfake.Options{Token: vultrToken, MaxPerPage: 500, Seed: o.Seed + 1, Busy: vultrfake.BusyRefuse}
	if o.Clock != nil {
		fo.Now = o.Clock.Now
		fo.AppearAfter, fo.ActiveAfter, fo.CloseLinger = lagAppear, lagReady, lagRemove
	}
	fake := vultrfake.New(fo)
	fake.AddPlans(vultrfake.StandardPlans()...)
	fake.AddCluster(vultrfake.ClusterSpec{ID: vultrCluster, Label: "bench", Region: "ewr", Version: "v1.33.0+1"})
	var poolIDs []string
	for i := 0; i < o.Groups; i++ {
		v, err := fake.AddPool(vultrCluster, vultrfake.PoolSpec{
			Label: groupName(i), Plan: "vc2-2c-4gb", Quantity: o.share(i),
			Min: o.MinPerGroup, Max: o.MaxPerGroup, AutoScaler: true,
		})
		if err != nil {
			return fmt.Errorf("cluster: seed vultr pool: %w", err)
		}
		poolIDs = append(poolIDs, v.ID)
	}
	if o.Unmanaged > 0 {
		v, err := fake.AddPool(vultrCluster, vultrfake.PoolSpec{Label: "static", Plan: "vc2-2c-4gb", Quantity: o.Unmanaged, Min: o.Unmanaged, Max: o.Unmanaged})
		if err != nil {
			return fmt.Errorf("cluster: seed vultr static pool: %w", err)
		}
		for _, n := range v.Nodes {
			f.Unmanaged = append(f.Unmanaged, vultr.ProviderIDPrefix+n.ID)
		}
	}
	url := f.serve(fake.API)
	f.URL = url
	f.Credentials = []string{vultrToken}
	var err error
	f.CloudConfig, err = f.writeFile("vultr.json", fmt.Sprintf(`{"cluster_id": %q, "token": %q, "api_url": %q}`, vultrCluster, vultrToken, url))
	if err != nil {
		return err
	}
	f.state = func() []simcloud.Group { return vultr.SimulatedGroups(fake, vultrCluster, poolIDs...) }
	f.settle = fake.Settle
	f.launch = func(groupID string) (string, error) {
		n, err := fake.LaunchInstance(vultrCluster, groupID)
		return vultr.ProviderIDPrefix + n.ID, err
	}
	return nil
}

func startVolcengine(f *Fake) error {
	o := f.opts
	fo := volcfake.Options{Region: volcRegion, Now: fakecloud.NewManualClock(time.Now()).Now}
	if o.Clock != nil {
		fo.Now = o.Clock.Now
		fo.ProvisionDelay, fo.RemoveDelay = lagReady, lagRemove
	}
	fake := volcfake.New(fo)
	fake.AddSubnet(volcfake.Subnet{ID: "subnet-bench-a", ZoneID: volcRegion + "-a"})
	fake.AddImage(volcfake.Image{ID: "image-bench-linux", Architecture: "x86_64", OSType: "Linux"})
	fake.AddInstanceType(volcfake.InstanceType{ID: "ecs.g3i.xlarge", Family: "ecs.g3i", CPUs: 4, MemoryMiB: 16384})
	var ids []string
	maxSize, sizes := volcSizes(o)
	for i := 0; i < o.Groups; i++ {
		id := "scg-" + groupName(i)
		cfg := "scc-" + groupName(i)
		fake.AddConfiguration(volcfake.Configuration{ID: cfg, GroupID: id, InstanceTypes: []string{"ecs.g3i.xlarge"}, ImageID: "image-bench-linux"})
		fake.AddGroup(volcfake.Group{
			ID: id, Name: groupName(i), Min: o.MinPerGroup, Max: maxSize, Desired: sizes[i],
			ActiveConfigID: cfg, SubnetIDs: []string{"subnet-bench-a"},
			Tags: map[string]string{volcTagKey: "true"},
		})
		ids = append(ids, id)
	}
	fake.Reconcile()
	fake.Settle()
	// ECS instances outside every scaling group are invisible to the Auto
	// Scaling API the provider reads, so these ids are unknown to the fake too.
	for i := 0; i < o.Unmanaged; i++ {
		f.Unmanaged = append(f.Unmanaged, fmt.Sprintf("%si-unmanaged%04d", volcengine.ProviderIDPrefix, i))
	}
	url := f.serve(fake.API)
	f.URL = url
	f.Credentials = []string{volcAccessKey, volcSecretKey}
	var err error
	f.CloudConfig, err = f.writeFile("volcengine.ini", fmt.Sprintf("[Global]\nregion-id = %s\naccess-key = %s\nsecret-key = %s\nendpoint = %s\nscheme = http\n",
		volcRegion, volcAccessKey, volcSecretKey, url))
	if err != nil {
		return err
	}
	f.Flags = []string{"--node-group-auto-discovery", "asg:tag=" + volcTagKey + "=true"}
	f.state = func() []simcloud.Group { return volcengine.SimulatedGroups(fake, ids...) }
	f.settle = fake.Settle
	f.launch = func(groupID string) (string, error) {
		id, err := fake.LaunchInstance(groupID)
		return volcengine.ProviderIDPrefix + id, err
	}
	return nil
}

// volcMaxGroupSize is the most instances a scaling group may hold (BytePlus
// Auto Scaling API reference, CreateScalingGroup and ModifyScalingGroup:
// MaxInstanceNumber 0 to 100); the fake refuses a ModifyScalingGroup of a
// group whose max is above it.
const volcMaxGroupSize = 100

// volcSizes returns the groups' max and each group's starting size for
// Volcengine. The max is capped at the documented 100, so that the
// benchmark's scale-up of the first group (its groups in id order) is
// accepted, and that group starts one below the cap when its share would
// fill it, its spare instances going to the other groups round robin, so
// the cluster still holds N nodes. Groups above the cap (N / G > 100, which
// a real account could not hold) are seeded as they are: the fake accepts
// them, and only the first group is ever scaled.
func volcSizes(o Options) (maxSize int, sizes []int) {
	maxSize = min(o.MaxPerGroup, volcMaxGroupSize)
	sizes = make([]int, o.Groups)
	for i := range sizes {
		sizes[i] = o.share(i)
	}
	if o.Groups < 2 || sizes[0] < maxSize {
		return maxSize, sizes
	}
	spare := sizes[0] - (maxSize - 1)
	sizes[0] = maxSize - 1
	for i := 0; spare > 0; i, spare = i+1, spare-1 {
		sizes[1+i%(o.Groups-1)]++
	}
	return maxSize, sizes
}

func startExoscale(f *Fake) error {
	o := f.opts
	// The strictest plausible Exoscale: 409 for a change to a busy pool.
	fo := exofake.Options{Zone: exoZone, APIKey: exoAPIKey, APISecret: exoAPISecret, QuotaLimit: -1, Busy: exofake.BusyRefuse}
	if o.Clock != nil {
		fo.Now = o.Clock.Now
		fo.ProvisionDelay, fo.RemovalDelay, fo.OperationDelay = lagReady, lagRemove, lagOperate
	}
	fake := exofake.New(fo)
	medium := fake.AddInstanceType(exoapi.InstanceType{Family: "standard", Size: "medium", CPUs: 2, MemoryBytes: 4 << 30})
	cl := fake.AddSKSCluster(exoSKSCluster)
	type ids struct{ nodepool, pool, name string }
	var groups []ids
	for i := 0; i < o.Groups; i++ {
		np, pool := fake.AddNodepool(cl, exofake.PoolSeed{Name: groupName(i), Size: o.share(i), InstanceTypeID: medium, DiskSizeGiB: 50})
		groups = append(groups, ids{np, pool, groupName(i)})
	}
	// Instances no group manages, like the control plane of a cluster built
	// on plain instance pools.
	for i := 0; i < o.Unmanaged; i++ {
		id := fake.AddInstance(fmt.Sprintf("bench-control-plane-%d", i), medium)
		f.Unmanaged = append(f.Unmanaged, exoscale.ProviderIDPrefix+id)
	}
	f.URL = f.serve(fake.API)
	f.Credentials = []string{exoAPIKey, exoAPISecret}
	f.Env = map[string]string{
		exoscale.EnvAPIKey: exoAPIKey, exoscale.EnvAPISecret: exoAPISecret, exoscale.EnvZone: exoZone,
		exoscale.EnvAPIEndpoint: f.URL, exoscale.EnvSKSCluster: exoSKSCluster,
		// Every Refresh reaches the cloud: the benchmark counts the worst case
		// instead of the 5 s default that lets back-to-back loops cost nothing.
		exoscale.EnvRefreshInterval: "0s",
	}
	for _, g := range groups {
		f.Flags = append(f.Flags, "--nodes", fmt.Sprintf("%d:%d:%s", o.MinPerGroup, o.MaxPerGroup, g.name))
	}
	poolIDs := make([]string, len(groups))
	for i, g := range groups {
		poolIDs[i] = g.pool
	}
	f.state = func() []simcloud.Group { return exoscale.SimulatedGroups(fake, poolIDs...) }
	f.settle = fake.Settle
	f.launch = func(groupID string) (string, error) {
		id, err := fake.LaunchInstance(groupID)
		return exoscale.ProviderIDPrefix + id, err
	}
	return nil
}
