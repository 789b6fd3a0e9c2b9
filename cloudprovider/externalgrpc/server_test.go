package externalgrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// startServer serves p on a loopback listener and returns a client from our proto.
func startServer(t *testing.T, p cloudprovider.CloudProvider, opts Options, sopts ...grpc.ServerOption) (protos.CloudProviderClient, *Server) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(p, opts)
	gs := grpc.NewServer(append([]grpc.ServerOption{grpc.ChainUnaryInterceptor(UnaryInterceptor(opts.Metrics))}, sopts...)...)
	protos.RegisterCloudProviderServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return protos.NewCloudProviderClient(conn), srv
}

// rpcCtx gives each call CA's default 5 s deadline.
func rpcCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wantCode(t *testing.T, err error, code codes.Code, what string) {
	t.Helper()
	if got := status.Code(err); got != code {
		t.Fatalf("%s: code %s (%v), want %s", what, got, err, code)
	}
}

func pbNode(providerID string) *protos.ExternalGrpcNode {
	return &protos.ExternalGrpcNode{ProviderID: providerID, Name: strings.TrimPrefix(providerID, "inmemory://")}
}

// TestAllRPCs drives the 15 RPCs end to end over a loopback listener.
func TestAllRPCs(t *testing.T) {
	p := cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{})
	c, _ := startServer(t, p, Options{})

	groups, err := c.NodeGroups(rpcCtx(t), &protos.NodeGroupsRequest{})
	if err != nil || len(groups.GetNodeGroups()) != 2 || groups.NodeGroups[0].GetId() != "pool-a" ||
		groups.NodeGroups[0].GetMinSize() != 1 || groups.NodeGroups[0].GetMaxSize() != 5 || groups.NodeGroups[0].GetDebug() == "" {
		t.Fatalf("NodeGroups = %v, %v", groups, err)
	}
	if m, ok := cloudprovider.ManagementFromDebug(groups.NodeGroups[0].GetDebug()); !ok || m.By != cloudprovider.ManagedByCluster {
		t.Fatalf("NodeGroups Debug %q does not say why the group is managed (want cluster)", groups.NodeGroups[0].GetDebug())
	}

	nodes, err := c.NodeGroupNodes(rpcCtx(t), &protos.NodeGroupNodesRequest{Id: "pool-a"})
	if err != nil || len(nodes.GetInstances()) != 2 {
		t.Fatalf("NodeGroupNodes = %v, %v", nodes, err)
	}
	first := nodes.Instances[0]
	if first.GetStatus().GetInstanceState() != protos.InstanceStatus_instanceRunning || !strings.HasPrefix(first.GetId(), "inmemory://") {
		t.Fatalf("instance %v", first)
	}

	owner, err := c.NodeGroupForNode(rpcCtx(t), &protos.NodeGroupForNodeRequest{Node: pbNode(first.GetId())})
	if err != nil || owner.GetNodeGroup().GetId() != "pool-a" || owner.GetNodeGroup().GetMaxSize() != 5 {
		t.Fatalf("NodeGroupForNode = %v, %v", owner, err)
	}
	stranger, err := c.NodeGroupForNode(rpcCtx(t), &protos.NodeGroupForNodeRequest{Node: &protos.ExternalGrpcNode{ProviderID: "aws:///i-1", Name: "cp-1"}})
	if err != nil || stranger.GetNodeGroup() == nil || stranger.GetNodeGroup().GetId() != "" {
		t.Fatalf("NodeGroupForNode(stranger) = %v, %v; want OK with an empty group", stranger, err)
	}

	now := time.Now()
	price, err := c.PricingNodePrice(rpcCtx(t), &protos.PricingNodePriceRequest{Node: pbNode(first.GetId()),
		StartTimestamp: timestamppb.New(now), EndTimestamp: timestamppb.New(now.Add(2 * time.Hour))})
	if err != nil || price.GetPrice() != 2*cloudprovidertest.InMemoryHourlyPrice {
		t.Fatalf("PricingNodePrice = %v, %v", price, err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	podBytes, _ := pod.Marshal()
	podPrice, err := c.PricingPodPrice(rpcCtx(t), &protos.PricingPodPriceRequest{PodBytes: podBytes,
		StartTimestamp: timestamppb.New(now), EndTimestamp: timestamppb.New(now.Add(time.Hour))})
	if err != nil || podPrice.GetPrice() <= 0 {
		t.Fatalf("PricingPodPrice = %v, %v", podPrice, err)
	}
	_, err = c.PricingPodPrice(rpcCtx(t), &protos.PricingPodPriceRequest{PodBytes: []byte{0xff, 0xff},
		StartTimestamp: timestamppb.New(now), EndTimestamp: timestamppb.New(now)})
	wantCode(t, err, codes.InvalidArgument, "PricingPodPrice with garbage bytes")

	label, err := c.GPULabel(rpcCtx(t), &protos.GPULabelRequest{})
	if err != nil || label.GetLabel() != cloudprovidertest.InMemoryGPULabel {
		t.Fatalf("GPULabel = %v, %v", label, err)
	}
	gpus, err := c.GetAvailableGPUTypes(rpcCtx(t), &protos.GetAvailableGPUTypesRequest{})
	if err != nil || gpus.GetGpuTypes()["test-gpu"] == nil {
		t.Fatalf("GetAvailableGPUTypes = %v, %v", gpus, err)
	}

	if _, err := c.NodeGroupIncreaseSize(rpcCtx(t), &protos.NodeGroupIncreaseSizeRequest{Id: "pool-a", Delta: 2}); err != nil {
		t.Fatal(err)
	}
	// CA re-reads TargetSize right after a mutation, before any Refresh.
	ts, err := c.NodeGroupTargetSize(rpcCtx(t), &protos.NodeGroupTargetSizeRequest{Id: "pool-a"})
	if err != nil || ts.GetTargetSize() != 4 {
		t.Fatalf("TargetSize after IncreaseSize(2) = %v, %v; want 4", ts, err)
	}
	if _, err := c.NodeGroupDecreaseTargetSize(rpcCtx(t), &protos.NodeGroupDecreaseTargetSizeRequest{Id: "pool-a", Delta: -1}); err != nil {
		t.Fatal(err)
	}
	if ts, _ := c.NodeGroupTargetSize(rpcCtx(t), &protos.NodeGroupTargetSizeRequest{Id: "pool-a"}); ts.GetTargetSize() != 3 {
		t.Fatalf("TargetSize after DecreaseTargetSize(-1) = %d, want 3", ts.GetTargetSize())
	}
	if _, err := c.NodeGroupDeleteNodes(rpcCtx(t), &protos.NodeGroupDeleteNodesRequest{Id: "pool-a", Nodes: []*protos.ExternalGrpcNode{pbNode(first.GetId())}}); err != nil {
		t.Fatal(err)
	}
	if ts, _ := c.NodeGroupTargetSize(rpcCtx(t), &protos.NodeGroupTargetSizeRequest{Id: "pool-a"}); ts.GetTargetSize() != 2 {
		t.Fatalf("TargetSize after DeleteNodes = %d, want 2", ts.GetTargetSize())
	}
	if got := p.Cloud().Deleted(); len(got) != 1 || "inmemory://"+got[0] != first.GetId() {
		t.Fatalf("cloud deleted %v, want only %s", got, first.GetId())
	}

	tmpl, err := c.NodeGroupTemplateNodeInfo(rpcCtx(t), &protos.NodeGroupTemplateNodeInfoRequest{Id: "pool-a"})
	if err != nil || len(tmpl.GetNodeBytes()) == 0 {
		t.Fatalf("NodeGroupTemplateNodeInfo = %v, %v", tmpl, err)
	}
	var node corev1.Node
	if err := node.Unmarshal(tmpl.GetNodeBytes()); err != nil || node.Labels[cloudprovidertest.InMemoryGroupLabel] != "pool-a" {
		t.Fatalf("nodeBytes do not decode as the template core/v1 Node: %v %v", err, node.Labels)
	}
	_, err = c.NodeGroupTemplateNodeInfo(rpcCtx(t), &protos.NodeGroupTemplateNodeInfoRequest{Id: "pool-b"})
	wantCode(t, err, codes.Unimplemented, "template of a group without one")

	defaults := &protos.NodeGroupAutoscalingOptions{ScaleDownUtilizationThreshold: 0.5, ScaleDownGpuUtilizationThreshold: 0.6,
		IgnoreDaemonSetsUtilization: true, ScaleDownUnneededDuration: durationpb.New(10 * time.Minute),
		ScaleDownUnreadyDuration: durationpb.New(20 * time.Minute), MaxNodeProvisionDuration: durationpb.New(15 * time.Minute)}
	_, err = c.NodeGroupGetOptions(rpcCtx(t), &protos.NodeGroupAutoscalingOptionsRequest{Id: "pool-a", Defaults: defaults})
	wantCode(t, err, codes.Unimplemented, "options of a group without overrides")
	opts, err := c.NodeGroupGetOptions(rpcCtx(t), &protos.NodeGroupAutoscalingOptionsRequest{Id: "pool-b", Defaults: defaults})
	if err != nil {
		t.Fatal(err)
	}
	o := opts.GetNodeGroupAutoscalingOptions()
	if o.GetScaleDownUnneededDuration().AsDuration() != 42*time.Minute || o.GetScaleDownUtilizationThreshold() != 0.5 ||
		o.GetScaleDownGpuUtilizationThreshold() != 0.6 || !o.GetIgnoreDaemonSetsUtilization() ||
		o.GetScaleDownUnreadyDuration().AsDuration() != 20*time.Minute || o.GetMaxNodeProvisionDuration().AsDuration() != 15*time.Minute {
		t.Fatalf("options %v: the override must keep every other default", o)
	}

	if _, err := c.Refresh(rpcCtx(t), &protos.RefreshRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Cleanup(rpcCtx(t), &protos.CleanupRequest{}); err != nil || !p.CleanedUp() {
		t.Fatalf("Cleanup = %v, cleaned %v", err, p.CleanedUp())
	}
	// Cleanup must not stop the server: CA reconnects to the same process.
	if _, err := c.NodeGroups(rpcCtx(t), &protos.NodeGroupsRequest{}); err != nil {
		t.Fatalf("NodeGroups after Cleanup: %v", err)
	}
}

// TestBadRequestsMakeNoCloudCall checks argument validation and error codes.
func TestBadRequestsMakeNoCloudCall(t *testing.T) {
	p := cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{})
	c, _ := startServer(t, p, Options{})
	calls := p.Cloud().Calls()
	ctx := rpcCtx(t)
	cases := []struct {
		name string
		call func() error
		code codes.Code
	}{
		{"unknown group", func() error {
			_, err := c.NodeGroupTargetSize(ctx, &protos.NodeGroupTargetSizeRequest{Id: "nope"})
			return err
		}, codes.NotFound},
		{"empty group id", func() error {
			_, err := c.NodeGroupNodes(ctx, &protos.NodeGroupNodesRequest{})
			return err
		}, codes.InvalidArgument},
		{"zero increase", func() error {
			_, err := c.NodeGroupIncreaseSize(ctx, &protos.NodeGroupIncreaseSizeRequest{Id: "pool-a"})
			return err
		}, codes.InvalidArgument},
		{"increase past max", func() error {
			_, err := c.NodeGroupIncreaseSize(ctx, &protos.NodeGroupIncreaseSizeRequest{Id: "pool-a", Delta: 4})
			return err
		}, codes.FailedPrecondition},
		{"positive decrease", func() error {
			_, err := c.NodeGroupDecreaseTargetSize(ctx, &protos.NodeGroupDecreaseTargetSizeRequest{Id: "pool-a", Delta: 1})
			return err
		}, codes.InvalidArgument},
		{"decrease below existing", func() error {
			_, err := c.NodeGroupDecreaseTargetSize(ctx, &protos.NodeGroupDecreaseTargetSizeRequest{Id: "pool-a", Delta: -1})
			return err
		}, codes.FailedPrecondition},
		{"delete nothing", func() error {
			_, err := c.NodeGroupDeleteNodes(ctx, &protos.NodeGroupDeleteNodesRequest{Id: "pool-a"})
			return err
		}, codes.InvalidArgument},
		{"delete foreign node", func() error {
			_, err := c.NodeGroupDeleteNodes(ctx, &protos.NodeGroupDeleteNodesRequest{Id: "pool-a", Nodes: []*protos.ExternalGrpcNode{{ProviderID: "aws:///i-1", Name: "x"}}})
			return err
		}, codes.InvalidArgument},
		{"delete node without identity", func() error {
			_, err := c.NodeGroupDeleteNodes(ctx, &protos.NodeGroupDeleteNodesRequest{Id: "pool-a", Nodes: []*protos.ExternalGrpcNode{{}}})
			return err
		}, codes.InvalidArgument},
		{"node for nil node", func() error {
			_, err := c.NodeGroupForNode(ctx, &protos.NodeGroupForNodeRequest{})
			return err
		}, codes.InvalidArgument},
		{"node price without window", func() error {
			_, err := c.PricingNodePrice(ctx, &protos.PricingNodePriceRequest{Node: pbNode("inmemory://x")})
			return err
		}, codes.InvalidArgument},
		{"template of unknown group", func() error {
			_, err := c.NodeGroupTemplateNodeInfo(ctx, &protos.NodeGroupTemplateNodeInfoRequest{Id: "nope"})
			return err
		}, codes.NotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, tc.call(), tc.code, tc.name) })
	}
	if got := p.Cloud().Calls(); got != calls {
		t.Fatalf("bad requests made %d cloud calls", got-calls)
	}
}

