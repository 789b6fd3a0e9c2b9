package cloudprovidertest

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// In-memory provider constants.
const (
	// InMemoryProviderName is the registry-style name of the in-memory provider.
	InMemoryProviderName = "inmemory"
	// InMemoryProviderIDPrefix prefixes every in-memory instance's providerID.
	InMemoryProviderIDPrefix = "inmemory://"
	// InMemoryGroupLabel is set on nodes of in-memory groups.
	InMemoryGroupLabel = "inmemory.test/group"
	// InMemoryGPULabel marks in-memory GPU nodes.
	InMemoryGPULabel = "inmemory.test/gpu"
)

// CloudGroup seeds one group of an InMemoryCloud.
type CloudGroup struct {
	ID       string
	Min, Max int
	// Running instances created at seed time.
	Running int
	// NoTemplate makes TemplateNodeInfo answer ErrNotImplemented.
	NoTemplate bool
	// Options, when set, are returned by GetOptions (with ScaleDownUnneededTime overridden).
	Options bool
	// Tags are the group's metadata, read for per-group settings
	// (groupconfig.ParseGroupSettings, AWS spelling).
	Tags map[string]string
}

type cloudInstance struct {
	id    string
	state cloudprovider.InstanceState
}

type cloudGroup struct {
	spec      CloudGroup
	desired   int
	instances []cloudInstance
}

// InMemoryCloud is a tiny stateful "cloud" of groups and instances. It counts
// requests and can fail the next n of them, like the providers' HTTP fakes.
type InMemoryCloud struct {
	mu       sync.Mutex
	groups   map[string]*cloudGroup
	order    []string
	calls    int
	failNext int
	nextID   int
	// Deleted records every instance id removed by a delete request.
	deleted []string
}

// NewInMemoryCloud seeds a cloud with groups.
func NewInMemoryCloud(groups ...CloudGroup) *InMemoryCloud {
	c := &InMemoryCloud{groups: map[string]*cloudGroup{}}
	for _, g := range groups {
		cg := &cloudGroup{spec: g, desired: g.Running}
		for i := 0; i < g.Running; i++ {
			cg.instances = append(cg.instances, cloudInstance{id: c.newID(g.ID), state: cloudprovider.InstanceRunning})
		}
		c.groups[g.ID] = cg
		c.order = append(c.order, g.ID)
	}
	return c
}

func (c *InMemoryCloud) newID(group string) string {
	c.nextID++
	return fmt.Sprintf("%s-%04d", group, c.nextID)
}

// Calls returns the number of requests received.
func (c *InMemoryCloud) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// FailNext makes the next n requests fail with ErrUnavailable.
func (c *InMemoryCloud) FailNext(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failNext = n
}

// SetTags replaces a group's tags, as a user editing the group would.
func (c *InMemoryCloud) SetTags(groupID string, tags map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.groups[groupID]; ok {
		g.spec.Tags = maps.Clone(tags)
	}
}

// Deleted returns the ids of instances deleted so far.
func (c *InMemoryCloud) Deleted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.deleted...)
}

// Settle finishes pending work: creating instances run, deleting ones vanish.
func (c *InMemoryCloud) Settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.groups {
		kept := g.instances[:0]
		for _, in := range g.instances {
			switch in.state {
			case cloudprovider.InstanceDeleting:
				continue
			case cloudprovider.InstanceCreating:
				in.state = cloudprovider.InstanceRunning
			}
			kept = append(kept, in)
		}
		g.instances = kept
	}
}

// request accounts for one API request and returns the injected failure, if any.
func (c *InMemoryCloud) request() error {
	c.calls++
	if c.failNext > 0 {
		c.failNext--
		// A failed cloud call, not a refusal of ours: its outcome is unknown.
		return fmt.Errorf("injected failure: %w", cloudprovider.ErrUnavailable)
	}
	return nil
}

