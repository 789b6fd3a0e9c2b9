// Command soak drives random Cluster Autoscaler-like operations (scale-ups,
// deletions, decreases, refreshes, concurrent callers) over gRPC against each
// provider while the cloud in front of its fake injects faults (5xx, 429 with
// Retry-After, connection resets, answers slower than the deadline, malformed
// bodies, answers lost after the request was applied). After every step it
// checks the invariants a cautious operator cares about:
//
//   - every group's target is within [min, max], ours and the cloud's;
//   - no instance disappears that nobody asked to delete (a decrease may only
//     cancel instances that never became ready);
//   - after a clean Refresh, our snapshot equals the fake cloud's state;
//   - every RPC is answered within its deadline;
//   - no goroutine is left behind at the end.
//
// It prints operations, faults, invariant checks and violations per provider
// and exits 1 on any violation. `make soak` runs it; CI runs it for 60 s per
// provider.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/hack/bench/cluster"
	_ "github.com/ca-providers/cluster-autoscaler-provider/router"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
)

type options struct {
	providers  []string
	duration   time.Duration
	nodes      int
	groups     int
	maxSize    int
	faultRate  float64
	rpcTimeout time.Duration
	cleanEvery int
	callers    int
	seed       int64
	verbose    bool
	ops        map[string]bool
	faults     []cluster.FaultKind
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	var providers string
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&providers, "providers", strings.Join(cluster.Providers, ","), "providers to soak, one after the other")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to soak each provider (hours are fine)")
	fs.IntVar(&o.nodes, "nodes", 24, "instances at start")
	fs.IntVar(&o.groups, "groups", 3, "node groups")
	fs.IntVar(&o.maxSize, "max", 16, "max size of every group (min is 1)")
	fs.Float64Var(&o.faultRate, "fault-rate", 0.2, "share of cloud requests that fail")
	fs.DurationVar(&o.rpcTimeout, "rpc-timeout", 2*time.Second, "per-RPC deadline (CA's grpc_timeout; shorter than its 5s default to fit more steps)")
	fs.IntVar(&o.cleanEvery, "clean-every", 25, "steps between clean-Refresh comparisons with the fake")
	fs.IntVar(&o.callers, "callers", 4, "concurrent callers in a concurrent step")
	fs.Int64Var(&o.seed, "seed", 0, "random seed (0: from the clock; printed for replay)")
	fs.BoolVar(&o.verbose, "v", false, "print every violation and the provider log")
	var ops, faults string
	var all []string
	for _, k := range cluster.DefaultFaults {
		all = append(all, string(k))
	}
	fs.StringVar(&faults, "faults", strings.Join(all, ","), "fault kinds to inject (add slow-applied for requests the cloud applies after the caller gave up)")
	fs.StringVar(&ops, "ops", strings.Join(allOps, ","), "operations to draw from")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.providers = strings.Split(providers, ",")
	for _, f := range strings.Split(faults, ",") {
		o.faults = append(o.faults, cluster.FaultKind(f))
	}
	o.ops = map[string]bool{}
	for _, op := range strings.Split(ops, ",") {
		o.ops[op] = true
	}
	if o.seed == 0 {
		o.seed = time.Now().UnixNano()
	}
	if !o.verbose {
		quietKlog()
	}
	fmt.Fprintf(stdout, "soak: seed %d, %s per provider, %d nodes in %d groups (min 1, max %d), fault rate %.0f%%, RPC deadline %s\n\n",
		o.seed, o.duration, o.nodes, o.groups, o.maxSize, 100*o.faultRate, o.rpcTimeout)
	fmt.Fprintf(stdout, "| provider | steps | operations | RPCs (errors) | faults injected | invariant checks | violations |\n|---|---:|---|---:|---|---:|---:|\n")
	total := 0
	var details []string
	for _, p := range o.providers {
		r, err := soakOne(p, o)
		if err != nil {
			fmt.Fprintf(stderr, "error: %s: %v\n", p, err)
			return 1
		}
		fmt.Fprintf(stdout, "| %s | %d | %s | %d (%d; %d mutations cut by the deadline) | %s | %d | %d |\n", p, r.steps, summary(r.ops), r.rpcs, r.rpcErrors,
			r.mutationTimeouts, cluster.FaultSummary(r.faults), r.checks, len(r.violations))
		total += len(r.violations)
		for _, v := range r.violations {
			details = append(details, p+": "+v)
		}
	}
	fmt.Fprintf(stdout, "\nviolations: %d\n", total)
	for i, d := range details {
		if i == 20 && !o.verbose {
			fmt.Fprintf(stdout, "... %d more (run with -v)\n", len(details)-i)
			break
		}
		fmt.Fprintf(stdout, "  - %s\n", d)
	}
	if total > 0 {
		return 1
	}
	return 0
}

