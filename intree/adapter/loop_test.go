package adapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
	catest "k8s.io/autoscaler/cluster-autoscaler/utils/test"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"

	// CA's router_vultr.go imports this package in the binary.
	_ "github.com/ca-providers/cluster-autoscaler-provider/intree/vultr"
)

const (
	loopCluster = "0f6d3b8e-1c2a-4e5f-8a9b-0c1d2e3f4a5b"
	loopToken   = "loop-test-token"
	unneeded    = time.Minute
)

// simulatedVultr is the fake Vultr API the --simulate flag serves, behind a
// recorder that signals every node deletion it answered.
type simulatedVultr struct {
	fake    *fakeapi.Server
	poolID  string
	apiURL  string
	deleted chan string
}

func startSimulatedVultr(t *testing.T, quantity, min, max int) *simulatedVultr {
	t.Helper()
	fake := fakeapi.New(fakeapi.Options{Token: loopToken})
	fake.AddPlans(fakeapi.StandardPlans()...)
	fake.AddCluster(fakeapi.ClusterSpec{ID: loopCluster, Label: "loop", Region: "ewr", Version: "v1.33.0+1"})
	pool, err := fake.AddPool(loopCluster, fakeapi.PoolSpec{Label: "workers", Plan: "vc2-2c-4gb", Quantity: quantity, Min: min, Max: max, AutoScaler: true})
	if err != nil {
		t.Fatal(err)
	}
	endpoint, err := url.Parse(fake.Start())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	s := &simulatedVultr{fake: fake, poolID: pool.ID, deleted: make(chan string, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fake.ServeHTTP(w, r)
		if r.Method == http.MethodDelete {
			s.deleted <- r.URL.Path
		}
	}))
	t.Cleanup(srv.Close)
	s.apiURL = srv.URL + endpoint.Path
	return s
}

func (s *simulatedVultr) pool(t *testing.T) fakeapi.PoolView {
	t.Helper()
	p, ok := s.fake.Pool(loopCluster, s.poolID)
	if !ok {
		t.Fatal("pool gone")
	}
	return p
}

// live is the pool's nodes the cloud has not closed.
func (p poolNodes) live() []fakeapi.NodeView {
	var out []fakeapi.NodeView
	for _, n := range p {
		if n.Status != "closed" {
			out = append(out, n)
		}
	}
	return out
}

type poolNodes []fakeapi.NodeView

// TestCALoopAgainstSimulatedCloud runs upstream CA's own autoscaler, built
// by CA's builder from --cloud-provider=vultr and a --cloud-config of
// upstream's shape, so our provider comes in through the registration CA's
// router file triggers, against the simulated Vultr API, with a fake
// Kubernetes client as CA's own integration tests use: an empty node
// beyond the pool's minimum is deleted, one at the minimum is kept, and
// pending pods scale the pool up to its maximum and no further.
func TestCALoopAgainstSimulatedCloud(t *testing.T) {
	cloud := startSimulatedVultr(t, 2, 1, 3)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "cloud-config.json")
	cfg, _ := json.Marshal(map[string]string{"cluster_id": loopCluster, "token": loopToken, "api_url": cloud.apiURL})
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}

	options := integration.NewTestConfig().WithOverrides(
		integration.WithCloudProviderName("vultr"),
		integration.WithScaleDownUnneededTime(unneeded),
	).ResolveOptions()
	options.CloudConfig = cfgPath
	infra := integration.SetupInfrastructure(t)
	fakes := infra.Fakes

	// The cluster's nodes are the pool's instances, registered and empty.
	for i, n := range poolNodes(cloud.pool(t).Nodes).live() {
		node := catest.BuildTestNode("workers-"+string(rune('a'+i)), 2000, 4<<30, catest.IsReady(true))
		node.Spec.ProviderID = vultr.ProviderIDPrefix + n.ID
		fakes.K8s.AddNode(node)
	}

	mutations := watchMutationLog(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// No cloud provider given: CA's builder builds the one registered as
	// "vultr", which is ours.
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
	runOnce := func(at time.Time) {
		t.Helper()
		if err := autoscaler.RunOnce(at); err != nil {
			t.Fatalf("RunOnce: %v", err)
		}
	}

	// Scale-down: both nodes are empty; the pool's minimum is 1, so exactly
	// one is deleted once it has been unneeded for long enough.
	runOnce(now)
	runOnce(now.Add(unneeded + time.Second))
	waitDeleted(t, cloud, mutations)
	if q := cloud.pool(t).Quantity; q != 1 {
		t.Fatalf("after scale-down the pool's node_quantity is %d, want 1 (its minimum)", q)
	}
	removeClosedNodes(t, fakes, cloud)
	runOnce(now.Add(2*unneeded + 2*time.Second))
	runOnce(now.Add(3*unneeded + 3*time.Second))
	select {
	case path := <-cloud.deleted:
		t.Fatalf("CA deleted %s below the pool's minimum", path)
	default:
	}
	if q := cloud.pool(t).Quantity; q != 1 {
		t.Fatalf("node_quantity %d after more loops, want the minimum 1", q)
	}

	// Scale-up: four pods of 1.5 CPU each; one fits the remaining node, the
	// others would need three new nodes, and the pool's maximum is 3.
	addPendingPods(t, fakes, 4)
	runOnce(now.Add(4*unneeded + 4*time.Second))
	if q := cloud.pool(t).Quantity; q != 3 {
		t.Fatalf("after scale-up node_quantity is %d, want the maximum 3", q)
	}
	// The new nodes never register (no kubelets here): past its provision
	// time CA gives up on them and lowers the target, which our provider
	// refuses while the instances exist; the pool stays at its maximum.
	runOnce(now.Add(4*unneeded + 14*time.Second))
	if q := cloud.pool(t).Quantity; q != 3 {
		t.Fatalf("node_quantity %d after CA's provision timeout, want 3 (the instances exist)", q)
	}
}

