package externalgrpc

import (
	"context"
	"errors"
	"fmt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// Options tunes a Server.
type Options struct {
	// Metrics receives request and size metrics; nil records nothing.
	Metrics *metrics.Metrics
	// RefreshTimeout bounds one provider refresh running in the background
	// (default 2m). It is independent of CA's per-RPC deadline.
	RefreshTimeout time.Duration
	// RefreshMargin is how long before CA's deadline a Refresh RPC stops waiting
	// for a slow refresh and answers from the last snapshot (default 500ms).
	RefreshMargin time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxStaleness is the oldest data the provider serves (--max-staleness);
	// NodeGroups answers carry it in the MaxStalenessHeader header, so
	// inspect can show it. Zero sends nothing.
	MaxStaleness time.Duration
}

// MaxStalenessHeader is the response header of NodeGroups that carries the
// server's --max-staleness, as a Go duration.
const MaxStalenessHeader = "x-cap-max-staleness"

// Server adapts a cloudprovider.CloudProvider to the externalgrpc service.
type Server struct {
	protos.UnimplementedCloudProviderServer

	provider cloudprovider.CloudProvider
	opts     Options

	mu      sync.Mutex
	current *refreshRun
	ready   atomic.Bool

	// settingProblems remembers each group's ignored settings, so they are
	// logged when they change, not after every refresh.
	settingsMu      sync.Mutex
	settingProblems map[string]string

	// seenLegacy and seenCurrent record whether a CA of that protocol
	// generation has been logged (once each).
	seenLegacy, seenCurrent atomic.Bool

	// templateReasons remembers why each group has no template, so the
	// reason is logged when it changes, not on every CA loop.
	templateMu      sync.Mutex
	templateReasons map[string]string
}

// templateUnavailable counts a group without a template and logs why.
func (s *Server) templateUnavailable(groupID string, err error) {
	s.opts.Metrics.TemplateUnavailable(groupID)
	s.templateMu.Lock()
	defer s.templateMu.Unlock()
	if s.templateReasons == nil {
		s.templateReasons = map[string]string{}
	}
	if s.templateReasons[groupID] == err.Error() {
		return
	}
	s.templateReasons[groupID] = err.Error()
	klog.ErrorS(err, "No template for node group; it cannot scale up from zero", "nodeGroup", groupID)
}

type refreshRun struct {
	done chan struct{}
	err  error
}

// NewServer returns a server for provider.
func NewServer(provider cloudprovider.CloudProvider, opts Options) *Server {
	if opts.RefreshTimeout <= 0 {
		opts.RefreshTimeout = 2 * time.Minute
	}
	if opts.RefreshMargin <= 0 {
		opts.RefreshMargin = 500 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Server{provider: provider, opts: opts}
}

// Ready reports whether a refresh has succeeded at least once.
func (s *Server) Ready() bool { return s.ready.Load() }

// triggerRefresh starts a provider refresh unless one is running, and returns
// the run to wait for. Concurrent callers share one run, so back-to-back
// Refresh RPCs never stack cloud calls.
func (s *Server) triggerRefresh() *refreshRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != nil {
		select {
		case <-s.current.done:
		default:
			return s.current
		}
	}
	run := &refreshRun{done: make(chan struct{})}
	s.current = run
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.RefreshTimeout)
		defer cancel()
		start := s.opts.Now()
		err := s.provider.Refresh(ctx)
		if err != nil {
			s.opts.Metrics.RefreshFailed()
			klog.ErrorS(err, "Refresh failed, serving the last good snapshot", "provider", s.provider.Name())
		} else {
			s.ready.Store(true)
			s.recordSizes(ctx)
			s.reportSettings(ctx)
			klog.V(4).InfoS("Refreshed", "provider", s.provider.Name(), "duration", s.opts.Now().Sub(start))
		}
		run.err = err
		close(run.done)
	}()
	return run
}

