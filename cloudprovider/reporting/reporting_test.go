package reporting

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// scriptedStatusProvider is the in-memory provider with scripted instance
// lists and statuses per group, groups that can be hidden, and a scripted
// refresh error, so every figure the reporting decorator derives has a known
// value.
type scriptedStatusProvider struct {
	*cloudprovidertest.InMemoryProvider
	mu         sync.Mutex
	nodes      map[string][]cloudprovider.Instance
	status     map[string]cloudprovider.GroupStatus
	hidden     map[string]bool
	refreshErr error
}

type scriptedStatusGroup struct {
	cloudprovider.NodeGroup
	p *scriptedStatusProvider
}

func newScriptedStatusProvider(t *testing.T, guard groupstate.GuardOptions) *scriptedStatusProvider {
	return &scriptedStatusProvider{
		InMemoryProvider: cloudprovidertest.SeededProvider(t, guard),
		nodes:            map[string][]cloudprovider.Instance{},
		status:           map[string]cloudprovider.GroupStatus{},
		hidden:           map[string]bool{},
	}
}

func (p *scriptedStatusProvider) set(f func(p *scriptedStatusProvider)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func (p *scriptedStatusProvider) Refresh(ctx context.Context) error {
	p.mu.Lock()
	err := p.refreshErr
	p.mu.Unlock()
	if err != nil {
		return err
	}
	return p.InMemoryProvider.Refresh(ctx)
}

func (p *scriptedStatusProvider) NodeGroups(ctx context.Context) ([]cloudprovider.NodeGroup, error) {
	groups, err := p.InMemoryProvider.NodeGroups(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []cloudprovider.NodeGroup
	for _, g := range groups {
		if !p.hidden[g.Id(ctx)] {
			out = append(out, scriptedStatusGroup{NodeGroup: g, p: p})
		}
	}
	return out, nil
}

func (p *scriptedStatusProvider) NodeGroup(ctx context.Context, id string) (cloudprovider.NodeGroup, error) {
	groups, err := p.NodeGroups(ctx)
	return cloudprovidertest.ScanNodeGroup(ctx, groups, err, id)
}

func (g scriptedStatusGroup) Nodes(ctx context.Context) ([]cloudprovider.Instance, error) {
	g.p.mu.Lock()
	list, ok := g.p.nodes[g.Id(ctx)]
	g.p.mu.Unlock()
	if ok {
		return list, nil
	}
	return g.NodeGroup.Nodes(ctx)
}

func (g scriptedStatusGroup) Status(ctx context.Context) cloudprovider.GroupStatus {
	g.p.mu.Lock()
	st, ok := g.p.status[g.Id(ctx)]
	g.p.mu.Unlock()
	if ok {
		return st
	}
	return g.NodeGroup.Status(ctx)
}

// seriesCount is the number of series of name whose labels include labels.
func seriesCount(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) int {
	t.Helper()
	found, _ := cloudprovidertest.MatchingSeries(t, reg, name, labels)
	return len(found)
}

// wantMetric fails unless the series of name with labels has value want.
func wantMetric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string, want float64) {
	t.Helper()
	if seriesCount(t, reg, name, labels) != 1 {
		t.Fatalf("%s %v: no series", name, labels)
	}
	if got := cloudprovidertest.MetricValue(t, reg, name, labels); got != want {
		t.Fatalf("%s %v = %v, want %v", name, labels, got, want)
	}
}

// quarantineEnd is a scripted quarantine's end; the decorator reads only
// whether a group reports one.
var quarantineEnd = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	sizeMetric        = "cluster_autoscaler_provider_node_group_size"
	instancesMetric   = "cluster_autoscaler_provider_node_group_instances"
	quarantinedMetric = "cluster_autoscaler_provider_quarantined_node_groups"
	settingsMetric    = "cluster_autoscaler_provider_node_group_setting_errors"
	refreshErrMetric  = "cluster_autoscaler_provider_refresh_errors_total"
)

