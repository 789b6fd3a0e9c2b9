package inspect

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// fakeProvider is a small stateful provider that records every call inspect
// causes, so tests can assert that reads mutate nothing.
type fakeProvider struct {
	mu        sync.Mutex
	groups    []*fakeGroup
	refreshes int
	mutations []string
	// noPricing makes Pricing not implemented.
	noPricing bool
	// refreshErr makes every Refresh fail.
	refreshErr error
	// groupsErr makes NodeGroups fail.
	groupsErr error
}

type fakeGroup struct {
	p         *fakeProvider
	id        string
	min, max  int
	target    int
	instances []cloudprovider.Instance
	template  *corev1.Node
	options   *cloudprovider.NodeGroupAutoscalingOptions
	managed   cloudprovider.Management
}

// newFakeProvider returns two groups: "workers" (named by --nodes, 2
// running instances and one whose creation failed, a template, no option
// overrides) and "gpu" (empty, no template, overridden options, and no word
// on why it is managed).
func newFakeProvider() *fakeProvider {
	p := &fakeProvider{}
	tmpl := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "template-workers", Labels: map[string]string{
			"node.kubernetes.io/instance-type": "m.large", "pool": "workers"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
				"nvidia.com/gpu": resource.MustParse("1")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3800m"), corev1.ResourceMemory: resource.MustParse("15Gi")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	p.groups = []*fakeGroup{
		{p: p, id: "workers", min: 1, max: 5, target: 3, template: tmpl, managed: cloudprovider.Management{By: cloudprovider.ManagedByNodes, Detail: "1:5:workers"}, instances: []cloudprovider.Instance{
			{Id: "fake://w-1", Status: &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}},
			{Id: "fake://w-2", Status: &cloudprovider.InstanceStatus{State: cloudprovider.InstanceRunning}},
			{Id: "fake://w-3", Status: &cloudprovider.InstanceStatus{State: cloudprovider.InstanceCreating, ErrorInfo: &cloudprovider.InstanceErrorInfo{
				ErrorClass: cloudprovider.OutOfResourcesErrorClass, ErrorCode: "QUOTA", ErrorMessage: "instance quota reached"}}},
			{Id: "fake://w-4"},
		}},
		{p: p, id: "gpu", min: 0, max: 2, options: &cloudprovider.NodeGroupAutoscalingOptions{
			ScaleDownUtilizationThreshold: 0.2, ScaleDownGpuUtilizationThreshold: 0.3, ZeroOrMaxNodeScaling: true}},
	}
	return p
}

func (p *fakeProvider) record(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mutations = append(p.mutations, s)
}

func (p *fakeProvider) Mutations() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.mutations...)
}

func (p *fakeProvider) Refreshes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshes
}

func (p *fakeProvider) Name() string { return "fake" }

func (p *fakeProvider) NodeGroups(context.Context) ([]cloudprovider.NodeGroup, error) {
	if p.groupsErr != nil {
		return nil, p.groupsErr
	}
	out := make([]cloudprovider.NodeGroup, len(p.groups))
	for i, g := range p.groups {
		out[i] = g
	}
	return out, nil
}

func (p *fakeProvider) NodeGroup(ctx context.Context, id string) (cloudprovider.NodeGroup, error) {
	groups, err := p.NodeGroups(ctx)
	return cloudprovidertest.ScanNodeGroup(ctx, groups, err, id)
}

func (p *fakeProvider) NodeGroupForNode(_ context.Context, n *corev1.Node) (cloudprovider.NodeGroup, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.groups {
		for _, in := range g.instances {
			if in.Id == n.Spec.ProviderID {
				return g, nil
			}
		}
	}
	return nil, nil
}

func (p *fakeProvider) Pricing(context.Context) (cloudprovider.PricingModel, error) {
	if p.noPricing {
		return nil, cloudprovider.ErrNotImplemented
	}
	return fakePricing{}, nil
}

// fakePricing prices by the instance-type label only, as real providers must:
// CA prices template nodes, which have no providerID.
type fakePricing struct{}

func (fakePricing) NodePrice(_ context.Context, n *corev1.Node, start, end time.Time) (float64, error) {
	if n.Labels["node.kubernetes.io/instance-type"] != "m.large" || n.Spec.ProviderID != "" {
		return 0, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "unknown instance type")
	}
	return 0.25 * end.Sub(start).Hours(), nil
}