// RefreshOnce runs a refresh and waits for it (or ctx); main uses it at start-up.
func (s *Server) RefreshOnce(ctx context.Context) error {
	run := s.triggerRefresh()
	select {
	case <-run.done:
		return run.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RefreshUntilReady refreshes at start-up, retrying with backoff until the
// first success or until ctx ends, so reads are served before CA's first
// Refresh (CA asks NodeGroups, NodeGroupForNode and GPULabel before it). A
// configuration error (cloudprovider.ErrConfig) stops the retries and is
// returned, so main can exit 2.
func (s *Server) RefreshUntilReady(ctx context.Context, sleep func(context.Context, time.Duration) error) error {
	if sleep == nil {
		sleep = cloudhttp.SleepContext
	}
	backoff := time.Second
	for !s.Ready() {
		err := s.RefreshOnce(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, cloudprovider.ErrConfig) {
			return err
		}
		if sleep(ctx, backoff) != nil {
			return nil
		}
		if backoff < 30*time.Second {
			backoff *= 2
		}
	}
	return nil
}

func (s *Server) recordSizes(ctx context.Context) {
	if s.opts.Metrics == nil {
		return
	}
	groups, err := s.provider.NodeGroups(ctx)
	if err != nil {
		return
	}
	sizes := make([]metrics.GroupSize, 0, len(groups))
	instances := make(map[string]metrics.InstanceCounts, len(groups))
	for _, g := range groups {
		sizes = append(sizes, groupSize(ctx, g))
		instances[g.Id(ctx)] = instanceCounts(ctx, g)
	}
	s.opts.Metrics.SetGroupSizes(sizes)
	s.opts.Metrics.SetGroupInstances(instances)
	s.recordQuarantined(groups)
}

// recordQuarantined counts the groups refusing changes right now.
func (s *Server) recordQuarantined(groups []cloudprovider.NodeGroup) {
	n := 0
	for _, g := range groups {
		// QuarantinedUntil is zero unless the guard's clock is inside the window.
		if q, ok := g.(groupstate.QuarantineReporter); ok && !q.QuarantinedUntil().IsZero() {
			n++
		}
	}
	s.opts.Metrics.SetQuarantinedGroups(n)
}

// instanceCounts counts a group's listed instances by state, as CA reads
// them: no state is running, and a creating instance with error info failed.
func instanceCounts(ctx context.Context, g cloudprovider.NodeGroup) metrics.InstanceCounts {
	var c metrics.InstanceCounts
	list, err := g.Nodes(ctx)
	if err != nil {
		return c
	}
	for _, in := range list {
		state := cloudprovider.InstanceRunning
		if in.Status != nil && in.Status.State != 0 {
			state = in.Status.State
		}
		switch {
		case state == cloudprovider.InstanceCreating && in.Status.ErrorInfo != nil && in.Status.ErrorInfo.ErrorCode != "":
			c.Failed++
		case state == cloudprovider.InstanceCreating:
			c.Creating++
		case state == cloudprovider.InstanceDeleting:
			c.Deleting++
		default:
			c.Running++
		}
	}
	return c
}

// reportSettings logs and counts, per group, the settings in the cloud's
// metadata that the provider ignored as malformed. This is the one place it
// happens for every provider; a provider only lists the problems.
func (s *Server) reportSettings(ctx context.Context) {
	groups, err := s.provider.NodeGroups(ctx)
	if err != nil {
		return
	}
	counts := map[string]int{}
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	last := s.settingProblems
	s.settingProblems = map[string]string{}
	for _, g := range groups {
		r, ok := g.(groupconfig.SettingsReporter)
		if !ok {
			continue
		}
		id := g.Id(ctx)
		settings := r.Settings()
		counts[id] = len(settings.Problems)
		text := []string{settings.Summary()}
		for _, p := range settings.Problems {
			text = append(text, p.String())
		}
		joined := strings.Join(text, "\n")
		s.settingProblems[id] = joined
		if joined == last[id] {
			continue
		}
		for _, p := range settings.Problems {
			klog.InfoS("Ignoring a malformed per-group setting", "nodeGroup", id, "source", settings.Source, "key", p.Key, "value", p.Value, "reason", p.Reason)
		}
		if summary := settings.Summary(); summary != "" {
			klog.InfoS("Per-group settings", "nodeGroup", id, "settings", summary)
		}
	}
	s.opts.Metrics.SetSettingErrors(counts)
}

func groupSize(ctx context.Context, g cloudprovider.NodeGroup) metrics.GroupSize {
	target, _ := g.TargetSize(ctx)
	return metrics.GroupSize{ID: g.Id(ctx), Min: g.MinSize(ctx), Max: g.MaxSize(ctx), Target: target}
}

// group resolves a request's group id against the current snapshot.
func (s *Server) group(ctx context.Context, id string) (cloudprovider.NodeGroup, error) {
	if id == "" {
		return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group id is empty")
	}
	groups, err := s.provider.NodeGroups(ctx)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		if g.Id(ctx) == id {
			return g, nil
		}
	}
	return nil, cloudprovider.Errorf(cloudprovider.ErrNodeGroupNotFound, "node group %q", id)
}

func pbGroup(ctx context.Context, g cloudprovider.NodeGroup) *protos.NodeGroup {
	return &protos.NodeGroup{Id: g.Id(ctx), MinSize: int32(g.MinSize(ctx)), MaxSize: int32(g.MaxSize(ctx)), Debug: g.Debug(ctx)}
}

// apiNode rebuilds the four Node fields the client forwards.
func apiNode(n *protos.ExternalGrpcNode) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.GetName(), Labels: n.GetLabels(), Annotations: n.GetAnnotations()},
		Spec:       corev1.NodeSpec{ProviderID: n.GetProviderID()},
	}
}

