package adapter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apiv1 "k8s.io/api/core/v1"
	caprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	caconfig "k8s.io/autoscaler/cluster-autoscaler/config"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// newAdapted is the in-memory provider (the kit's reference provider)
// through the adapter, refreshed, with its metrics in reg.
func newAdapted(t *testing.T, groups ...cloudprovidertest.CloudGroup) (*Provider, *cloudprovidertest.InMemoryProvider, *prometheus.Registry) {
	t.Helper()
	if len(groups) == 0 {
		groups = []cloudprovidertest.CloudGroup{
			{ID: "pool-a", Min: 1, Max: 5, Running: 2},
			{ID: "pool-b", Min: 0, Max: 3, Running: 1, NoTemplate: true, Options: true},
		}
	}
	inner := cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud(groups...))
	reg := prometheus.NewRegistry()
	limiter := caprovider.NewResourceLimiter(map[string]int64{"cpu": 0}, map[string]int64{"cpu": 64})
	a := New(inner, metrics.New(reg), limiter)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	return a, inner, reg
}

func group(t *testing.T, a *Provider, id string) caprovider.NodeGroup {
	t.Helper()
	for _, g := range a.NodeGroups() {
		if g.Id() == id {
			return g
		}
	}
	t.Fatalf("group %s not served", id)
	return nil
}

func TestNodeGroupsAndMutations(t *testing.T) {
	t.Parallel()
	a, _, reg := newAdapted(t)
	if n := len(a.NodeGroups()); n != 2 {
		t.Fatalf("NodeGroups() = %d groups, want 2", n)
	}
	g := group(t, a, "pool-a")
	if g.MinSize() != 1 || g.MaxSize() != 5 {
		t.Fatalf("pool-a bounds %d..%d, want 1..5", g.MinSize(), g.MaxSize())
	}
	if err := g.IncreaseSize(2); err != nil {
		t.Fatal(err)
	}
	if s, err := g.TargetSize(); s != 4 || err != nil {
		t.Fatalf("TargetSize after +2 = %d, %v; want 4", s, err)
	}
	if err := g.DecreaseTargetSize(-1); err != nil {
		t.Fatal(err)
	}
	// Beyond the maximum: refused by our size rule, before any cloud call,
	// and counted as refused.
	if err := g.IncreaseSize(10); err == nil {
		t.Fatal("IncreaseSize past max succeeded")
	}
	list, err := g.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	var running string
	for _, in := range list {
		if in.Status != nil && in.Status.State == caprovider.InstanceRunning {
			running = in.Id
		}
	}
	if running == "" {
		t.Fatalf("no running instance in %v", list)
	}
	if err := g.DeleteNodes([]*apiv1.Node{{Spec: apiv1.NodeSpec{ProviderID: running}}}); err != nil {
		t.Fatal(err)
	}
	if s, _ := g.TargetSize(); s != 2 {
		t.Fatalf("TargetSize after delete = %d, want 2", s)
	}
	for _, c := range []struct {
		op, outcome string
		want        float64
	}{
		{metrics.OperationIncrease, "applied", 1},
		{metrics.OperationIncrease, "refused", 1},
		{metrics.OperationDecrease, "applied", 1},
		{metrics.OperationDelete, "applied", 1},
	} {
		got := counterValue(t, reg, "cluster_autoscaler_provider_mutations_total", map[string]string{"node_group": "pool-a", "operation": c.op, "outcome": c.outcome})
		if got != c.want {
			t.Errorf("mutations_total{%s,%s} = %v, want %v", c.op, c.outcome, got, c.want)
		}
	}
	if got := counterValue(t, reg, "cluster_autoscaler_provider_node_group_size", map[string]string{"node_group": "pool-a", "kind": "target"}); got != 2 {
		t.Errorf("node_group_size{pool-a,target} = %v, want 2", got)
	}
}

// counterValue reads one series of a counter or gauge, failing when it is absent.
func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	if found, _ := cloudprovidertest.MatchingSeries(t, reg, name, labels); len(found) == 0 {
		t.Fatalf("no series %s%v", name, labels)
	}
	return cloudprovidertest.MetricValue(t, reg, name, labels)
}