func summary(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

type report struct {
	// mutationTimeouts counts mutations whose cloud call outlived the
	// deadline (slow faults): CA sees an error at its deadline, as designed.
	mutationTimeouts int
	steps            int
	ops              map[string]int
	rpcs             int
	rpcErrors        int
	faults           map[cluster.FaultKind]int
	checks           int
	violations       []string
}

// mutations are the RPCs that change the cloud; under a slow cloud they
// may end at the deadline with DeadlineExceeded. Every other RPC is served
// from the snapshot (or, for Refresh, answers before the deadline) and must
// never run into it.
var mutations = map[string]bool{"NodeGroupIncreaseSize": true, "NodeGroupDeleteNodes": true, "NodeGroupDecreaseTargetSize": true}

// provisionTimeout stands for CA's max-node-provision-time: CA decreases a
// group's target only when its registered nodes have lagged the target that
// long, never right after an increase (a new increase resets the clock).
const provisionTimeout = 15 * time.Second

// answerSlack is how much later than its deadline an RPC may come back
// before it counts as unanswered (scheduling on a busy 2-core machine).
const answerSlack = 250 * time.Millisecond

// soaker holds one provider's soak.
type soaker struct {
	o      options
	client protos.CloudProviderClient
	srv    *externalgrpc.Server
	fake   *cluster.Fake
	clock  *cloudprovidertest.ManualClock
	rnd    *rand.Rand

	mu          sync.Mutex
	r           report
	requested   map[string]bool
	cancellable map[string]bool
	alive       map[string]bool
	history     []string
	// lastIncrease is the fake-clock time of each group's last increase.
	lastIncrease map[string]time.Time
}

// note records a mutation for the violation report (-v).
func (s *soaker) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = append(s.history, fmt.Sprintf("step %d: ", s.r.steps)+fmt.Sprintf(format, args...))
	if len(s.history) > 12 {
		s.history = s.history[len(s.history)-12:]
	}
}