func (c *InMemoryCloud) list() ([]cloudGroup, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.request(); err != nil {
		return nil, err
	}
	out := make([]cloudGroup, 0, len(c.order))
	for _, id := range c.order {
		g := c.groups[id]
		cp := *g
		cp.instances = append([]cloudInstance(nil), g.instances...)
		out = append(out, cp)
	}
	return out, nil
}

// resize sets the desired size; growing adds creating instances, shrinking
// cancels creating ones only.
func (c *InMemoryCloud) resize(id string, desired int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.request(); err != nil {
		return err
	}
	g, ok := c.groups[id]
	if !ok {
		return cloudprovider.Errorf(cloudprovider.ErrNotFound, "group %s", id)
	}
	live := 0
	for _, in := range g.instances {
		if in.state != cloudprovider.InstanceDeleting {
			live++
		}
	}
	for live < desired {
		g.instances = append(g.instances, cloudInstance{id: c.newID(id), state: cloudprovider.InstanceCreating})
		live++
	}
	for i := len(g.instances) - 1; i >= 0 && live > desired; i-- {
		if g.instances[i].state == cloudprovider.InstanceCreating {
			g.instances = append(g.instances[:i], g.instances[i+1:]...)
			live--
		}
	}
	if live > desired {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "cannot shrink %s below its %d instances", id, live)
	}
	g.desired = desired
	return nil
}

func (c *InMemoryCloud) deleteInstance(groupID, instanceID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.request(); err != nil {
		return err
	}
	g, ok := c.groups[groupID]
	if !ok {
		return cloudprovider.Errorf(cloudprovider.ErrNotFound, "group %s", groupID)
	}
	for i, in := range g.instances {
		if in.id == instanceID && in.state != cloudprovider.InstanceDeleting {
			g.instances[i].state = cloudprovider.InstanceDeleting
			g.desired--
			c.deleted = append(c.deleted, instanceID)
			return nil
		}
	}
	return cloudprovider.Errorf(cloudprovider.ErrNotFound, "instance %s in group %s", instanceID, groupID)
}

// InMemoryProvider implements cloudprovider.CloudProvider over an InMemoryCloud
// the way a real provider should: reads from a snapshot taken at Refresh,
// mutations checked locally before any cloud call, snapshot updated after them.
type InMemoryProvider struct {
	cloud *InMemoryCloud

	mu      sync.RWMutex
	groups  map[string]*inMemoryGroup
	order   []string
	byID    map[string]*inMemoryGroup // providerID -> group
	cleaned bool
}

// NewInMemoryProvider returns a provider bound to cloud; call Refresh before use.
func NewInMemoryProvider(cloud *InMemoryCloud) *InMemoryProvider {
	return &InMemoryProvider{cloud: cloud, groups: map[string]*inMemoryGroup{}, byID: map[string]*inMemoryGroup{}}
}

// NewInMemoryEnv builds a conformance Env over a fresh cloud seeded with groups.
func NewInMemoryEnv(groups ...CloudGroup) *Env {
	cloud := NewInMemoryCloud(groups...)
	p := NewInMemoryProvider(cloud)
	return &Env{
		Provider:   p,
		CloudCalls: cloud.Calls,
		Node: func(inst cloudprovider.Instance) *corev1.Node {
			return p.node(inst.Id)
		},
		Settle:        cloud.Settle,
		FailNextCalls: cloud.FailNext,
		SetGroupSettings: func(groupID string, seed SettingsSeed) {
			cloud.SetTags(groupID, seed.AWSKeys())
		},
		NotApplicable: map[string]string{
			"AddUnseenInstance":  "the in-memory cloud has no other actor to launch instances behind the provider's back",
			"AddFailedInstance":  "the in-memory cloud never fails to start an instance",
			"FailNextScaleUp":    "the in-memory cloud fills every scale-up",
			"HoldRemoval":        "the in-memory cloud lists a removed instance as deleting at once: its listing never lags a removal",
			"InjectListingFault": "the in-memory cloud answers a listing at once, with nothing to hold it while a mutation runs",
		},
	}
}

