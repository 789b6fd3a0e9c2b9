package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	_ "github.com/ca-providers/cluster-autoscaler-provider/router"
)

// fuzzTarget is one real provider against its fake, shared by the inputs of
// a fuzzing process: state carries over from input to input, as in a
// long-running server.
type fuzzTarget struct {
	fake      *Fake
	provider  cloudprovider.CloudProvider
	srv       *externalgrpc.Server
	groups    []string
	instances []string

	mu      sync.Mutex
	history []string
	// belowMin holds groups that a delete of never-registered (fake) nodes
	// took below min, which the contract allows (CA's force-delete falls
	// back to DeleteNodes).
	belowMin map[string]bool
}

// record keeps the last calls, so a broken invariant (which may come from
// an earlier input) can be traced.
func (t *fuzzTarget) record(format string, args ...any) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.history = append(t.history, fmt.Sprintf(format, args...))
	if len(t.history) > 15 {
		t.history = t.history[1:]
	}
	return strings.Join(t.history, "\n")
}

var (
	fuzzOnce    sync.Once
	fuzzTargets []*fuzzTarget
	fuzzErr     error
)

func startFuzzTargets() ([]*fuzzTarget, error) {
	fuzzOnce.Do(func() {
		klog.LogToStderr(false)
		ctx := context.Background()
		for _, p := range Providers {
			fake, err := Start(Options{Provider: p, Nodes: 9, Groups: 3, MaxPerGroup: 8, Unmanaged: 1, Seed: 1})
			if err != nil {
				fuzzErr = err
				return
			}
			prov, err := fake.Build(ctx, nil)
			if err != nil {
				fuzzErr = err
				return
			}
			t := &fuzzTarget{fake: fake, provider: prov, srv: externalgrpc.NewServer(prov, externalgrpc.Options{}), belowMin: map[string]bool{}}
			if err := t.srv.RefreshOnce(ctx); err != nil {
				fuzzErr = err
				return
			}
			groups, _ := prov.NodeGroups(ctx)
			for _, g := range groups {
				t.groups = append(t.groups, g.Id(ctx))
				ins, _ := g.Nodes(ctx)
				for _, in := range ins {
					t.instances = append(t.instances, in.Id)
				}
			}
			t.instances = append(t.instances, fake.Unmanaged...)
			fuzzTargets = append(fuzzTargets, t)
		}
	})
	return fuzzTargets, fuzzErr
}

// pick returns list[i % len] or, for 255, the free text: the fuzzer reaches
// both real ids (so deep paths run) and arbitrary ones.
func pick(list []string, i uint8, text string) string {
	if i == 255 || len(list) == 0 {
		return text
	}
	return list[int(i)%len(list)]
}