func soakOne(provider string, o options) (report, error) {
	baseline := runtime.NumGoroutine()
	s := &soaker{
		o: o, rnd: rand.New(rand.NewSource(o.seed)),
		r:         report{ops: map[string]int{}},
		requested: map[string]bool{}, cancellable: map[string]bool{}, alive: map[string]bool{},
		lastIncrease: map[string]time.Time{},
	}
	s.clock = cloudprovidertest.NewManualClock(time.Now())
	fake, err := cluster.Start(cluster.Options{
		Provider: provider, Nodes: o.nodes, Groups: o.groups, MinPerGroup: 1, MaxPerGroup: o.maxSize,
		Clock: s.clock, Faults: true, Seed: o.seed,
	})
	if err != nil {
		return s.r, err
	}
	s.fake = fake
	// The slow fault holds a request past the RPC deadline, then lets it
	// through: the cloud may still apply what the caller gave up on.
	fake.Chaos.SetSlow(o.rpcTimeout + 500*time.Millisecond)
	m, _ := cluster.NewMetrics()
	ctx := context.Background()
	p, err := fake.Build(ctx, m)
	if err != nil {
		fake.Close()
		return s.r, err
	}
	s.srv = externalgrpc.NewServer(p, externalgrpc.Options{Metrics: m})
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(externalgrpc.UnaryInterceptor(m), s.handlerTimer))
	protos.RegisterCloudProviderServer(gs, s.srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fake.Close()
		return s.r, err
	}
	go func() { _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		gs.Stop()
		fake.Close()
		return s.r, err
	}
	s.client = protos.NewCloudProviderClient(conn)

	if err := s.srv.RefreshOnce(ctx); err != nil {
		s.violate("first refresh without faults failed: %v", err)
	}
	s.observe()
	fake.Chaos.SetFaults(o.faultRate, o.faults...)
	deadline := time.Now().Add(o.duration)
	for time.Now().Before(deadline) {
		s.step()
		s.r.steps++
		s.clock.Advance(time.Second)
		s.check()
		if s.r.steps%o.cleanEvery == 0 {
			s.cleanCompare()
		}
	}
	s.cleanCompare()
	s.r.faults = fake.Chaos.Injected()

	_ = conn.Close()
	gs.Stop()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_ = p.Cleanup(cctx)
	cancel()
	fake.Close()
	// Give background refreshes time to notice their cloud is gone: poll
	// the goroutine count instead of sleeping a fixed time.
	leakDeadline := time.Now().Add(15 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(leakDeadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		s.violate("goroutine leak: %d goroutines after shutdown, %d before start", n, baseline)
		if o.verbose {
			fmt.Fprintf(os.Stderr, "%s\n", buf)
		}
	}
	return s.r, nil
}

func (s *soaker) violate(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r.violations = append(s.r.violations, fmt.Sprintf(format, args...))
}

// rpc runs one call under the deadline and checks it was answered in time.
func (s *soaker) rpc(method string, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.o.rpcTimeout)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	took := time.Since(start)
	s.mu.Lock()
	s.r.rpcs++
	if err != nil {
		s.r.rpcErrors++
	}
	s.mu.Unlock()
	switch {
	case took > s.o.rpcTimeout+answerSlack:
		s.violate("%s not answered within its %s deadline (took %s): %v", method, s.o.rpcTimeout, took.Round(time.Millisecond), err)
	case status.Code(err) == codes.DeadlineExceeded && mutations[method]:
		s.mu.Lock()
		s.r.mutationTimeouts++
		s.mu.Unlock()
	case status.Code(err) == codes.DeadlineExceeded && took >= s.o.rpcTimeout-answerSlack:
		// An early DeadlineExceeded is the server giving up in time on a
		// slow cloud; running into the caller's deadline is not.
		s.violate("%s ran into its %s deadline: %v", method, s.o.rpcTimeout, err)
	}
	return err
}