func TestToStatus(t *testing.T) {
	cases := []struct {
		err      error
		optional bool
		code     codes.Code
	}{
		{cloudprovider.ErrNotImplemented, true, codes.Unimplemented},
		{fmt.Errorf("x: %w", cloudprovider.ErrNotImplemented), false, codes.Internal},
		{cloudprovider.Errorf(cloudprovider.ErrNodeGroupNotFound, "g"), false, codes.NotFound},
		{cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "d"), false, codes.InvalidArgument},
		{cloudprovider.Errorf(cloudprovider.ErrFailedPrecondition, "m"), false, codes.FailedPrecondition},
		{fmt.Errorf("resize: %w", cloudprovider.ErrRateLimited), false, codes.ResourceExhausted},
		{&cloudhttp.APIError{Status: 429, Class: cloudhttp.StatusClass(429), RetryAfter: time.Second}, false, codes.ResourceExhausted},
		{cloudhttp.Reclassify(&cloudhttp.APIError{Status: 400, Class: cloudhttp.StatusClass(400)}, cloudprovider.ErrQuotaExceeded), false, codes.ResourceExhausted},
		{&cloudhttp.APIError{Status: 200, Class: cloudprovider.ErrMalformedResponse}, false, codes.Unavailable},
		{fmt.Errorf("x: %w", cloudprovider.ErrUnauthenticated), false, codes.Unauthenticated},
		{fmt.Errorf("x: %w", cloudprovider.ErrPermissionDenied), false, codes.PermissionDenied},
		{fmt.Errorf("x: %w", cloudprovider.ErrUnavailable), false, codes.Unavailable},
		{fmt.Errorf("list: %w", context.DeadlineExceeded), false, codes.DeadlineExceeded},
		{errors.New("boom"), false, codes.Internal},
	}
	for _, tc := range cases {
		if got := status.Code(toStatus(tc.err, tc.optional)); got != tc.code {
			t.Errorf("toStatus(%v, %v) = %s, want %s", tc.err, tc.optional, got, tc.code)
		}
	}
	if toStatus(nil, false) != nil {
		t.Fatal("nil error must stay nil")
	}
}