// TestUpstreamOnlyMethods: what upstream has and ours does not answers as
// upstream's providers do, CA's ErrNotImplemented by identity (CA compares
// with ==).
func TestUpstreamOnlyMethods(t *testing.T) {
	t.Parallel()
	a, _, _ := newAdapted(t)
	g := group(t, a, "pool-a")
	if err := g.AtomicIncreaseSize(1); err != caprovider.ErrNotImplemented {
		t.Errorf("AtomicIncreaseSize = %v", err)
	}
	if err := g.ForceDeleteNodes(nil); err != caprovider.ErrNotImplemented {
		t.Errorf("ForceDeleteNodes = %v", err)
	}
	if _, err := g.Create(); err != caprovider.ErrNotImplemented {
		t.Errorf("Create = %v", err)
	}
	if err := g.Delete(); err != caprovider.ErrNotImplemented {
		t.Errorf("Delete = %v", err)
	}
	if !g.Exist() || g.Autoprovisioned() {
		t.Errorf("Exist, Autoprovisioned = %v, %v; want true, false", g.Exist(), g.Autoprovisioned())
	}
	if _, err := a.NewNodeGroup("m", nil, nil, nil, nil); err != caprovider.ErrNotImplemented {
		t.Errorf("NewNodeGroup = %v", err)
	}
	if types, err := a.GetAvailableMachineTypes(); len(types) != 0 || err != nil {
		t.Errorf("GetAvailableMachineTypes = %v, %v", types, err)
	}
	rl, err := a.GetResourceLimiter()
	if err != nil || rl.GetMax("cpu") != 64 {
		t.Errorf("GetResourceLimiter = %v, %v; want CA's limiter (cpu max 64)", rl, err)
	}
	pm, perr := a.Pricing()
	if perr != nil || pm == nil {
		t.Fatalf("Pricing = %v, %v; want the provider's model", pm, perr)
	}
	start := time.Unix(0, 0)
	if price, err := pm.NodePrice(&apiv1.Node{}, start, start.Add(time.Hour)); err != nil || price <= 0 {
		t.Errorf("NodePrice over an hour = %v, %v; want the in-memory flat price", price, err)
	}
	if l := a.GPULabel(); l != cloudprovidertest.InMemoryGPULabel {
		t.Errorf("GPULabel = %q", l)
	}
	gpuNode := &apiv1.Node{}
	gpuNode.Labels = map[string]string{cloudprovidertest.InMemoryGPULabel: "a100"}
	if cfg := a.GetNodeGpuConfig(gpuNode); cfg == nil || cfg.Label != cloudprovidertest.InMemoryGPULabel {
		t.Errorf("GetNodeGpuConfig of a GPU node = %+v", cfg)
	}
	if cfg := a.GetNodeGpuConfig(&apiv1.Node{}); cfg != nil {
		t.Errorf("GetNodeGpuConfig of a plain node = %+v, want nil", cfg)
	}
}

func TestTemplateAndOptions(t *testing.T) {
	t.Parallel()
	a, _, _ := newAdapted(t)
	info, err := group(t, a, "pool-a").TemplateNodeInfo()
	if err != nil || info == nil || info.Node() == nil {
		t.Fatalf("TemplateNodeInfo(pool-a) = %v, %v", info, err)
	}
	if n := len(info.Pods()); n != 0 {
		t.Errorf("template has %d pods, want none (as CA's externalgrpc client builds it)", n)
	}
	b := group(t, a, "pool-b")
	if _, err := b.TemplateNodeInfo(); err != caprovider.ErrNotImplemented {
		t.Errorf("TemplateNodeInfo without a template = %v, want upstream's ErrNotImplemented", err)
	}
	if _, err := group(t, a, "pool-a").GetOptions(caconfig.NodeGroupAutoscalingOptions{}); err != caprovider.ErrNotImplemented {
		t.Errorf("GetOptions without overrides = %v, want upstream's ErrNotImplemented", err)
	}
	defaults := caconfig.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold: 0.5,
		ScaleDownUnneededTime:         10 * time.Minute,
		MaxNodeStartupTime:            15 * time.Minute,
		AllowNonAtomicScaleUpToMax:    true,
	}
	o, err := b.GetOptions(defaults)
	if err != nil || o == nil {
		t.Fatalf("GetOptions(pool-b) = %v, %v", o, err)
	}
	if o.ScaleDownUnneededTime == defaults.ScaleDownUnneededTime {
		t.Errorf("pool-b's override of ScaleDownUnneededTime was lost: %v", o.ScaleDownUnneededTime)
	}
	// The fields our contract does not carry keep CA's defaults.
	if o.MaxNodeStartupTime != defaults.MaxNodeStartupTime || !o.AllowNonAtomicScaleUpToMax || o.ScaleDownUtilizationThreshold != 0.5 {
		t.Errorf("GetOptions dropped CA's defaults: %+v", o)
	}
}