// handlerTimer is a server interceptor that checks, on the server side,
// that no handler outlives its caller's deadline: a handler that ignored
// its context would keep locks and goroutines after CA gave up.
func (s *soaker) handlerTimer(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	if dl, ok := ctx.Deadline(); ok && time.Since(dl) > answerSlack {
		s.violate("%s handler returned %s after its deadline (ran %s)", info.FullMethod, time.Since(dl).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
	return resp, err
}

type groupView struct {
	id        string
	min, max  int
	target    int
	instances []*protos.Instance
}

// view reads a group's target and instances over gRPC.
func (s *soaker) view(g *protos.NodeGroup) (groupView, error) {
	v := groupView{id: g.GetId(), min: int(g.GetMinSize()), max: int(g.GetMaxSize())}
	err := s.rpc("NodeGroupTargetSize", func(ctx context.Context) error {
		r, err := s.client.NodeGroupTargetSize(ctx, &protos.NodeGroupTargetSizeRequest{Id: v.id})
		v.target = int(r.GetTargetSize())
		return err
	})
	if err != nil {
		return v, err
	}
	err = s.rpc("NodeGroupNodes", func(ctx context.Context) error {
		r, err := s.client.NodeGroupNodes(ctx, &protos.NodeGroupNodesRequest{Id: v.id})
		v.instances = r.GetInstances()
		return err
	})
	return v, err
}

func (s *soaker) nodeGroups() []*protos.NodeGroup {
	var groups []*protos.NodeGroup
	_ = s.rpc("NodeGroups", func(ctx context.Context) error {
		r, err := s.client.NodeGroups(ctx, &protos.NodeGroupsRequest{})
		groups = r.GetNodeGroups()
		return err
	})
	return groups
}

func (s *soaker) count(op string) {
	s.mu.Lock()
	s.r.ops[op]++
	s.mu.Unlock()
}

// allOps are the step kinds with their weights.
var allOps = []string{"refresh", "scale-up", "delete", "decrease", "reads", "concurrent"}

var opWeights = map[string]int{"refresh": 20, "scale-up": 20, "delete": 20, "decrease": 10, "reads": 15, "concurrent": 15}

// step runs one random operation.
func (s *soaker) step() {
	groups := s.nodeGroups()
	if len(groups) == 0 {
		s.violate("NodeGroups returned no group")
		return
	}
	pick := func() *protos.NodeGroup { return groups[s.rnd.Intn(len(groups))] }
	total := 0
	for _, op := range allOps {
		if s.o.ops[op] {
			total += opWeights[op]
		}
	}
	if total == 0 {
		return
	}
	x := s.rnd.Intn(total)
	op := ""
	for _, o := range allOps {
		if !s.o.ops[o] {
			continue
		}
		if x < opWeights[o] {
			op = o
			break
		}
		x -= opWeights[o]
	}
	switch op {
	case "refresh":
		s.refresh()
	case "scale-up":
		s.scaleUp(pick(), s.rnd.Int63(), true)
	case "delete":
		s.deleteNodes(pick(), s.rnd.Int63())
	case "decrease":
		s.decrease(pick(), s.rnd.Int63())
	case "reads":
		s.reads(groups)
	default:
		s.concurrent(groups)
	}
}

func (s *soaker) refresh() {
	s.count("refresh")
	_ = s.rpc("Refresh", func(ctx context.Context) error {
		_, err := s.client.Refresh(ctx, &protos.RefreshRequest{})
		return err
	})
}

// scaleUp raises a group's target. Alone (not racing other mutations) it
// also checks that an increase past max is refused.
func (s *soaker) scaleUp(g *protos.NodeGroup, seed int64, alone bool) {
	rnd := rand.New(rand.NewSource(seed))
	v, err := s.view(g)
	if err != nil {
		return
	}
	room := v.max - v.target
	delta := 1
	if room > 0 {
		delta = 1 + rnd.Intn(min(3, room))
	}
	op := "scale-up"
	if room <= 0 || rnd.Intn(10) == 0 {
		// CA never asks past max; the server must refuse it anyway.
		op, delta = "scale-up-past-max", room+1
	}
	s.count(op)
	s.mu.Lock()
	s.lastIncrease[v.id] = s.clock.Now()
	s.mu.Unlock()
	err = s.rpc("NodeGroupIncreaseSize", func(ctx context.Context) error {
		_, err := s.client.NodeGroupIncreaseSize(ctx, &protos.NodeGroupIncreaseSizeRequest{Id: v.id, Delta: int32(delta)})
		return err
	})
	s.note("%s %s target %d by %d: %v", op, v.id, v.target, delta, err)
	if op == "scale-up-past-max" && err == nil && alone {
		s.violate("group %s: increase by %d past max %d (target %d) accepted", v.id, delta, v.max, v.target)
	}
}

func running(in *protos.Instance) bool {
	return in.GetStatus().GetInstanceState() == protos.InstanceStatus_instanceRunning
}

func (s *soaker) deleteNodes(g *protos.NodeGroup, seed int64) {
	rnd := rand.New(rand.NewSource(seed))
	v, err := s.view(g)
	if err != nil {
		return
	}
	var candidates []*protos.Instance
	for _, in := range v.instances {
		if st := in.GetStatus().GetInstanceState(); st == protos.InstanceStatus_instanceRunning || st == protos.InstanceStatus_instanceCreating {
			candidates = append(candidates, in)
		}
	}
	rnd.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	k := min(1+rnd.Intn(2), v.target-v.min, len(candidates))
	if k <= 0 {
		return
	}
	req := &protos.NodeGroupDeleteNodesRequest{Id: v.id}
	s.mu.Lock()
	for _, in := range candidates[:k] {
		s.requested[in.GetId()] = true
		name := in.GetId()
		if i := strings.LastIndex(name, "/"); i >= 0 {
			name = "node-" + name[i+1:]
		}
		req.Nodes = append(req.Nodes, &protos.ExternalGrpcNode{ProviderID: in.GetId(), Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}})
	}
	s.mu.Unlock()
	s.count("delete")
	err = s.rpc("NodeGroupDeleteNodes", func(ctx context.Context) error {
		_, err := s.client.NodeGroupDeleteNodes(ctx, req)
		return err
	})
	var asked []string
	for _, n := range req.Nodes {
		asked = append(asked, n.GetProviderID())
	}
	s.note("delete %s target %d nodes %v: %v", v.id, v.target, asked, err)
}

func (s *soaker) decrease(g *protos.NodeGroup, seed int64) {
	rnd := rand.New(rand.NewSource(seed))
	v, err := s.view(g)
	if err != nil {
		return
	}
	registered := 0
	for _, in := range v.instances {
		if running(in) {
			registered++
		}
	}
	room := min(v.target-registered, v.target-v.min)
	s.mu.Lock()
	recent := s.clock.Now().Sub(s.lastIncrease[v.id]) < provisionTimeout
	s.mu.Unlock()
	if room <= 0 || recent {
		return
	}
	delta := 1 + rnd.Intn(room)
	// A decrease may cancel slots whose machines never became ready; note
	// them before the call, since the cloud may pick any of them.
	s.markCancellable(v.id)
	s.count("decrease")
	err = s.rpc("NodeGroupDecreaseTargetSize", func(ctx context.Context) error {
		_, err := s.client.NodeGroupDecreaseTargetSize(ctx, &protos.NodeGroupDecreaseTargetSizeRequest{Id: v.id, Delta: int32(-delta)})
		return err
	})
	s.note("decrease %s target %d registered %d by %d: %v", v.id, v.target, registered, -delta, err)
}

var readyStates = map[string]bool{"active": true, "InService": true, "running": true}

func (s *soaker) markCancellable(groupID string) {
	for _, g := range s.fake.State() {
		if !has(g.IDs, groupID) {
			continue
		}
		s.mu.Lock()
		for _, in := range g.Instances {
			if !readyStates[in.State] {
				s.cancellable[in.ProviderID] = true
			}
		}
		s.mu.Unlock()
	}
}

func has(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

var defaults = &protos.NodeGroupAutoscalingOptions{
	ScaleDownUtilizationThreshold: 0.5, ScaleDownGpuUtilizationThreshold: 0.5,
	ScaleDownUnneededDuration: durationpb.New(10 * time.Minute), ScaleDownUnreadyDuration: durationpb.New(20 * time.Minute),
	MaxNodeProvisionDuration: durationpb.New(15 * time.Minute),
}

// reads runs CA's read RPCs from several callers at once, as its main loop
// and its background instance cache do, with a Refresh in the middle.
func (s *soaker) reads(groups []*protos.NodeGroup) {
	s.count("concurrent-reads")
	// Instances in the snapshot must always be answered from it. Ids the
	// snapshot lacks may cost a cloud lookup (Exoscale), which may fail.
	var ids []string
	managed := map[string]bool{}
	for _, g := range s.fake.State() {
		for _, in := range g.Instances {
			ids = append(ids, in.ProviderID)
		}
	}
	for _, g := range groups {
		v, err := s.view(g)
		if err != nil {
			continue
		}
		for _, in := range v.instances {
			managed[in.GetId()] = true
		}
	}
	ids = append(ids, s.fake.Unmanaged...)
	ids = append(ids, s.fake.Provider+"://not-ours")
	var wg sync.WaitGroup
	for c := 0; c < s.o.callers; c++ {
		seed := s.rnd.Int63()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(seed))
			for i := 0; i < 10; i++ {
				g := groups[rnd.Intn(len(groups))]
				switch rnd.Intn(6) {
				case 0:
					id := ids[rnd.Intn(len(ids))]
					err := s.rpc("NodeGroupForNode", func(ctx context.Context) error {
						_, err := s.client.NodeGroupForNode(ctx, &protos.NodeGroupForNodeRequest{Node: &protos.ExternalGrpcNode{ProviderID: id, Name: "n"}})
						return err
					})
					if err != nil && managed[id] {
						s.violate("NodeGroupForNode(%s) of a snapshot instance failed: %v", id, err)
					}
				case 1:
					_, _ = s.view(g)
				case 2:
					_ = s.rpc("NodeGroupGetOptions", func(ctx context.Context) error {
						_, err := s.client.NodeGroupGetOptions(ctx, &protos.NodeGroupAutoscalingOptionsRequest{Id: g.GetId(), Defaults: defaults})
						return err
					})
				case 3:
					_ = s.rpc("NodeGroupTemplateNodeInfo", func(ctx context.Context) error {
						_, err := s.client.NodeGroupTemplateNodeInfo(ctx, &protos.NodeGroupTemplateNodeInfoRequest{Id: g.GetId()})
						return err
					})
				case 4:
					_ = s.nodeGroups()
				default:
					_ = s.rpc("GPULabel", func(ctx context.Context) error {
						_, err := s.client.GPULabel(ctx, &protos.GPULabelRequest{})
						return err
					})
				}
			}
		}()
	}
	s.refresh()
	wg.Wait()
}