// TestReportedAfterRefresh: after a successful refresh the decorated
// provider reports every group's sizes, its instances by state as CA reads
// them, the quarantined groups and each group's settings problems; groups
// that left stop being reported; a failed refresh is counted and leaves the
// last figures in place.
func TestReportedAfterRefresh(t *testing.T) {
	buf := cloudprovidertest.CaptureKlog(t)
	ctx := context.Background()
	p := newScriptedStatusProvider(t, groupstate.GuardOptions{})
	creating := &cloudprovider.InstanceStatus{State: cloudprovider.InstanceCreating}
	p.set(func(p *scriptedStatusProvider) {
		p.nodes["pool-a"] = []cloudprovider.Instance{
			{Id: "inmemory://a-1"}, // no status: running, as CA reads it
			{Id: "inmemory://a-2", Status: &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}},
			{Id: "inmemory://a-3", Status: creating},
			{Id: "inmemory://a-4", Status: &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}},
			{Id: "inmemory://a-5", Status: cloudprovider.FailedCreation(cloudprovider.InstanceErrorInfo{ErrorClass: cloudprovider.OutOfResourcesErrorClass, ErrorCode: "quota"})},
		}
		p.status["pool-a"] = cloudprovider.GroupStatus{
			SettingsSource:  "scripted tags",
			SettingProblems: []cloudprovider.SettingProblem{{Key: "k8s.io/cluster-autoscaler/node-template/autoscaling-options/scaledownunneededtime", Value: "5 minutes", Reason: "not a duration"}},
		}
		p.status["pool-b"] = cloudprovider.GroupStatus{QuarantinedUntil: quarantineEnd}
	})
	reg := prometheus.NewRegistry()
	r := Wrap(p, metrics.New(reg))
	for range 2 {
		if err := r.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}

	for group, sizes := range map[string][3]float64{"pool-a": {1, 5, 2}, "pool-b": {0, 3, 1}} {
		for i, kind := range []string{"min", "max", "target"} {
			wantMetric(t, reg, sizeMetric, map[string]string{"node_group": group, "kind": kind}, sizes[i])
		}
	}
	for state, n := range map[string]float64{"running": 2, "creating": 1, "deleting": 1, "failed": 1} {
		wantMetric(t, reg, instancesMetric, map[string]string{"node_group": "pool-a", "state": state}, n)
	}
	wantMetric(t, reg, instancesMetric, map[string]string{"node_group": "pool-b", "state": "running"}, 1)
	wantMetric(t, reg, quarantinedMetric, nil, 1)
	wantMetric(t, reg, settingsMetric, map[string]string{"node_group": "pool-a"}, 1)
	wantMetric(t, reg, settingsMetric, map[string]string{"node_group": "pool-b"}, 0)
	klog.Flush()
	if n := strings.Count(buf.String(), `"Ignoring a malformed per-group setting" nodeGroup="pool-a" source="scripted tags"`); n != 1 {
		t.Fatalf("%d log lines for one malformed setting over two refreshes, want 1:\n%s", n, buf.String())
	}

	// pool-b leaves: its series go, and it no longer counts as quarantined.
	p.set(func(p *scriptedStatusProvider) { p.hidden["pool-b"] = true })
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sizeMetric, instancesMetric, settingsMetric} {
		if n := seriesCount(t, reg, name, map[string]string{"node_group": "pool-b"}); n != 0 {
			t.Errorf("%s still has %d series of pool-b, which left", name, n)
		}
	}
	wantMetric(t, reg, quarantinedMetric, nil, 0)

	// A failed refresh is counted; the figures of the last good one stay.
	p.set(func(p *scriptedStatusProvider) {
		p.refreshErr = errors.New("cloud down")
		p.status["pool-a"] = cloudprovider.GroupStatus{QuarantinedUntil: quarantineEnd}
	})
	if err := r.Refresh(ctx); err == nil {
		t.Fatal("the scripted refresh error was not returned")
	}
	wantMetric(t, reg, refreshErrMetric, nil, 1)
	wantMetric(t, reg, quarantinedMetric, nil, 0)
	wantMetric(t, reg, sizeMetric, map[string]string{"node_group": "pool-a", "kind": "target"}, 2)
}