// Cloud returns the cloud behind the provider.
func (p *InMemoryProvider) Cloud() *InMemoryCloud { return p.cloud }

// CleanedUp reports whether Cleanup was called.
func (p *InMemoryProvider) CleanedUp() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.cleaned
}

func (p *InMemoryProvider) node(providerID string) *corev1.Node {
	p.mu.RLock()
	g := p.byID[providerID]
	p.mu.RUnlock()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: providerID[len(InMemoryProviderIDPrefix):], Labels: map[string]string{}}}
	n.Spec.ProviderID = providerID
	if g != nil {
		n.Labels[InMemoryGroupLabel] = g.id
	}
	return n
}

// Name implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) Name() string { return InMemoryProviderName }

// NodeGroups implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) NodeGroups(ctx context.Context) ([]cloudprovider.NodeGroup, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]cloudprovider.NodeGroup, 0, len(p.order))
	for _, id := range p.order {
		out = append(out, p.groups[id])
	}
	return out, nil
}

// NodeGroupForNode implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) NodeGroupForNode(ctx context.Context, node *corev1.Node) (cloudprovider.NodeGroup, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if g, ok := p.byID[node.Spec.ProviderID]; ok {
		return g, nil
	}
	return nil, nil
}

// Pricing implements cloudprovider.CloudProvider with a flat hourly price.
func (p *InMemoryProvider) Pricing(ctx context.Context) (cloudprovider.PricingModel, error) {
	return inMemoryPricing{}, nil
}

// GPULabel implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) GPULabel(ctx context.Context) (string, error) {
	return InMemoryGPULabel, nil
}

// GetAvailableGPUTypes implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) GetAvailableGPUTypes(ctx context.Context) (map[string]struct{}, error) {
	return map[string]struct{}{"test-gpu": {}}, nil
}

// Cleanup implements cloudprovider.CloudProvider.
func (p *InMemoryProvider) Cleanup(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleaned = true
	return nil
}

// Refresh implements cloudprovider.CloudProvider: one list call.
func (p *InMemoryProvider) Refresh(ctx context.Context) error {
	groups, err := p.cloud.list()
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	byID := map[string]*inMemoryGroup{}
	next := map[string]*inMemoryGroup{}
	var order []string
	for _, cg := range groups {
		g := p.groups[cg.spec.ID]
		if g == nil {
			g = &inMemoryGroup{p: p, id: cg.spec.ID}
		}
		g.mu.Lock()
		g.spec = cg.spec
		g.settings = groupconfig.ParseGroupSettings("in-memory group tags", cg.spec.Tags)
		g.target = cg.desired
		g.instances = cg.instances
		for _, in := range cg.instances {
			byID[InMemoryProviderIDPrefix+in.id] = g
		}
		g.mu.Unlock()
		next[g.id] = g
		order = append(order, g.id)
	}
	p.groups, p.order, p.byID = next, order, byID
	return nil
}

type inMemoryGroup struct {
	p  *InMemoryProvider
	id string

	mu        sync.Mutex
	spec      CloudGroup
	settings  groupconfig.GroupSettings
	target    int
	instances []cloudInstance
}

// Status implements cloudprovider.NodeGroup. The in-memory group has no
// mutation guard, so it is never quarantined.
func (g *inMemoryGroup) Status(context.Context) cloudprovider.GroupStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.settings.Status()
}

func (g *inMemoryGroup) Id(ctx context.Context) string { return g.id }

func (g *inMemoryGroup) MinSize(ctx context.Context) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.spec.Min
}

func (g *inMemoryGroup) MaxSize(ctx context.Context) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.spec.Max
}

func (g *inMemoryGroup) Debug(ctx context.Context) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := fmt.Sprintf("%s min %d max %d target %d", g.id, g.spec.Min, g.spec.Max, g.target)
	if s := g.settings.Summary(); s != "" {
		d += "; settings " + s
	}
	return d
}

func (g *inMemoryGroup) TargetSize(ctx context.Context) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.target, nil
}