// concurrent races mutations against each other and a Refresh, sometimes on
// one group: the server must serialise them and keep every bound.
func (s *soaker) concurrent(groups []*protos.NodeGroup) {
	s.count("concurrent-mutations")
	g := groups[s.rnd.Intn(len(groups))]
	var wg sync.WaitGroup
	increased := map[string]bool{}
	for c := 0; c < s.o.callers; c++ {
		target := g
		if s.rnd.Intn(3) == 0 {
			target = groups[s.rnd.Intn(len(groups))]
		}
		seed, kind := s.rnd.Int63(), s.rnd.Intn(4)
		if kind <= 1 {
			increased[target.GetId()] = true
			s.mu.Lock()
			s.lastIncrease[target.GetId()] = s.clock.Now()
			s.mu.Unlock()
		}
		if kind == 3 && increased[target.GetId()] {
			kind = 2
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch kind {
			case 0, 1:
				s.scaleUp(target, seed, false)
			case 2:
				s.deleteNodes(target, seed)
			default:
				s.decrease(target, seed)
			}
		}()
	}
	s.refresh()
	wg.Wait()
}

// check runs the per-step invariants.
func (s *soaker) check() {
	s.mu.Lock()
	s.r.checks++
	s.mu.Unlock()
	bounds := map[string][2]int{}
	for _, g := range s.nodeGroups() {
		v, err := s.view(g)
		if err != nil {
			s.violate("group %s: read failed while the snapshot should answer: %v", g.GetId(), err)
			continue
		}
		bounds[v.id] = [2]int{v.min, v.max}
		if v.target < v.min || v.target > v.max {
			s.violate("group %s: target %d outside [%d, %d]", v.id, v.target, v.min, v.max)
		}
	}
	for _, g := range s.fake.State() {
		for _, id := range g.IDs {
			if b, ok := bounds[id]; ok && (g.Desired < b[0] || g.Desired > b[1]) {
				s.violate("group %s: cloud's desired size %d outside [%d, %d]", id, g.Desired, b[0], b[1])
			}
		}
	}
	s.observe()
}