func checkNode(n *protos.ExternalGrpcNode) error {
	if n == nil {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node is missing")
	}
	if n.GetProviderID() == "" && n.GetName() == "" {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node has neither providerID nor name")
	}
	return nil
}

// NodeGroups implements the NodeGroups RPC from the provider's snapshot.
func (s *Server) NodeGroups(ctx context.Context, _ *protos.NodeGroupsRequest) (*protos.NodeGroupsResponse, error) {
	if s.opts.MaxStaleness > 0 {
		// Outside a gRPC call (tests calling the method) there is no header to set.
		_ = grpc.SetHeader(ctx, metadata.Pairs(MaxStalenessHeader, s.opts.MaxStaleness.String()))
	}
	groups, err := s.provider.NodeGroups(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	resp := &protos.NodeGroupsResponse{NodeGroups: make([]*protos.NodeGroup, 0, len(groups))}
	for _, g := range groups {
		resp.NodeGroups = append(resp.NodeGroups, pbGroup(ctx, g))
	}
	return resp, nil
}

// NodeGroupForNode implements the NodeGroupForNode RPC. "Not ours" is OK with
// an empty group: CA reads an error as a failure, not as "not autoscaled".
func (s *Server) NodeGroupForNode(ctx context.Context, req *protos.NodeGroupForNodeRequest) (*protos.NodeGroupForNodeResponse, error) {
	if err := checkNode(req.GetNode()); err != nil {
		return nil, toStatus(err, false)
	}
	g, err := s.provider.NodeGroupForNode(ctx, apiNode(req.GetNode()))
	if err != nil {
		return nil, toStatus(err, false)
	}
	if g == nil {
		return &protos.NodeGroupForNodeResponse{NodeGroup: &protos.NodeGroup{}}, nil
	}
	return &protos.NodeGroupForNodeResponse{NodeGroup: pbGroup(ctx, g)}, nil
}

func checkWindow(start, end time.Time) error {
	if start.IsZero() || end.IsZero() || end.Before(start) {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "price window [%s, %s] is incomplete or reversed", start, end)
	}
	return nil
}