func TestNodeGroupForNodeAndHasInstance(t *testing.T) {
	t.Parallel()
	a, _, _ := newAdapted(t)
	list, err := group(t, a, "pool-a").Nodes()
	if err != nil || len(list) == 0 {
		t.Fatalf("Nodes = %v, %v", list, err)
	}
	node := &apiv1.Node{Spec: apiv1.NodeSpec{ProviderID: list[0].Id}}
	g, err := a.NodeGroupForNode(node)
	if err != nil || g == nil || g.Id() != "pool-a" {
		t.Fatalf("NodeGroupForNode = %v, %v; want pool-a", g, err)
	}
	if ok, err := a.HasInstance(node); !ok || err != nil {
		t.Errorf("HasInstance of a listed node = %v, %v; want true", ok, err)
	}
	foreign := &apiv1.Node{Spec: apiv1.NodeSpec{ProviderID: "other://x"}}
	g, err = a.NodeGroupForNode(foreign)
	if g != nil || err != nil {
		// A typed nil inside the interface would read as a group to CA.
		t.Fatalf("NodeGroupForNode of a foreign node = %#v, %v; want an untyped nil", g, err)
	}
	if ok, err := a.HasInstance(foreign); !ok || err != caprovider.ErrNotImplemented {
		t.Errorf("HasInstance of a foreign node = %v, %v; want true, ErrNotImplemented (CA then reads the taints)", ok, err)
	}
}

func TestInstanceStatusMapping(t *testing.T) {
	t.Parallel()
	failed := cloudprovider.FailedCreation(cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OutOfResourcesErrorClass, ErrorCode: "quota", ErrorMessage: "no quota"})
	got := instanceStatus(failed)
	if got.State != caprovider.InstanceCreating || got.ErrorInfo == nil || got.ErrorInfo.ErrorClass != caprovider.OutOfResourcesErrorClass || got.ErrorInfo.ErrorCode != "quota" {
		t.Errorf("failed creation = %+v", got)
	}
	if instanceStatus(nil) != nil {
		t.Error("a nil status must stay nil (CA reads it as running)")
	}
	for _, s := range []cloudprovider.InstanceState{cloudprovider.InstanceRunning, cloudprovider.InstanceCreating, cloudprovider.InstanceDeleting} {
		if got := instanceStatus(&cloudprovider.InstanceStatus{State: s}); int(got.State) != int(s) || got.ErrorInfo != nil {
			t.Errorf("state %s = %+v", s, got)
		}
	}
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		typ  caerrors.AutoscalerErrorType
		same error
	}{
		{cloudprovider.Errorf(cloudprovider.ErrNodeGroupNotFound, "node group %q", "x"), caerrors.NodeGroupDoesNotExistError, cloudprovider.ErrNodeGroupNotFound},
		{cloudprovider.Errorf(cloudprovider.ErrQuotaExceeded, "quota"), caerrors.CloudProviderError, cloudprovider.ErrQuotaExceeded},
		{cloudprovider.Errorf(cloudprovider.ErrConfig, "bad"), caerrors.ConfigurationError, cloudprovider.ErrConfig},
	}
	for _, c := range cases {
		got := toUpstream(c.err)
		var ae caerrors.AutoscalerError
		if !errors.As(got, &ae) || ae.Type() != c.typ {
			t.Errorf("toUpstream(%v) = %v, want type %s", c.err, got, c.typ)
		}
		if !errors.Is(got, c.same) {
			t.Errorf("toUpstream(%v) lost our class %v", c.err, c.same)
		}
	}
	if toUpstream(cloudprovider.ErrNotImplemented) != caprovider.ErrNotImplemented {
		t.Error("ErrNotImplemented must become upstream's, by identity")
	}
	if toUpstream(nil) != nil {
		t.Error("nil must stay nil")
	}
}