// scriptedProvider wraps the in-memory provider with injected behaviour.
type scriptedProvider struct {
	*cloudprovidertest.InMemoryProvider
	mu           sync.Mutex
	refreshErr   error
	refreshBlock chan struct{}
	refreshes    int
	panicGPU     bool
}

func (s *scriptedProvider) Refresh(ctx context.Context) error {
	s.mu.Lock()
	s.refreshes++
	err, block := s.refreshErr, s.refreshBlock
	s.mu.Unlock()
	if block != nil {
		<-block
	}
	if err != nil {
		return err
	}
	return s.InMemoryProvider.Refresh(ctx)
}

func (s *scriptedProvider) GPULabel(ctx context.Context) (string, error) {
	if s.panicGPU {
		name := s.Name()
		_ = name[len(name)] // index out of range: a runtime panic, as a provider bug would raise
	}
	return s.InMemoryProvider.GPULabel(ctx)
}

func TestPanicBecomesInternalAndServerKeepsServing(t *testing.T) {
	p := &scriptedProvider{InMemoryProvider: cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{}), panicGPU: true}
	c, _ := startServer(t, p, Options{})
	_, err := c.GPULabel(rpcCtx(t), &protos.GPULabelRequest{})
	wantCode(t, err, codes.Internal, "GPULabel panicking")
	if _, err := c.NodeGroups(rpcCtx(t), &protos.NodeGroupsRequest{}); err != nil {
		t.Fatalf("server stopped serving after a panic: %v", err)
	}
}