// PricingNodePrice implements the optional PricingNodePrice RPC.
func (s *Server) PricingNodePrice(ctx context.Context, req *protos.PricingNodePriceRequest) (*protos.PricingNodePriceResponse, error) {
	s.noteGeneration(ctx, nodePriceGeneration(req), "PricingNodePriceRequest")
	if err := checkNode(req.GetNode()); err != nil {
		return nil, toStatus(err, true)
	}
	start, end := nodePriceWindow(req)
	if err := checkWindow(start, end); err != nil {
		return nil, toStatus(err, true)
	}
	model, err := s.provider.Pricing(ctx)
	if err != nil {
		return nil, toStatus(err, true)
	}
	price, err := model.NodePrice(ctx, apiNode(req.GetNode()), start, end)
	if err != nil {
		return nil, toStatus(err, true)
	}
	return &protos.PricingNodePriceResponse{Price: price}, nil
}

// PricingPodPrice implements the optional PricingPodPrice RPC.
func (s *Server) PricingPodPrice(ctx context.Context, req *protos.PricingPodPriceRequest) (*protos.PricingPodPriceResponse, error) {
	s.noteGeneration(ctx, podPriceGeneration(req), "PricingPodPriceRequest")
	pod := &corev1.Pod{}
	if err := pod.Unmarshal(podPriceBytes(req)); err != nil {
		return nil, toStatus(cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "pod_bytes (or the legacy pod) is not a protobuf core/v1 Pod: %v", err), true)
	}
	start, end := podPriceWindow(req)
	if err := checkWindow(start, end); err != nil {
		return nil, toStatus(err, true)
	}
	model, err := s.provider.Pricing(ctx)
	if err != nil {
		return nil, toStatus(err, true)
	}
	price, err := model.PodPrice(ctx, pod, start, end)
	if err != nil {
		return nil, toStatus(err, true)
	}
	return &protos.PricingPodPriceResponse{Price: price}, nil
}