// TestReportedAfterMutation: a mutation run through a decorated group
// reports, without a refresh, the group's sizes when the change was applied
// and the quarantined groups whatever its outcome.
func TestReportedAfterMutation(t *testing.T) {
	ctx := context.Background()
	// The in-memory group's guard quarantines it after the lost answer
	// below; the test passes the window on this clock.
	mutationClock := cloudprovidertest.MutationClock()
	p := newScriptedStatusProvider(t, cloudprovidertest.GuardOptions(mutationClock))
	reg := prometheus.NewRegistry()
	r := Wrap(p, metrics.New(reg))
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	poolA := func() cloudprovider.NodeGroup {
		t.Helper()
		groups, err := r.NodeGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if g.Id(ctx) == "pool-a" {
				return g
			}
		}
		t.Fatal("pool-a not served")
		return nil
	}
	target := map[string]string{"node_group": "pool-a", "kind": "target"}

	if err := poolA().IncreaseSize(ctx, 2); err != nil {
		t.Fatal(err)
	}
	wantMetric(t, reg, sizeMetric, target, 4)
	if err := poolA().DecreaseTargetSize(ctx, -1); err != nil {
		t.Fatal(err)
	}
	wantMetric(t, reg, sizeMetric, target, 3)

	// The cloud loses the answer: nothing applied to report, but the group
	// is now quarantined.
	p.Cloud().FailNext(1)
	p.set(func(p *scriptedStatusProvider) {
		p.status["pool-a"] = cloudprovider.GroupStatus{QuarantinedUntil: quarantineEnd}
	})
	if err := poolA().IncreaseSize(ctx, 1); err == nil {
		t.Fatal("the scripted cloud failure was not returned")
	}
	wantMetric(t, reg, sizeMetric, target, 3)
	wantMetric(t, reg, quarantinedMetric, nil, 1)

	nodes, err := poolA().Nodes(ctx)
	if err != nil || len(nodes) == 0 {
		t.Fatalf("pool-a nodes = %v, %v", nodes, err)
	}
	p.set(func(p *scriptedStatusProvider) { delete(p.status, "pool-a") })
	cloudprovidertest.PassUnknownOutcomeWindow(mutationClock)
	if err := poolA().DeleteNodes(ctx, []*corev1.Node{{Spec: corev1.NodeSpec{ProviderID: nodes[0].Id}}}); err != nil {
		t.Fatal(err)
	}
	wantMetric(t, reg, sizeMetric, target, 2)
	wantMetric(t, reg, quarantinedMetric, nil, 0)

	// "Not ours" stays a nil group through the decoration, which the
	// NodeGroupForNode handler compares with nil.
	if g, err := r.NodeGroupForNode(ctx, &corev1.Node{Spec: corev1.NodeSpec{ProviderID: "other://x"}}); g != nil || err != nil {
		t.Fatalf("NodeGroupForNode of a foreign node = %v, %v; want nil, nil", g, err)
	}
}