// TestRefreshFailureKeepsSnapshot: a failed refresh is CA's error (its loop
// stops, as for upstream's providers) and the groups stay served.
func TestRefreshFailureKeepsSnapshot(t *testing.T) {
	t.Parallel()
	a, inner, _ := newAdapted(t)
	inner.Cloud().FailNext(5)
	if err := a.Refresh(); err == nil {
		t.Fatal("Refresh with the cloud failing succeeded")
	}
	if n := len(a.NodeGroups()); n != 2 {
		t.Fatalf("after a failed refresh %d groups are served, want the last snapshot's 2", n)
	}
}

// noPrices is a provider without a price source.
type noPrices struct{ cloudprovider.CloudProvider }

func (noPrices) Pricing(context.Context) (cloudprovider.PricingModel, error) {
	return nil, cloudprovider.Errorf(cloudprovider.ErrNotImplemented, "no price source")
}

func TestPricingNotImplemented(t *testing.T) {
	t.Parallel()
	_, inner, _ := newAdapted(t)
	a := New(noPrices{inner}, nil, nil)
	if _, err := a.Pricing(); err != caprovider.ErrNotImplemented {
		t.Errorf("Pricing without a price source = %v, want upstream's ErrNotImplemented by identity", err)
	}
}

// TestTemplateUnavailableReported: CA asking a group without a template
// through the adapter is reported as the sidecar's server reports it: the
// template_unavailable_total count on every answer, and one log line per
// group and cause, not one per CA loop. A group with a template is neither.
// Not parallel: klog's output is process-wide.
func TestTemplateUnavailableReported(t *testing.T) {
	buf := cloudprovidertest.CaptureKlog(t)
	a, _, reg := newAdapted(t,
		cloudprovidertest.CloudGroup{ID: "pool-a", Min: 1, Max: 5, Running: 2},
		cloudprovidertest.CloudGroup{ID: "pool-b", Min: 0, Max: 3, Running: 1, NoTemplate: true},
		cloudprovidertest.CloudGroup{ID: "pool-c", Min: 0, Max: 3, NoTemplate: true},
	)
	const loops = 3
	for range loops {
		for _, id := range []string{"pool-a", "pool-b", "pool-c"} {
			_, err := group(t, a, id).TemplateNodeInfo()
			if id == "pool-a" && err != nil {
				t.Fatalf("TemplateNodeInfo(pool-a) = %v, want a template", err)
			}
			if id != "pool-a" && err != caprovider.ErrNotImplemented {
				t.Fatalf("TemplateNodeInfo(%s) = %v, want upstream's ErrNotImplemented", id, err)
			}
		}
	}
	const metric = "cluster_autoscaler_provider_template_unavailable_total"
	for id, want := range map[string]float64{"pool-a": 0, "pool-b": loops, "pool-c": loops} {
		if got := cloudprovidertest.MetricValue(t, reg, metric, map[string]string{"node_group": id}); got != want {
			t.Errorf("%s{node_group=%q} = %v, want %v", metric, id, got, want)
		}
	}
	// klog writes an error line once per severity's output, and every
	// output is buf here: one ErrorS of our own says how many copies a
	// line makes.
	klog.ErrorS(nil, "copies of one error line")
	klog.Flush()
	copies := strings.Count(buf.String(), "copies of one error line")
	for id, want := range map[string]int{"pool-a": 0, "pool-b": 1, "pool-c": 1} {
		line := `"No template for node group; it cannot scale up from zero" err="` + cloudprovider.ErrNotImplemented.Error() + `" nodeGroup="` + id + `"`
		if n := strings.Count(buf.String(), line) / copies; n != want {
			t.Errorf("%d log lines %s over %d loops, want %d:\n%s", n, line, loops, want, buf.String())
		}
	}
}