// GPULabel implements the GPULabel RPC.
func (s *Server) GPULabel(ctx context.Context, _ *protos.GPULabelRequest) (*protos.GPULabelResponse, error) {
	label, err := s.provider.GPULabel(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	return &protos.GPULabelResponse{Label: label}, nil
}

// GetAvailableGPUTypes implements the GetAvailableGPUTypes RPC. CA reads only
// the keys; the values carry the name as a StringValue for other readers.
func (s *Server) GetAvailableGPUTypes(ctx context.Context, _ *protos.GetAvailableGPUTypesRequest) (*protos.GetAvailableGPUTypesResponse, error) {
	types, err := s.provider.GetAvailableGPUTypes(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	resp := &protos.GetAvailableGPUTypesResponse{GpuTypes: make(map[string]*anypb.Any, len(types))}
	for name := range types {
		v, err := anypb.New(wrapperspb.String(name))
		if err != nil {
			return nil, toStatus(err, false)
		}
		resp.GpuTypes[name] = v
	}
	return resp, nil
}

// Cleanup implements the Cleanup RPC. It releases provider resources but the
// server keeps serving: CA sends Cleanup when it exits and reconnects later.
func (s *Server) Cleanup(ctx context.Context, _ *protos.CleanupRequest) (*protos.CleanupResponse, error) {
	if err := s.provider.Cleanup(ctx); err != nil {
		return nil, toStatus(err, false)
	}
	return &protos.CleanupResponse{}, nil
}

// Refresh implements the Refresh RPC. The provider refresh runs in the
// background; the RPC waits for it until shortly before CA's deadline. If it
// is still running then, the RPC answers OK and the last snapshot (with all
// local bookkeeping) keeps being served, because a Refresh error aborts CA's
// whole loop.
func (s *Server) Refresh(ctx context.Context, _ *protos.RefreshRequest) (*protos.RefreshResponse, error) {
	run := s.triggerRefresh()
	wait := 4500 * time.Millisecond
	if deadline, ok := ctx.Deadline(); ok {
		wait = deadline.Sub(s.opts.Now()) - s.opts.RefreshMargin
	}
	if wait <= 0 {
		wait = time.Millisecond
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-run.done:
		if run.err != nil {
			return nil, toStatus(fmt.Errorf("refresh %s: %w", s.provider.Name(), run.err), false)
		}
		return &protos.RefreshResponse{}, nil
	case <-timer.C:
		klog.InfoS("Refresh still running at CA's deadline, answering from the last snapshot", "provider", s.provider.Name())
		return &protos.RefreshResponse{}, nil
	case <-ctx.Done():
		return nil, toStatus(ctx.Err(), false)
	}
}

// NodeGroupTargetSize implements the NodeGroupTargetSize RPC.
func (s *Server) NodeGroupTargetSize(ctx context.Context, req *protos.NodeGroupTargetSizeRequest) (*protos.NodeGroupTargetSizeResponse, error) {
	g, err := s.group(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err, false)
	}
	n, err := g.TargetSize(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	return &protos.NodeGroupTargetSizeResponse{TargetSize: int32(n)}, nil
}

// maxLoggedInstances bounds the instances one mutation's log line names.
const maxLoggedInstances = 20

// change is one mutation CA asked for, as logged and counted.
type change struct {
	// operation is metrics.OperationIncrease, OperationDecrease or OperationDelete.
	operation string
	// delta is the requested change of the target (negative for decrease
	// and delete).
	delta int
	// nodes names the nodes to delete.
	nodes []string
}

// mutate runs one resize of group id: the request is checked (bad is non-nil
// for a malformed request) before the group is touched, so a bad request never
// reaches the cloud, and the size metric follows a successful change. Every
// request ends in one log line at the default level and one count, with its
// outcome (cloudprovider.OutcomeOf): what an operator follows of the
// autoscaler's decisions.
func (s *Server) mutate(ctx context.Context, id string, c change, bad error, apply func(cloudprovider.NodeGroup) error) error {
	g, err := s.group(ctx, id)
	if err != nil {
		// Not counted: an unknown id must not become a metric label.
		s.logMutation(ctx, id, c, -1, cloudprovider.MutationRefused, err)
		return toStatus(err, false)
	}
	from, _ := g.TargetSize(ctx)
	err, outcome := bad, cloudprovider.MutationRefused
	if err == nil {
		// A malformed request is refused before any call; otherwise the
		// outcome is what the call's error says.
		err = apply(g)
		outcome = cloudprovider.OutcomeOf(err)
	}
	s.logMutation(ctx, id, c, from, outcome, err)
	s.opts.Metrics.ObserveMutation(id, c.operation, outcome.String())
	if groups, gerr := s.provider.NodeGroups(ctx); gerr == nil {
		s.recordQuarantined(groups)
	}
	if err != nil {
		return toStatus(err, false)
	}
	s.opts.Metrics.SetGroupSize(groupSize(ctx, g))
	return nil
}

// logMutation writes the one line of a mutation: group, target from -> to
// (the target asked for), the instances named, the outcome and the client.
// from is -1 when the group is unknown.
func (s *Server) logMutation(ctx context.Context, id string, c change, from int, outcome cloudprovider.MutationOutcome, err error) {
	kv := []any{"nodeGroup", id, "operation", c.operation}
	if from >= 0 {
		kv = append(kv, "from", from, "to", from+c.delta)
	} else {
		kv = append(kv, "delta", c.delta)
	}
	if n := len(c.nodes); n > maxLoggedInstances {
		kv = append(kv, "instances", append(c.nodes[:maxLoggedInstances:maxLoggedInstances], fmt.Sprintf("and %d more", n-maxLoggedInstances)))
	} else if n > 0 {
		kv = append(kv, "instances", c.nodes)
	}
	kv = append(kv, "outcome", outcome.String(), "client", ClientOf(ctx))
	if err == nil {
		klog.InfoS("Node group changed", kv...)
		return
	}
	klog.ErrorS(err, "Node group change not applied", kv...)
}

// NodeGroupIncreaseSize implements the NodeGroupIncreaseSize RPC.
func (s *Server) NodeGroupIncreaseSize(ctx context.Context, req *protos.NodeGroupIncreaseSizeRequest) (*protos.NodeGroupIncreaseSizeResponse, error) {
	ctx = cloudhttp.WithMutationPriority(ctx)
	var bad error
	if req.GetDelta() <= 0 {
		bad = cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: size increase must be positive, got %d", req.GetId(), req.GetDelta())
	}
	c := change{operation: metrics.OperationIncrease, delta: int(req.GetDelta())}
	err := s.mutate(ctx, req.GetId(), c, bad, func(g cloudprovider.NodeGroup) error { return g.IncreaseSize(ctx, int(req.GetDelta())) })
	if err != nil {
		return nil, err
	}
	return &protos.NodeGroupIncreaseSizeResponse{}, nil
}

// NodeGroupDeleteNodes implements the NodeGroupDeleteNodes RPC.
func (s *Server) NodeGroupDeleteNodes(ctx context.Context, req *protos.NodeGroupDeleteNodesRequest) (*protos.NodeGroupDeleteNodesResponse, error) {
	ctx = cloudhttp.WithMutationPriority(ctx)
	nodes, bad := deleteRequestNodes(req)
	c := change{operation: metrics.OperationDelete, delta: -len(req.GetNodes())}
	for _, n := range req.GetNodes() {
		c.nodes = append(c.nodes, cloudprovider.NodeName(n.GetName(), n.GetProviderID()))
	}
	if err := s.mutate(ctx, req.GetId(), c, bad, func(g cloudprovider.NodeGroup) error { return g.DeleteNodes(ctx, nodes) }); err != nil {
		return nil, err
	}
	return &protos.NodeGroupDeleteNodesResponse{}, nil
}

// deleteRequestNodes rebuilds the request's nodes, refusing an empty list,
// nodes without identity and duplicates.
func deleteRequestNodes(req *protos.NodeGroupDeleteNodesRequest) ([]*corev1.Node, error) {
	if len(req.GetNodes()) == 0 {
		return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: no nodes to delete", req.GetId())
	}
	nodes := make([]*corev1.Node, 0, len(req.GetNodes()))
	seen := map[string]bool{}
	for _, n := range req.GetNodes() {
		if err := checkNode(n); err != nil {
			return nil, err
		}
		key := n.GetProviderID() + "\x00" + n.GetName()
		if seen[key] {
			return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node %s listed twice", cloudprovider.NodeName(n.GetName(), n.GetProviderID()))
		}
		seen[key] = true
		nodes = append(nodes, apiNode(n))
	}
	return nodes, nil
}

// NodeGroupDecreaseTargetSize implements the NodeGroupDecreaseTargetSize RPC.
func (s *Server) NodeGroupDecreaseTargetSize(ctx context.Context, req *protos.NodeGroupDecreaseTargetSizeRequest) (*protos.NodeGroupDecreaseTargetSizeResponse, error) {
	ctx = cloudhttp.WithMutationPriority(ctx)
	var bad error
	if req.GetDelta() >= 0 {
		bad = cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "node group %s: size decrease must be negative, got %d", req.GetId(), req.GetDelta())
	}
	c := change{operation: metrics.OperationDecrease, delta: int(req.GetDelta())}
	err := s.mutate(ctx, req.GetId(), c, bad, func(g cloudprovider.NodeGroup) error { return g.DecreaseTargetSize(ctx, int(req.GetDelta())) })
	if err != nil {
		return nil, err
	}
	return &protos.NodeGroupDecreaseTargetSizeResponse{}, nil
}

// NodeGroupNodes implements the NodeGroupNodes RPC.
func (s *Server) NodeGroupNodes(ctx context.Context, req *protos.NodeGroupNodesRequest) (*protos.NodeGroupNodesResponse, error) {
	g, err := s.group(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err, false)
	}
	instances, err := g.Nodes(ctx)
	if err != nil {
		return nil, toStatus(err, false)
	}
	resp := &protos.NodeGroupNodesResponse{Instances: make([]*protos.Instance, 0, len(instances))}
	for _, in := range instances {
		if in.Id == "" {
			// CA would treat an empty id as an unregistered node and delete it.
			klog.InfoS("Skipping instance without id", "nodeGroup", req.GetId())
			continue
		}
		resp.Instances = append(resp.Instances, pbInstance(in))
	}
	return resp, nil
}