// observe compares the fake's live instances with the last look: any that
// vanished must have been asked for.
func (s *soaker) observe() {
	alive := map[string]bool{}
	for _, g := range s.fake.State() {
		for _, in := range g.Instances {
			if !in.Gone {
				alive[in.ProviderID] = true
			}
		}
	}
	s.mu.Lock()
	var lost []string
	for id := range s.alive {
		if !alive[id] && !s.requested[id] && !s.cancellable[id] {
			lost = append(lost, id)
		}
	}
	s.alive = alive
	s.mu.Unlock()
	for _, id := range lost {
		s.violate("instance %s was deleted but nobody asked to delete it", id)
	}
	if len(lost) > 0 && s.o.verbose {
		s.mu.Lock()
		fmt.Fprintf(os.Stderr, "lost %v after:\n  %s\n", lost, strings.Join(s.history, "\n  "))
		s.mu.Unlock()
	}
}

// cleanCompare turns faults off, lets the fake finish its pending work, takes
// a clean Refresh and compares our snapshot with the cloud.
func (s *soaker) cleanCompare() {
	s.fake.Chaos.SetFaults(0)
	defer s.fake.Chaos.SetFaults(s.o.faultRate, s.o.faults...)
	s.fake.Settle()
	s.observe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The first call may join a refresh that started under faults.
	_ = s.srv.RefreshOnce(ctx)
	if err := s.srv.RefreshOnce(ctx); err != nil {
		s.violate("clean refresh failed: %v", err)
		return
	}
	s.count("clean-compare")
	s.mu.Lock()
	s.r.checks++
	s.mu.Unlock()
	ours := map[string]groupView{}
	for _, g := range s.nodeGroups() {
		v, err := s.view(g)
		if err != nil {
			s.violate("group %s: read after clean refresh failed: %v", g.GetId(), err)
			continue
		}
		ours[v.id] = v
	}
	matched := 0
	for _, fg := range s.fake.State() {
		var v groupView
		found := false
		for _, id := range fg.IDs {
			if x, ok := ours[id]; ok {
				v, found = x, true
			}
		}
		if !found {
			s.violate("cloud group %v missing from our snapshot", fg.IDs)
			continue
		}
		matched++
		if v.target != fg.Desired {
			s.violate("group %s: our target %d, cloud's desired %d after a clean refresh", v.id, v.target, fg.Desired)
		}
		cloud := map[string]bool{}
		for _, in := range fg.Instances {
			if !in.Gone {
				cloud[in.ProviderID] = true
			}
		}
		mine := map[string]bool{}
		for _, in := range v.instances {
			if in.GetStatus().GetInstanceState() != protos.InstanceStatus_instanceDeleting {
				mine[in.GetId()] = true
			}
		}
		if diff := setDiff(mine, cloud); diff != "" {
			s.violate("group %s: instances differ from the cloud after a clean refresh: %s", v.id, diff)
		}
	}
	if matched != len(ours) {
		s.violate("our snapshot has %d groups, the cloud %d", len(ours), matched)
	}
}

func setDiff(mine, cloud map[string]bool) string {
	var extra, missing []string
	for id := range mine {
		if !cloud[id] {
			extra = append(extra, id)
		}
	}
	for id := range cloud {
		if !mine[id] {
			missing = append(missing, id)
		}
	}
	if len(extra) == 0 && len(missing) == 0 {
		return ""
	}
	sort.Strings(extra)
	sort.Strings(missing)
	return fmt.Sprintf("only ours %v, only the cloud's %v", extra, missing)
}

// quietKlog drops the in-process providers' logs, errors included (klog
// copies those to stderr unless stderrthreshold says otherwise).
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