// waitDeleted waits for the deletion CA sends from its background
// actuator: the cloud's answer, then the provider's mutation log line,
// written once the provider has applied the answer (so CA's next loop
// reads the new size). Both are signalled, so nothing polls.
func waitDeleted(t *testing.T, cloud *simulatedVultr, mutations <-chan string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	select {
	case path := <-cloud.deleted:
		if !strings.Contains(path, cloud.poolID) {
			t.Fatalf("deletion %s is not of pool %s", path, cloud.poolID)
		}
	case <-timeout:
		t.Fatal("CA deleted no node within 30s of deciding to")
	}
	select {
	case line := <-mutations:
		for _, want := range []string{`operation="delete"`, `from=2 to=1`, `outcome="applied"`, `client="in-tree"`} {
			if !strings.Contains(line, want) {
				t.Fatalf("the deletion's log line lacks %s: %s", want, line)
			}
		}
	case <-timeout:
		t.Fatal("the provider logged no mutation for the deletion")
	}
}

// logWatch is klog's output while the test runs: each line of a mutation
// (the default-level "Node group changed" line) is sent on lines.
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
		if strings.Contains(line, `"Node group changed"`) {
			select {
			case w.lines <- line:
			default:
			}
		}
	}
	return len(b), nil
}

// watchMutationLog sends klog's mutation lines on the returned channel
// until the test ends. klog's output is process-wide: the test is not
// parallel.
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

// removeClosedNodes removes the Kubernetes nodes whose instances the cloud
// closed, as the cloud controller manager would, and returns once CA's
// node informer has seen every removal (its event handler signals it), so
// CA's next loop lists the nodes that are left.
func removeClosedNodes(t *testing.T, fakes *integration.FakeSet, cloud *simulatedVultr) {
	t.Helper()
	live := map[string]bool{}
	for _, n := range poolNodes(cloud.pool(t).Nodes).live() {
		live[vultr.ProviderIDPrefix+n.ID] = true
	}
	gone := make(chan string, 16)
	reg, err := fakes.InformerFactory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if n, ok := obj.(*apiv1.Node); ok {
				gone <- n.Name
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fakes.InformerFactory.Core().V1().Nodes().Informer().RemoveEventHandler(reg) }()
	removed := map[string]bool{}
	for _, n := range fakes.K8s.Nodes().Items {
		if !live[n.Spec.ProviderID] {
			fakes.K8s.DeleteNode(n.Name)
			removed[n.Name] = true
		}
	}
	if len(removed) == 0 {
		t.Fatal("the cloud closed no instance of a registered node")
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