func pbInstance(in cloudprovider.Instance) *protos.Instance {
	out := &protos.Instance{Id: in.Id}
	if in.Status == nil || in.Status.State == 0 {
		return out
	}
	out.Status = &protos.InstanceStatus{InstanceState: protos.InstanceStatus_InstanceState(in.Status.State)}
	if e := in.Status.ErrorInfo; e != nil && e.ErrorCode != "" {
		out.Status.ErrorInfo = &protos.InstanceErrorInfo{
			ErrorCode:          e.ErrorCode,
			ErrorMessage:       e.ErrorMessage,
			InstanceErrorClass: int32(e.ErrorClass),
		}
	}
	return out
}

// NodeGroupTemplateNodeInfo implements the optional NodeGroupTemplateNodeInfo
// RPC. Without a template it answers Unimplemented, never OK with empty bytes,
// which CA would cache as a nil template and later dereference.
func (s *Server) NodeGroupTemplateNodeInfo(ctx context.Context, req *protos.NodeGroupTemplateNodeInfoRequest) (*protos.NodeGroupTemplateNodeInfoResponse, error) {
	g, err := s.group(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err, true)
	}
	node, err := g.TemplateNodeInfo(ctx)
	if err != nil {
		if errors.Is(err, cloudprovider.ErrNodeGroupNotFound) || ctx.Err() != nil {
			return nil, toStatus(err, true)
		}
		// A template that cannot be built costs only this group its scale
		// from zero: Unimplemented is what CA reads as "no template".
		s.templateUnavailable(req.GetId(), err)
		return nil, status.Error(codes.Unimplemented, err.Error())
	}
	if node == nil {
		return nil, status.Errorf(codes.Unimplemented, "node group %s has no template", req.GetId())
	}
	b, err := node.Marshal()
	if err != nil {
		return nil, toStatus(fmt.Errorf("marshal template of %s: %w", req.GetId(), err), true)
	}
	if len(b) == 0 {
		return nil, status.Errorf(codes.Unimplemented, "node group %s has an empty template", req.GetId())
	}
	return templateResponse(b), nil
}

// NodeGroupGetOptions implements the optional NodeGroupGetOptions RPC. A
// returned option set replaces all of CA's flags for the group (and zeroes two
// options the protocol cannot carry), so it answers Unimplemented unless the
// group really has overrides, and then starts from the request's defaults.
func (s *Server) NodeGroupGetOptions(ctx context.Context, req *protos.NodeGroupAutoscalingOptionsRequest) (*protos.NodeGroupAutoscalingOptionsResponse, error) {
	s.noteGeneration(ctx, optionsGeneration(req.GetDefaults()), "NodeGroupAutoscalingOptionsRequest")
	g, err := s.group(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err, true)
	}
	defaults := fromPBOptions(req.GetDefaults())
	opts, err := g.GetOptions(ctx, defaults)
	if err != nil {
		return nil, toStatus(err, true)
	}
	if opts == nil {
		return nil, status.Errorf(codes.Unimplemented, "node group %s has no option overrides", req.GetId())
	}
	return &protos.NodeGroupAutoscalingOptionsResponse{NodeGroupAutoscalingOptions: toPBOptions(*opts)}, nil
}