// FuzzProviderHandlers feeds random requests to the gRPC handlers of every
// real provider, each backed by its fake cloud. Invariants: no panic, every
// error is a gRPC status other than Unknown, no handler outlives its
// deadline, targets stay within [min, max], and no credential appears in an
// error.
func FuzzProviderHandlers(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(0), uint8(0), int32(1), "x")
	f.Add(uint8(1), uint8(1), uint8(3), uint8(4), int32(0), "")
	f.Add(uint8(2), uint8(2), uint8(2), uint8(255), int32(-1), "vultr://nope")
	f.Add(uint8(3), uint8(0), uint8(255), uint8(1), int32(-2), "pool-000")
	f.Add(uint8(4), uint8(1), uint8(1), uint8(7), int32(2147483647), "\x00")
	f.Add(uint8(5), uint8(2), uint8(0), uint8(0), int32(-2147483648), "exoscale://pending/x/failed-1")
	f.Add(uint8(6), uint8(0), uint8(1), uint8(2), int32(3), "volcengine://placeholder-scg-pool-000-1")
	f.Add(uint8(7), uint8(1), uint8(2), uint8(3), int32(1), "")
	f.Add(uint8(8), uint8(2), uint8(0), uint8(5), int32(1), "k8s.io/cluster-autoscaler/fake-node-reason")
	f.Add(uint8(9), uint8(0), uint8(1), uint8(6), int32(1), "")
	f.Add(uint8(10), uint8(1), uint8(2), uint8(8), int32(1), "")
	f.Add(uint8(11), uint8(2), uint8(0), uint8(1), int32(1), "")
	targets, err := startFuzzTargets()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, target, method, group, node uint8, delta int32, text string) {
		ft := targets[int(target)%len(targets)]
		id := pick(ft.groups, group, text)
		n := &protos.ExternalGrpcNode{ProviderID: pick(ft.instances, node, text), Name: text, Labels: map[string]string{text: text}}
		fakeNode := delta%2 != 0
		if fakeNode {
			// CA's stand-in for an instance that never registered.
			n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: text}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		var err error
		s := ft.srv
		switch method % 14 {
		case 0:
			_, err = s.NodeGroups(ctx, &protos.NodeGroupsRequest{})
		case 1:
			_, err = s.NodeGroupForNode(ctx, &protos.NodeGroupForNodeRequest{Node: n})
		case 2:
			_, err = s.NodeGroupTargetSize(ctx, &protos.NodeGroupTargetSizeRequest{Id: id})
		case 3:
			_, err = s.NodeGroupIncreaseSize(ctx, &protos.NodeGroupIncreaseSizeRequest{Id: id, Delta: delta})
		case 4:
			_, err = s.NodeGroupDeleteNodes(ctx, &protos.NodeGroupDeleteNodesRequest{Id: id, Nodes: []*protos.ExternalGrpcNode{n}})
		case 5:
			_, err = s.NodeGroupDecreaseTargetSize(ctx, &protos.NodeGroupDecreaseTargetSizeRequest{Id: id, Delta: delta})
		case 6:
			_, err = s.NodeGroupNodes(ctx, &protos.NodeGroupNodesRequest{Id: id})
		case 7:
			_, err = s.NodeGroupTemplateNodeInfo(ctx, &protos.NodeGroupTemplateNodeInfoRequest{Id: id})
		case 8:
			_, err = s.NodeGroupGetOptions(ctx, &protos.NodeGroupAutoscalingOptionsRequest{Id: id, Defaults: &protos.NodeGroupAutoscalingOptions{
				ScaleDownUtilizationThreshold: float64(delta), MaxNodeProvisionDuration: durationpb.New(time.Duration(delta))}})
		case 9:
			_, err = s.PricingNodePrice(ctx, &protos.PricingNodePriceRequest{Node: n,
				StartTimestamp: timestamppb.New(time.Unix(int64(delta), 0)), EndTimestamp: timestamppb.New(time.Unix(int64(delta)+3600, 0))})
		case 10:
			_, err = s.PricingPodPrice(ctx, &protos.PricingPodPriceRequest{PodBytes: []byte(text),
				StartTimestamp: timestamppb.New(time.Unix(0, 0)), EndTimestamp: timestamppb.New(time.Unix(int64(delta), 0))})
		case 11:
			_, err = s.GPULabel(ctx, &protos.GPULabelRequest{})
		case 12:
			_, err = s.GetAvailableGPUTypes(ctx, &protos.GetAvailableGPUTypesRequest{})
		default:
			_, err = s.Refresh(ctx, &protos.RefreshRequest{})
		}
		if method%14 == 4 && err == nil && fakeNode {
			ft.mu.Lock()
			ft.belowMin[id] = true
			ft.mu.Unlock()
		}
		hist := ft.record("%s method %d id %q node %q delta %d: %v", ft.fake.Provider, method%14, id, n.GetProviderID(), delta, err)
		if took := time.Since(start); took > 2500*time.Millisecond {
			t.Fatalf("method %d took %s, past its 2s deadline", method%14, took)
		}
		if err != nil {
			st, ok := status.FromError(err)
			if !ok || st.Code() == codes.Unknown {
				t.Fatalf("method %d: error is not a classified gRPC status: %v", method%14, err)
			}
			for _, c := range ft.fake.Credentials {
				if strings.Contains(err.Error(), c) {
					t.Fatalf("method %d: error leaks a credential: %v", method%14, err)
				}
			}
		}
		groups, err := ft.provider.NodeGroups(ctx)
		if err != nil {
			t.Fatalf("NodeGroups after the call: %v", err)
		}
		for _, g := range groups {
			ts, err := g.TargetSize(ctx)
			ft.mu.Lock()
			allowed := ft.belowMin[g.Id(ctx)]
			if ts >= g.MinSize(ctx) {
				delete(ft.belowMin, g.Id(ctx))
			}
			ft.mu.Unlock()
			if err == nil && ((ts < g.MinSize(ctx) && !allowed) || ts > g.MaxSize(ctx)) {
				t.Fatalf("group %s: target %d outside [%d, %d]; last calls:\n%s", g.Id(ctx), ts, g.MinSize(ctx), g.MaxSize(ctx), hist)
			}
		}
	})
}