func (g *inMemoryGroup) IncreaseSize(ctx context.Context, delta int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := groupstate.CheckIncrease(g.id, delta, g.target, g.spec.Max); err != nil {
		return err
	}
	if err := g.p.cloud.resize(g.id, g.target+delta); err != nil {
		return fmt.Errorf("resize %s to %d: %w", g.id, g.target+delta, err)
	}
	g.target += delta
	return nil
}

func (g *inMemoryGroup) live() int {
	n := 0
	for _, in := range g.instances {
		if in.state != cloudprovider.InstanceDeleting {
			n++
		}
	}
	return n
}

func (g *inMemoryGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := groupstate.CheckDecrease(g.id, delta, g.target, g.live()); err != nil {
		return err
	}
	if err := g.p.cloud.resize(g.id, g.target+delta); err != nil {
		return fmt.Errorf("resize %s to %d: %w", g.id, g.target+delta, err)
	}
	g.target += delta
	return nil
}

func (g *inMemoryGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		id, err := cloudprovider.ParseProviderID(InMemoryProviderIDPrefix, n.Spec.ProviderID)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		found := false
		for _, in := range g.instances {
			found = found || (in.id == id && in.state != cloudprovider.InstanceDeleting)
		}
		if !found {
			return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s does not belong to node group %s", cloudprovider.NodeName(n.Name, n.Spec.ProviderID), g.id)
		}
		ids = append(ids, id)
	}
	if err := groupstate.CheckDeleteMin(g.id, g.target, g.spec.Min, nodes); err != nil {
		return err
	}
	for i, id := range ids {
		if err := g.p.cloud.deleteInstance(g.id, id); err != nil {
			return fmt.Errorf("delete instance %s (deleted before failing: %v): %w", id, ids[:i], err)
		}
		g.target--
		for j := range g.instances {
			if g.instances[j].id == id {
				g.instances[j].state = cloudprovider.InstanceDeleting
			}
		}
	}
	return nil
}

func (g *inMemoryGroup) Nodes(ctx context.Context) ([]cloudprovider.Instance, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]cloudprovider.Instance, 0, len(g.instances))
	for _, in := range g.instances {
		out = append(out, cloudprovider.Instance{Id: InMemoryProviderIDPrefix + in.id, Status: &cloudprovider.InstanceStatus{State: in.state}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out, nil
}

func (g *inMemoryGroup) TemplateNodeInfo(ctx context.Context) (*corev1.Node, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.spec.NoTemplate {
		return nil, cloudprovider.ErrNotImplemented
	}
	return groupconfig.BuildTemplateNode(groupconfig.TemplateSpec{
		GroupID: g.id, CPUs: 2, MemoryBytes: 4 << 30,
		ProviderLabels: map[string]string{InMemoryGroupLabel: g.id},
		Hints:          g.settings.Hints, HintsSource: g.settings.Source,
	}), nil
}

func (g *inMemoryGroup) GetOptions(ctx context.Context, defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.spec.Options {
		return g.settings.GetOptions(defaults)
	}
	o := defaults
	o.ScaleDownUnneededTime = 42 * time.Minute
	return &o, nil
}

type inMemoryPricing struct{}

// InMemoryHourlyPrice is the in-memory provider's price per node-hour.
const InMemoryHourlyPrice = 0.5

func (inMemoryPricing) NodePrice(ctx context.Context, node *corev1.Node, start, end time.Time) (float64, error) {
	return InMemoryHourlyPrice * end.Sub(start).Hours(), nil
}

func (inMemoryPricing) PodPrice(ctx context.Context, pod *corev1.Pod, start, end time.Time) (float64, error) {
	return 0.01 * end.Sub(start).Hours(), nil
}

// TemplateNode builds a minimal ready template node with cpu, memory and 110 pods.
func TemplateNode(name string, labels map[string]string, cpu int64, memoryBytes int64) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memoryBytes, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	all := map[string]string{"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
	for k, v := range labels {
		all[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}
