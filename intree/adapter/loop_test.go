package adapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/builder"
	"k8s.io/autoscaler/cluster-autoscaler/test/integration"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	catest "k8s.io/autoscaler/cluster-autoscaler/utils/test"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	exofake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine"
	volcfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr"
	vultrfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"

	// CA's router_<p>.go imports these packages in the binary.
	_ "github.com/ca-providers/cluster-autoscaler-provider/intree/exoscale"
	_ "github.com/ca-providers/cluster-autoscaler-provider/intree/volcengine"
	_ "github.com/ca-providers/cluster-autoscaler-provider/intree/vultr"
)

const unneeded = time.Minute

// loopCloud is one provider's simulated cloud holding one node group, and
// what an in-tree CA is given to use it, in the shapes upstream's provider
// of that name reads.
type loopCloud struct {
	api *fakecloud.API
	// group is the cloud's truth about the node group.
	group func() simcloud.Group
	// groupRef is how the cloud's API names the group in a deletion.
	groupRef string
	// isDeletion tells the request that removes chosen instances.
	isDeletion func(fakecloud.Exchange) bool
	// cloudConfig is --cloud-config's content ("" gives none), env the
	// container's environment and nodes CA's --nodes.
	cloudConfig string
	env         map[string]string
	nodes       []string
	// cpuMilli and memory are the machine type's, as the nodes register.
	cpuMilli int64
	memory   int64
}

func startVultr(t *testing.T, quantity, minSize, maxSize int) loopCloud {
	const cluster, token = "0f6d3b8e-1c2a-4e5f-8a9b-0c1d2e3f4a5b", "loop-test-token"
	fake := vultrfake.New(vultrfake.Options{Token: token})
	fake.AddPlans(vultrfake.StandardPlans()...)
	fake.AddCluster(vultrfake.ClusterSpec{ID: cluster, Label: "loop", Region: "ewr", Version: "v1.33.0+1"})
	pool, err := fake.AddPool(cluster, vultrfake.PoolSpec{Label: "workers", Plan: "vc2-2c-4gb", Quantity: quantity, Min: minSize, Max: maxSize, AutoScaler: true})
	if err != nil {
		t.Fatal(err)
	}
	apiURL := fake.Start()
	t.Cleanup(fake.Close)
	cfg, err := json.Marshal(map[string]string{"cluster_id": cluster, "token": token, "api_url": apiURL})
	if err != nil {
		t.Fatal(err)
	}
	return loopCloud{
		api:         fake.API,
		group:       func() simcloud.Group { return onlyGroup(t, vultr.SimulatedGroups(fake, cluster, pool.ID)) },
		groupRef:    pool.ID,
		isDeletion:  func(e fakecloud.Exchange) bool { return e.Method == http.MethodDelete },
		cloudConfig: string(cfg),
		cpuMilli:    2000, memory: 4 << 30,
	}
}

func startVolcengine(t *testing.T, quantity, minSize, maxSize int) loopCloud {
	const region, groupID = "cn-beijing", "scg-loop-workers"
	const accessKey, secretKey = "AKLTloopaccesskey", "loop-secret-key"
	policy, err := volcfake.ExamplePolicy()
	if err != nil {
		t.Fatal(err)
	}
	fake := volcfake.New(volcfake.Options{Region: region, Regions: []string{region}, AccessKey: accessKey, Policy: policy})
	fake.AddSubnet(volcfake.Subnet{ID: "subnet-loop-a", ZoneID: "cn-beijing-a"})
	fake.AddImage(volcfake.Image{ID: "image-loop-linux", Architecture: "x86_64", OSType: "Linux"})
	fake.AddInstanceType(volcfake.InstanceType{ID: "ecs.g3i.large", Family: "ecs.g3i", CPUs: 2, MemoryMiB: 8192})
	fake.AddConfiguration(volcfake.Configuration{ID: "scc-loop-workers", GroupID: groupID, InstanceTypes: []string{"ecs.g3i.large"}, ImageID: "image-loop-linux"})
	fake.AddGroup(volcfake.Group{
		ID: groupID, Name: "workers", Min: minSize, Max: maxSize, Desired: quantity,
		ActiveConfigID: "scc-loop-workers", SubnetIDs: []string{"subnet-loop-a"},
	})
	fake.Settle()
	endpoint, err := url.Parse(fake.Start())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	return loopCloud{
		api:      fake.API,
		group:    func() simcloud.Group { return onlyGroup(t, volcengine.SimulatedGroups(fake, groupID)) },
		groupRef: groupID,
		isDeletion: func(e fakecloud.Exchange) bool {
			return e.URL.Query().Get("Action") == volcfake.ActionRemoveInstances
		},
		// Upstream's shape: credentials, region and endpoint in the
		// environment; the file only says the fake speaks plain HTTP.
		cloudConfig: "[Global]\nscheme = http\n",
		env:         map[string]string{"ACCESS_KEY": accessKey, "SECRET_KEY": secretKey, "REGION_ID": region, "ENDPOINT": endpoint.Host},
		nodes:       []string{formatSpec(minSize, maxSize, groupID)},
		cpuMilli:    2000, memory: 8 << 30,
	}
}