// TestMalformedSettingsReportedOncePerChange: after each refresh the decorator
// counts every group's ignored settings in node_group_setting_errors and logs
// them when they change, not on every refresh.
func TestMalformedSettingsReportedOncePerChange(t *testing.T) {
	buf := cloudprovidertest.CaptureKlog(t)
	bad := map[string]string{
		groupconfig.OptionKey(groupconfig.OptionScaleDownUnneededTime): "5 minutes",
		groupconfig.OptionKey(groupconfig.OptionScaleDownUnreadyTime):  "1m",
	}
	cloud := cloudprovidertest.NewInMemoryCloud(
		cloudprovidertest.CloudGroup{ID: "tagged", Min: 1, Max: 3, Running: 1, Tags: bad},
		cloudprovidertest.CloudGroup{ID: "plain", Min: 1, Max: 3, Running: 1},
	)
	reg := prometheus.NewRegistry()
	r := Wrap(cloudprovidertest.NewInMemoryProvider(cloud), metrics.New(reg))
	refresh := func() {
		t.Helper()
		if err := r.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	gauge := func(want string) {
		t.Helper()
		expected := "# HELP cluster_autoscaler_provider_node_group_setting_errors Per-group settings in the cloud's tags or labels (autoscaling options, template hints) that were ignored because they are malformed, by node group, at the last refresh.\n" +
			"# TYPE cluster_autoscaler_provider_node_group_setting_errors gauge\n" + want
		if err := testutil.GatherAndCompare(reg, strings.NewReader(expected), "cluster_autoscaler_provider_node_group_setting_errors"); err != nil {
			t.Fatal(err)
		}
	}
	refresh()
	refresh()
	gauge(`cluster_autoscaler_provider_node_group_setting_errors{node_group="plain"} 0` + "\n" +
		`cluster_autoscaler_provider_node_group_setting_errors{node_group="tagged"} 1` + "\n")
	klog.Flush()
	if n := strings.Count(buf.String(), "Ignoring a malformed per-group setting"); n != 1 {
		t.Fatalf("%d log lines for one malformed entry over two refreshes, want 1:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), `key="k8s.io/cluster-autoscaler/node-template/autoscaling-options/scaledownunneededtime"`) {
		t.Fatalf("the log line does not name the key:\n%s", buf.String())
	}

	cloud.SetTags("tagged", map[string]string{groupconfig.OptionKey(groupconfig.OptionScaleDownUnneededTime): "5m"})
	refresh()
	gauge(`cluster_autoscaler_provider_node_group_setting_errors{node_group="plain"} 0` + "\n" +
		`cluster_autoscaler_provider_node_group_setting_errors{node_group="tagged"} 0` + "\n")
	klog.Flush()
	if !strings.Contains(buf.String(), `"Per-group settings" nodeGroup="tagged" settings="from in-memory group tags: options scaledownunneededtime=5m0s"`) {
		t.Fatalf("the corrected settings are not logged:\n%s", buf.String())
	}
}

// TestInstancesByStateAfterRefresh: node_group_instances counts each
// group's listed instances by state at every refresh.
func TestInstancesByStateAfterRefresh(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{})
	r := Wrap(p, metrics.New(reg))
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	groups, _ := p.NodeGroups(context.Background())
	for _, g := range groups {
		if g.Id(context.Background()) == "pool-a" {
			if err := g.IncreaseSize(context.Background(), 2); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"running": 2, "creating": 2, "deleting": 0, "failed": 0}
	for state, n := range want {
		if got := cloudprovidertest.MetricValue(t, reg, "cluster_autoscaler_provider_node_group_instances", map[string]string{"node_group": "pool-a", "state": state}); got != n {
			t.Errorf("pool-a %s = %v, want %v", state, got, n)
		}
	}
}

// TestGroupMembershipLoggedOnce: each group's arrival, change of bounds or of
// why it is managed, and departure is logged once, at the default level,
// with its bounds and reason, whatever the number of refreshes in between.
func TestGroupMembershipLoggedOnce(t *testing.T) {
	buf := cloudprovidertest.CaptureKlog(t)
	ctx := context.Background()
	p := newScriptedStatusProvider(t, groupstate.GuardOptions{})
	r := Wrap(p, nil)
	refresh := func() {
		t.Helper()
		if err := r.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lines := func(msg string) []string {
		t.Helper()
		klog.Flush()
		var out []string
		for l := range strings.SplitSeq(buf.String(), "\n") {
			if strings.Contains(l, `"`+msg+`"`) {
				// klog's default level writes Info lines with an I prefix.
				if !strings.HasPrefix(l, "I") {
					t.Errorf("%q not logged as Info: %s", msg, l)
				}
				out = append(out, l)
			}
		}
		return out
	}
	wantOne := func(msg string, parts ...string) {
		t.Helper()
		got := lines(msg)
		if len(got) != 1 {
			t.Fatalf("%d %q lines, want 1:\n%s", len(got), msg, buf.String())
		}
		for _, part := range parts {
			if !strings.Contains(got[0], part) {
				t.Errorf("%q line lacks %s: %s", msg, part, got[0])
			}
		}
	}

	refresh()
	refresh()
	if got := lines("Managing node group"); len(got) != 2 {
		t.Fatalf("%d arrival lines for two groups over two refreshes, want 2:\n%s", len(got), buf.String())
	}
	if got := lines("Managing node group"); !strings.Contains(got[0], `nodeGroup="pool-a" min=1 max=5 managed="cluster"`) {
		t.Errorf("arrival line lacks the group's bounds and reason: %s", got[0])
	}

	p.set(func(p *scriptedStatusProvider) {
		p.status["pool-a"] = cloudprovider.GroupStatus{Managed: cloudprovider.Management{By: cloudprovider.ManagedByNodes, Detail: "1:5:pool-a"}}
	})
	refresh()
	refresh()
	wantOne("Node group changed", `nodeGroup="pool-a"`, `managed="--nodes (1:5:pool-a)"`, `previouslyManaged="cluster"`)

	p.set(func(p *scriptedStatusProvider) { p.hidden["pool-b"] = true })
	refresh()
	refresh()
	wantOne("Node group no longer managed", `nodeGroup="pool-b"`, `wasManaged="cluster"`)
	if got := lines("Managing node group"); len(got) != 2 {
		t.Errorf("%d arrival lines after a change and a departure, want still 2", len(got))
	}
}