func TestFailedRefreshKeepsLastSnapshot(t *testing.T) {
	p := &scriptedProvider{InMemoryProvider: cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{})}
	c, srv := startServer(t, p, Options{})
	if err := srv.RefreshOnce(rpcCtx(t)); err != nil || !srv.Ready() {
		t.Fatalf("first refresh: %v ready=%v", err, srv.Ready())
	}
	p.mu.Lock()
	p.refreshErr = fmt.Errorf("list pools: %w", cloudprovider.ErrUnavailable)
	p.mu.Unlock()
	_, err := c.Refresh(rpcCtx(t), &protos.RefreshRequest{})
	wantCode(t, err, codes.Unavailable, "Refresh while the cloud is down")
	groups, err := c.NodeGroups(rpcCtx(t), &protos.NodeGroupsRequest{})
	if err != nil || len(groups.GetNodeGroups()) != 2 {
		t.Fatalf("NodeGroups after a failed refresh = %v, %v; want the last snapshot", groups, err)
	}
}

// TestFailedRefreshLogSaysWhetherASnapshotIsServed: a refresh failing
// before any succeeded has no last good snapshot to point to; once one
// succeeded, later failures serve it.
func TestFailedRefreshLogSaysWhetherASnapshotIsServed(t *testing.T) {
	t.Parallel()
	p := &scriptedProvider{InMemoryProvider: cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{}), refreshErr: fmt.Errorf("list pools: %w", cloudprovider.ErrUnavailable)}
	_, srv := startServer(t, p, Options{})
	if err := srv.RefreshOnce(rpcCtx(t)); err == nil || srv.Ready() {
		t.Fatalf("first refresh against a failing cloud: err %v, ready %v; want an error, not ready", err, srv.Ready())
	}
	if got := srv.failedMessage(); got != msgRefreshFailedNoSnapshot {
		t.Fatalf("failure before any success logs %q, want %q", got, msgRefreshFailedNoSnapshot)
	}
	p.mu.Lock()
	p.refreshErr = nil
	p.mu.Unlock()
	if err := srv.RefreshOnce(rpcCtx(t)); err != nil || !srv.Ready() {
		t.Fatalf("refresh after the cloud recovered: %v ready=%v", err, srv.Ready())
	}
	p.mu.Lock()
	p.refreshErr = fmt.Errorf("list pools: %w", cloudprovider.ErrUnavailable)
	p.mu.Unlock()
	if err := srv.RefreshOnce(rpcCtx(t)); err == nil {
		t.Fatal("refresh against a failing cloud succeeded")
	}
	if got := srv.failedMessage(); got != msgRefreshFailedLastGood {
		t.Fatalf("failure after a success logs %q, want %q", got, msgRefreshFailedLastGood)
	}
}