func startExoscale(t *testing.T, quantity, minSize, maxSize int) loopCloud {
	const zone, apiKey, apiSecret = "ch-gva-2", "EXOloopkey00000000000000", "loop-secret-not-a-real-one"
	policy, err := exofake.ExamplePolicy()
	if err != nil {
		t.Fatal(err)
	}
	fake := exofake.New(exofake.Options{Zone: zone, APIKey: apiKey, APISecret: apiSecret, Policy: policy})
	medium := fake.AddInstanceType(exoapi.InstanceType{Family: "standard", Size: "medium", CPUs: 2, MemoryBytes: 4 << 30})
	cluster := fake.AddSKSCluster("loop")
	nodepoolID, poolID := fake.AddNodepool(cluster, exofake.PoolSeed{Name: "workers", Size: quantity, InstanceTypeID: medium, DiskSizeGiB: 50})
	endpoint := fake.Start()
	t.Cleanup(fake.Close)
	return loopCloud{
		api:      fake.API,
		group:    func() simcloud.Group { return onlyGroup(t, exoscale.SimulatedGroups(fake, poolID)) },
		groupRef: nodepoolID,
		isDeletion: func(e fakecloud.Exchange) bool {
			return e.Method == http.MethodPut && strings.HasSuffix(e.URL.Path, ":"+exoapi.ActionEvict)
		},
		env: map[string]string{
			exoscale.EnvAPIKey: apiKey, exoscale.EnvAPISecret: apiSecret, exoscale.EnvZone: zone,
			exoscale.EnvAPIEndpoint: endpoint, exoscale.EnvSKSCluster: "loop",
			// The loops run back to back in wall time but minutes apart on
			// CA's clock: each reads the cloud afresh, as --simulate does.
			exoscale.EnvRefreshInterval: "0s",
		},
		nodes:    []string{formatSpec(minSize, maxSize, "workers")},
		cpuMilli: 2000, memory: 4 << 30,
	}
}

// formatSpec is CA's --nodes value min:max:name.
func formatSpec(minSize, maxSize int, name string) string {
	return fmt.Sprintf("%d:%d:%s", minSize, maxSize, name)
}

func onlyGroup(t *testing.T, groups []simcloud.Group) simcloud.Group {
	t.Helper()
	if len(groups) != 1 {
		t.Fatalf("the cloud holds %d groups, want the one seeded", len(groups))
	}
	return groups[0]
}

// live is the group's instances the cloud is not removing.
func live(g simcloud.Group) []simcloud.Instance {
	var out []simcloud.Instance
	for _, in := range g.Instances {
		if !in.Gone {
			out = append(out, in)
		}
	}
	return out
}

// TestCALoopAgainstSimulatedCloud runs upstream CA's own autoscaler, built
// by CA's builder from --cloud-provider=<p> and the configuration upstream's
// provider of that name reads, so our provider comes in through the
// registration CA's router file triggers, against each simulated cloud,
// with a fake Kubernetes client as CA's own integration tests use: an
// empty node beyond the group's minimum is deleted, one at the minimum is
// kept, and pending pods scale the group up to its maximum and no further.
// Each provider's fake is seeded the way --simulate seeds it, with one
// group of two running instances, min 1 and max 3, and reached through the
// endpoint setting upstream's provider reads. klog's output and the
// environment are process-wide: it does not run in parallel.
func TestCALoopAgainstSimulatedCloud(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func(t *testing.T, quantity, minSize, maxSize int) loopCloud
	}{
		{"vultr", startVultr},
		{"volcengine", startVolcengine},
		{"exoscale", startExoscale},
	} {
		t.Run(c.name, func(t *testing.T) {
			runLoop(t, c.name, c.start(t, 2, 1, 3))
		})
	}
}