func (fakePricing) PodPrice(context.Context, *corev1.Pod, time.Time, time.Time) (float64, error) {
	return 0, nil
}

func (p *fakeProvider) GPULabel(context.Context) (string, error) { return "fake.example/gpu", nil }

func (p *fakeProvider) GetAvailableGPUTypes(context.Context) (map[string]struct{}, error) {
	return map[string]struct{}{"a100": {}, "l4": {}}, nil
}

func (p *fakeProvider) Cleanup(context.Context) error { return nil }

func (p *fakeProvider) Refresh(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshes++
	return p.refreshErr
}

func (g *fakeGroup) Id(context.Context) string    { return g.id }
func (g *fakeGroup) MinSize(context.Context) int  { return g.min }
func (g *fakeGroup) MaxSize(context.Context) int  { return g.max }
func (g *fakeGroup) Debug(context.Context) string { return "fake group " + g.id }

func (g *fakeGroup) TargetSize(context.Context) (int, error) {
	g.p.mu.Lock()
	defer g.p.mu.Unlock()
	return g.target, nil
}

func (g *fakeGroup) IncreaseSize(_ context.Context, delta int) error {
	g.p.mu.Lock()
	defer g.p.mu.Unlock()
	if g.target+delta > g.max {
		return cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "target %d + %d exceeds max %d", g.target, delta, g.max)
	}
	g.target += delta
	g.p.mutations = append(g.p.mutations, "increase "+g.id)
	return nil
}

func (g *fakeGroup) DeleteNodes(_ context.Context, nodes []*corev1.Node) error {
	g.p.mu.Lock()
	defer g.p.mu.Unlock()
	for _, n := range nodes {
		if _, fake := n.Annotations[cloudprovider.FakeNodeReasonAnnotation]; fake {
			return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "inspect must send real-looking nodes")
		}
		if n.Name != n.Spec.ProviderID {
			return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "want name == providerID")
		}
		for i := range g.instances {
			if g.instances[i].Id == n.Spec.ProviderID {
				g.instances[i].Status = &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
			}
		}
		g.target--
		g.p.mutations = append(g.p.mutations, "delete "+n.Spec.ProviderID)
	}
	return nil
}

func (g *fakeGroup) DecreaseTargetSize(context.Context, int) error {
	g.p.record("decrease " + g.id)
	return nil
}

func (g *fakeGroup) Nodes(context.Context) ([]cloudprovider.Instance, error) {
	g.p.mu.Lock()
	defer g.p.mu.Unlock()
	return append([]cloudprovider.Instance(nil), g.instances...), nil
}

func (g *fakeGroup) Status(context.Context) cloudprovider.GroupStatus {
	return cloudprovider.GroupStatus{Managed: g.managed}
}

func (g *fakeGroup) TemplateNodeInfo(context.Context) (*corev1.Node, error) {
	if g.template == nil {
		return nil, cloudprovider.ErrNotImplemented
	}
	return g.template.DeepCopy(), nil
}

func (g *fakeGroup) GetOptions(_ context.Context, d cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	if g.options == nil {
		return nil, nil
	}
	o := d
	o.ScaleDownUtilizationThreshold = g.options.ScaleDownUtilizationThreshold
	o.ScaleDownGpuUtilizationThreshold = g.options.ScaleDownGpuUtilizationThreshold
	o.ZeroOrMaxNodeScaling = g.options.ZeroOrMaxNodeScaling
	return &o, nil
}

// serve runs the real externalgrpc server for p on a loopback port (or on
// lis when given) and returns its address.
func serve(t *testing.T, p cloudprovider.CloudProvider, tlsCfg *tls.Config, lis net.Listener) string {
	t.Helper()
	if lis == nil {
		var err error
		if lis, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	var opts []grpc.ServerOption
	if tlsCfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	gs := grpc.NewServer(opts...)
	protos.RegisterCloudProviderServer(gs, externalgrpc.NewServer(p, externalgrpc.Options{MaxStaleness: testMaxStaleness}))
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return lis.Addr().String()
}

// testMaxStaleness is the --max-staleness every test server announces.
const testMaxStaleness = 45 * time.Second

// inspectRun runs the subcommand and returns its exit code, stdout and stderr.
func inspectRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}