// TestSlowRefreshAnswersBeforeDeadline: a refresh that outlives CA's deadline
// must not fail the RPC; the next Refresh joins the same run instead of
// starting another.
func TestSlowRefreshAnswersBeforeDeadline(t *testing.T) {
	block := make(chan struct{})
	p := &scriptedProvider{InMemoryProvider: cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{}), refreshBlock: block}
	c, _ := startServer(t, p, Options{RefreshMargin: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if _, err := c.Refresh(ctx, &protos.RefreshRequest{}); err != nil {
		t.Fatalf("Refresh with a slow provider: %v; want OK from the last snapshot", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel2()
	if _, err := c.Refresh(ctx2, &protos.RefreshRequest{}); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	n := p.refreshes
	p.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d provider refreshes started while one was running, want 1", n)
	}
	close(block)
}

func TestRefreshUntilReadyRetries(t *testing.T) {
	p := &scriptedProvider{InMemoryProvider: cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{}), refreshErr: errors.New("down")}
	srv := NewServer(p, Options{})
	sleeps := 0
	srv.RefreshUntilReady(context.Background(), func(ctx context.Context, d time.Duration) error {
		sleeps++
		if sleeps == 3 {
			p.mu.Lock()
			p.refreshErr = nil
			p.mu.Unlock()
		}
		return nil
	})
	if !srv.Ready() || sleeps != 3 {
		t.Fatalf("ready=%v after %d retries, want ready after 3", srv.Ready(), sleeps)
	}
}

func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	addr, err := ParseAddress("unix://" + filepath.Join(dir, "ca.sock"))
	if err != nil || !addr.Local() {
		t.Fatalf("ParseAddress: %v %v", addr, err)
	}
	lis, err := addr.Listen()
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	protos.RegisterCloudProviderServer(gs, NewServer(cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{}), Options{}))
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()
	// CA dials the address unchanged; grpc-go's unix resolver handles it.
	conn, err := grpc.NewClient("unix://"+addr.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	groups, err := protos.NewCloudProviderClient(conn).NodeGroups(rpcCtx(t), &protos.NodeGroupsRequest{})
	if err != nil || len(groups.GetNodeGroups()) != 2 {
		t.Fatalf("NodeGroups over a unix socket = %v, %v", groups, err)
	}
}