// runOnceOf is CA's RunOnce as the generation built against spells it:
// 1.36's takes the time, the split core's a context as well.
func runOnceOf(ctx context.Context, t *testing.T, autoscaler any) func(time.Time) error {
	switch a := autoscaler.(type) {
	case interface {
		RunOnce(context.Context, time.Time) caerrors.AutoscalerError
	}:
		return func(at time.Time) error { return asError(a.RunOnce(ctx, at)) }
	case interface {
		RunOnce(time.Time) caerrors.AutoscalerError
	}:
		return func(at time.Time) error { return asError(a.RunOnce(at)) }
	}
	t.Fatalf("CA's autoscaler %T has neither generation's RunOnce", autoscaler)
	return nil
}

// asError keeps a nil AutoscalerError nil.
func asError(err caerrors.AutoscalerError) error {
	if err == nil {
		return nil
	}
	return err
}

func runLoop(t *testing.T, name string, cloud loopCloud) {
	for k, v := range cloud.env {
		t.Setenv(k, v)
	}
	deleted := make(chan string, 16)
	cloud.api.Observe(func(e fakecloud.Exchange) {
		if cloud.isDeletion(e) && e.Status < 300 {
			deleted <- e.URL.String()
		}
	})
	t.Cleanup(func() { cloud.api.Observe(nil) })

	options := integration.NewTestConfig().WithOverrides(
		integration.WithCloudProviderName(name),
		integration.WithScaleDownUnneededTime(unneeded),
	).ResolveOptions()
	options.NodeGroups = cloud.nodes
	if cloud.cloudConfig != "" {
		options.CloudConfig = filepath.Join(t.TempDir(), "cloud-config")
		if err := os.WriteFile(options.CloudConfig, []byte(cloud.cloudConfig), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	infra := integration.SetupInfrastructure(t)
	fakes := infra.Fakes

	// The cluster's nodes are the group's instances, registered and empty.
	for i, in := range live(cloud.group()) {
		node := catest.BuildTestNode("workers-"+string(rune('a'+i)), cloud.cpuMilli, cloud.memory, catest.IsReady(true))
		node.Spec.ProviderID = in.ProviderID
		fakes.K8s.AddNode(node)
	}

	mutations := watchMutationLog(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// No cloud provider given: CA's builder builds the one registered
	// under the name, which is ours.
	autoscaler, _, err := builder.New(options).
		WithDebuggingSnapshotter(infra.Snapshotter).
		WithManager(infra.Manager).
		WithKubeClient(fakes.KubeClient).
		WithInformerFactory(fakes.InformerFactory).
		WithProvisioningRequestClient(fakes.PRClient).
		WithPodObserver(fakes.PodObserver).
		Build(ctx)
	if err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	run := runOnceOf(ctx, t, autoscaler)
	runOnce := func(at time.Time) {
		t.Helper()
		if err := run(at); err != nil {
			t.Fatalf("RunOnce: %v", err)
		}
	}

	// Scale-down: both nodes are empty; the group's minimum is 1, so
	// exactly one is deleted once it has been unneeded for long enough.
	runOnce(now)
	runOnce(now.Add(unneeded + time.Second))
	waitDeleted(t, cloud, deleted, mutations)
	if d := cloud.group().Desired; d != 1 {
		t.Fatalf("after scale-down the group's desired size is %d, want 1 (its minimum)", d)
	}
	removeGoneNodes(t, fakes, cloud)
	runOnce(now.Add(2*unneeded + 2*time.Second))
	runOnce(now.Add(3*unneeded + 3*time.Second))
	select {
	case req := <-deleted:
		t.Fatalf("CA deleted below the group's minimum: %s", req)
	default:
	}
	if d := cloud.group().Desired; d != 1 {
		t.Fatalf("desired size %d after more loops, want the minimum 1", d)
	}

	// Scale-up: four pods of 1.5 CPU each; one fits the remaining node, the
	// others would need three new nodes, and the group's maximum is 3.
	addPendingPods(t, fakes, 4)
	runOnce(now.Add(4*unneeded + 4*time.Second))
	expectMutation(t, mutations, `operation="increase"`, `from=1 to=3`, `outcome="applied"`)
	if d := cloud.group().Desired; d != 3 {
		t.Fatalf("after scale-up the desired size is %d, want the maximum 3", d)
	}
	if n := len(live(cloud.group())); n != 3 {
		t.Fatalf("after scale-up the cloud has %d instances, want 3", n)
	}
	// The new nodes never register (no kubelets here): past its provision
	// time CA gives up on them and lowers the target, which our provider
	// refuses while the instances exist; the group stays at its maximum.
	runOnce(now.Add(4*unneeded + 14*time.Second))
	expectMutation(t, mutations, `operation="decrease"`, `outcome="refused"`)
	if d := cloud.group().Desired; d != 3 {
		t.Fatalf("desired size %d after CA's provision timeout, want 3 (the instances exist)", d)
	}
}

// waitDeleted waits for the deletion CA sends from its background
// actuator: the cloud's answer, then the provider's mutation log line,
// written once the provider has applied the answer (so CA's next loop
// reads the new size). Both are signalled, so nothing polls.
func waitDeleted(t *testing.T, cloud loopCloud, deleted <-chan string, mutations <-chan string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	select {
	case req := <-deleted:
		if !strings.Contains(req, cloud.groupRef) {
			t.Fatalf("deletion %s is not of group %s", req, cloud.groupRef)
		}
	case <-timeout:
		t.Fatal("CA deleted no node within 30s of deciding to")
	}
	expectMutation(t, mutations, `operation="delete"`, `from=2 to=1`, `outcome="applied"`)
}

// expectMutation checks the provider's next mutation log line, which the
// in-tree client writes from CA's calls.
func expectMutation(t *testing.T, mutations <-chan string, want ...string) {
	t.Helper()
	select {
	case line := <-mutations:
		for _, w := range append(want, `client="in-tree"`) {
			if !strings.Contains(line, w) {
				t.Fatalf("the mutation's log line lacks %s: %s", w, line)
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the provider logged no mutation (want %s)", strings.Join(want, " "))
	}
}

// logWatch is klog's output while the test runs: each line of a mutation
// (the default-level "Node group changed" or "Node group change not
// applied" line, with its operation) is sent on lines.
type logWatch struct {
	mu    sync.Mutex
	part  []byte
	lines chan string
}

func (w *logWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, b...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		line := string(w.part[:i])
		w.part = w.part[i+1:]
		if strings.Contains(line, `"Node group change`) && strings.Contains(line, ` operation=`) {
			select {
			case w.lines <- line:
			default:
			}
		}
	}
	return len(b), nil
}

// watchMutationLog sends klog's mutation lines on the returned channel
// until the test ends.
func watchMutationLog(t *testing.T) <-chan string {
	t.Helper()
	w := &logWatch{lines: make(chan string, 16)}
	klog.LogToStderr(false)
	klog.SetOutput(w)
	t.Cleanup(func() {
		klog.Flush()
		klog.SetOutput(os.Stderr)
		klog.LogToStderr(true)
	})
	return w.lines
}

// removeGoneNodes removes the Kubernetes nodes whose instances the cloud
// removed, as the cloud controller manager would, and returns once CA's
// node informer has seen every removal (its event handler signals it), so
// CA's next loop lists the nodes that are left.
func removeGoneNodes(t *testing.T, fakes *integration.FakeSet, cloud loopCloud) {
	t.Helper()
	kept := map[string]bool{}
	for _, in := range live(cloud.group()) {
		kept[in.ProviderID] = true
	}
	gone := make(chan string, 16)
	informer := fakes.InformerFactory.Core().V1().Nodes().Informer()
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if n, ok := obj.(*apiv1.Node); ok {
				gone <- n.Name
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = informer.RemoveEventHandler(reg) }()
	removed := map[string]bool{}
	for _, n := range fakes.K8s.Nodes().Items {
		if !kept[n.Spec.ProviderID] {
			fakes.K8s.DeleteNode(n.Name)
			removed[n.Name] = true
		}
	}
	if len(removed) == 0 {
		t.Fatal("the cloud removed no instance of a registered node")
	}
	timeout := time.After(30 * time.Second)
	for len(removed) > 0 {
		select {
		case name := <-gone:
			delete(removed, name)
		case <-timeout:
			t.Fatalf("CA's informer did not see the removal of %v", removed)
		}
	}
}

// addPendingPods adds n unschedulable pods of 1.5 CPU and returns once CA's
// pod informer has seen them all (its event handler signals each).
func addPendingPods(t *testing.T, fakes *integration.FakeSet, n int) {
	t.Helper()
	seen := make(chan string, n)
	informer := fakes.InformerFactory.Core().V1().Pods().Informer()
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p, ok := obj.(*apiv1.Pod); ok && strings.HasPrefix(p.Name, "pending-") {
				seen <- p.Name
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = informer.RemoveEventHandler(reg) }()
	for i := range n {
		fakes.K8s.AddPod(catest.BuildTestPod("pending-"+string(rune('a'+i)), 1500, 100, catest.MarkUnschedulable()))
	}
	timeout := time.After(30 * time.Second)
	for range n {
		select {
		case <-seen:
		case <-timeout:
			t.Fatal("CA's informer did not see the pending pods")
		}
	}
}