func TestParseAddress(t *testing.T) {
	cases := []struct {
		in      string
		network string
		local   bool
		bad     bool
	}{
		{"127.0.0.1:8086", "tcp", true, false},
		{"localhost:8086", "tcp", true, false},
		{"[::1]:8086", "tcp", true, false},
		{"0.0.0.0:8086", "tcp", false, false},
		{":8086", "tcp", false, false},
		{"unix:/run/x.sock", "unix", true, false},
		{"unix:///run/x.sock", "unix", true, false},
		{"unix:relative.sock", "", false, true},
		{"/run/x.sock", "", false, true},
		{"127.0.0.1", "", false, true},
	}
	for _, tc := range cases {
		a, err := ParseAddress(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("ParseAddress(%q) err = %v", tc.in, err)
			continue
		}
		if !tc.bad && (a.Network != tc.network || a.Local() != tc.local) {
			t.Errorf("ParseAddress(%q) = %+v local=%v", tc.in, a, a.Local())
		}
	}
}

// brokenTemplates wraps a provider so every group's template fails as a
// cloud lookup would.
type brokenTemplates struct{ cloudprovider.CloudProvider }

type brokenTemplateGroup struct{ cloudprovider.NodeGroup }

func (brokenTemplateGroup) TemplateNodeInfo(context.Context) (*corev1.Node, error) {
	return nil, cloudprovider.Errorf(cloudprovider.ErrPermissionDenied, "describe instance types")
}

func (b brokenTemplates) NodeGroups(ctx context.Context) ([]cloudprovider.NodeGroup, error) {
	gs, err := b.CloudProvider.NodeGroups(ctx)
	for i := range gs {
		gs[i] = brokenTemplateGroup{gs[i]}
	}
	return gs, err
}

func (b brokenTemplates) NodeGroup(ctx context.Context, id string) (cloudprovider.NodeGroup, error) {
	gs, err := b.NodeGroups(ctx)
	return cloudprovidertest.ScanNodeGroup(ctx, gs, err, id)
}

// TestTemplateFailureIsUnimplementedAndCounted: a template that cannot be
// built costs only that group its scale from zero (Unimplemented, which CA
// reads as "no template"), and is counted.
func TestTemplateFailureIsUnimplementedAndCounted(t *testing.T) {
	p := cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud(cloudprovidertest.CloudGroup{ID: "pool-a", Min: 1, Max: 3, Running: 1}))
	reg := prometheus.NewRegistry()
	srv := NewServer(brokenTemplates{p}, Options{Metrics: metrics.New(reg)})
	if err := srv.RefreshOnce(rpcCtx(t)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, err := srv.NodeGroupTemplateNodeInfo(rpcCtx(t), &protos.NodeGroupTemplateNodeInfoRequest{Id: "pool-a"})
		wantCode(t, err, codes.Unimplemented, "template that cannot be built")
	}
	if n := counterValue(t, reg, "cluster_autoscaler_provider_template_unavailable_total"); n != 2 {
		t.Fatalf("template_unavailable_total = %v, want 2", n)
	}
}

// counterValue returns the value of the single series of a counter family.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}
