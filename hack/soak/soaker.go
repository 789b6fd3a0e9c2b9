package main

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
	"github.com/ca-providers/cluster-autoscaler-provider/hack/bench/cluster"
)

type report struct {
	// mutationTimeouts counts mutations whose cloud call outlived the
	// deadline (slow faults): CA sees an error at its deadline, as designed.
	mutationTimeouts int
	steps            int
	ops              map[string]int
	rpcs             int
	rpcErrors        int
	faults           map[simcloud.FaultKind]int
	checks           int
	// violations are the distinct violations in the order first seen, each
	// with the mutations that led to it; occurrences counts every one.
	violations  []string
	contexts    []string
	occurrences map[string]int
}

// violationCount is how many violations the run saw, repeats included.
func (r report) violationCount() int {
	n := 0
	for _, c := range r.occurrences {
		n += c
	}
	return n
}

// mutations are the RPCs that change the cloud; under a slow cloud they
// may end at the deadline with DeadlineExceeded. Every other RPC is served
// from the snapshot (or, for Refresh, answers before the deadline) and must
// never run into it.
var mutations = map[string]bool{"NodeGroupIncreaseSize": true, "NodeGroupDeleteNodes": true, "NodeGroupDecreaseTargetSize": true}

// provisionTimeout stands for CA's max-node-provision-time: CA decreases a
// group's target only when its registered nodes have lagged the target that
// long, never right after an increase (a new increase resets the clock). In
// process it is read on the fake's clock, one second per step. Against the
// binary it is wall time and shorter than the simulated clouds take to make
// an instance ready (5 to 8 s), so a decrease still finds slots to cancel.
const (
	provisionTimeout       = 15 * time.Second
	binaryProvisionTimeout = 3 * time.Second
)

// answerSlack is how much later than its deadline an RPC may come back
// before it counts as unanswered (scheduling on a busy 2-core machine).
const answerSlack = 250 * time.Millisecond

// soaker holds one provider's soak.
type soaker struct {
	o        options
	provider string
	client   protos.CloudProviderClient
	rnd      *rand.Rand
	// state reads the cloud's truth: from the fake in process, from the
	// binary's simulated-cloud state endpoint otherwise.
	state func() ([]simcloud.Group, error)
	// now is the clock the soak's CA-like timing rules read (the fake's
	// manual clock in process, the wall clock against the binary).
	now func() time.Time
	// unmanaged are providerIDs of nodes in no group.
	unmanaged []string
	// provisionTimeout is provisionTimeout or binaryProvisionTimeout.
	provisionTimeout time.Duration

	// In process only (nil against the binary): the server, the fake cloud
	// and its clock, which the soak advances and whose faults it pauses.
	srv   *externalgrpc.Server
	fake  *cluster.Fake
	clock *fakecloud.ManualClock

	mu          sync.Mutex
	r           report
	requested   map[string]bool
	cancellable map[string]bool
	alive       map[string]bool
	// lastSeen describes each instance as the last look saw it.
	lastSeen map[string]string
	history  []string
	// lastIncrease is the fake-clock time of each group's last increase.
	lastIncrease map[string]time.Time
	// launched are instances launched behind the provider's back and not
	// yet served, with the wall time of the launch (the provider's clock).
	launched map[string]time.Time
}

// soakMaxStaleness is the provider's --max-staleness in the soak, short so
// a 60 s run crosses it; servedWithin adds the longest the soak may go
// without a successful Refresh (random operations, faults).
const (
	soakMaxStaleness = 10 * time.Second
	servedWithin     = soakMaxStaleness + 10*time.Second
	launchEvery      = 15
)

// note records a mutation for the violation report (-v).
func (s *soaker) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = append(s.history, fmt.Sprintf("step %d: ", s.r.steps)+fmt.Sprintf(format, args...))
	if len(s.history) > 12 {
		s.history = s.history[len(s.history)-12:]
	}
}

// slowTimings returns how long the slow faults hold a request and the
// outcome-unknown window the providers' guards get (in production
// --unknown-outcome-window). A request is sent before its caller gives up, so
// a slow-applied one lands at most slow after the guard saw the unknown
// outcome; the window covers that with a margin for scheduling. A shorter
// window lets the late, older resize land after a newer one and remove
// instances nobody asked to delete.
func slowTimings(rpcTimeout time.Duration) (slow, window time.Duration) {
	slow = rpcTimeout + 500*time.Millisecond
	return slow, slow + time.Second
}

func soakOne(provider string, o options) (report, error) {
	s := &soaker{
		o: o, rnd: rand.New(rand.NewSource(o.seed)), provider: provider,
		r:         report{ops: map[string]int{}},
		requested: map[string]bool{}, cancellable: map[string]bool{}, alive: map[string]bool{},
		lastIncrease: map[string]time.Time{}, launched: map[string]time.Time{},
		provisionTimeout: provisionTimeout,
	}
	var stop func()
	var err error
	if o.binary != "" {
		stop, err = s.startBinary()
	} else {
		stop, err = s.startInProcess()
	}
	if err != nil {
		return s.r, err
	}
	s.observe()
	deadline := time.Now().Add(o.duration)
	for time.Now().Before(deadline) {
		s.step()
		s.r.steps++
		if s.fake != nil && s.r.steps%launchEvery == 0 {
			s.launchOutside()
		}
		if s.clock != nil {
			s.clock.Advance(time.Second)
		}
		s.check()
		if s.fake != nil && s.r.steps%o.cleanEvery == 0 {
			s.cleanCompare()
		}
	}
	if s.fake != nil {
		s.cleanCompare()
	}
	stop()
	return s.r, nil
}

// startInProcess starts the fake cloud (faults off), the provider built
// against it and the gRPC server in this process, takes a clean first
// snapshot and turns faults on. The returned func tears it all down and
// checks that no goroutine is left behind.
func (s *soaker) startInProcess() (func(), error) {
	o := s.o
	baseline := runtime.NumGoroutine()
	s.clock = fakecloud.NewManualClock(time.Now())
	s.now = s.clock.Now
	slow, window := slowTimings(o.rpcTimeout)
	// The guards measure the window on the wall clock: the slow fault holds
	// requests for real time.
	fake, err := cluster.Start(cluster.Options{
		Provider: s.provider, Nodes: o.nodes, Groups: o.groups, MinPerGroup: 1, MaxPerGroup: o.maxSize,
		Clock: s.clock, Faults: true, Seed: o.seed, MaxStaleness: soakMaxStaleness, UnknownOutcomeWindow: window,
	})
	if err != nil {
		return nil, err
	}
	s.fake = fake
	s.unmanaged = fake.Unmanaged
	s.state = func() ([]simcloud.Group, error) { return fake.State(), nil }
	// The slow fault holds a request past the RPC deadline, then lets it
	// through: the cloud may still apply what the caller gave up on.
	fake.Chaos.SetSlow(slow)
	m, _ := cluster.NewMetrics()
	ctx := context.Background()
	p, err := fake.Build(ctx, m)
	if err != nil {
		fake.Close()
		return nil, err
	}
	s.srv = externalgrpc.NewServer(p, externalgrpc.Options{Metrics: m})
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(externalgrpc.UnaryInterceptor(m), s.handlerTimer))
	protos.RegisterCloudProviderServer(gs, s.srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fake.Close()
		return nil, err
	}
	go func() { _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		gs.Stop()
		fake.Close()
		return nil, err
	}
	s.client = protos.NewCloudProviderClient(conn)
	if err := s.srv.RefreshOnce(ctx); err != nil {
		s.violate("first refresh without faults failed: %v", err)
	}
	fake.Chaos.SetMix(o.mix)
	return func() {
		s.r.faults = fake.Chaos.Injected()
		_ = conn.Close()
		gs.Stop()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = p.Cleanup(cctx)
		cancel()
		fake.Close()
		s.checkLeaks(baseline)
	}, nil
}

// checkLeaks gives background refreshes time to notice their cloud is gone,
// polling the goroutine count instead of sleeping a fixed time, and reports
// goroutines left behind.
func (s *soaker) checkLeaks(baseline int) {
	leakDeadline := time.Now().Add(15 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(leakDeadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		s.violate("goroutine leak: %d goroutines after shutdown, %d before start", n, baseline)
		if s.o.verbose {
			fmt.Fprintf(os.Stderr, "%s\n", buf)
		}
	}
}

// violate records a violation. A state that stays broken is reported at
// every check: it is listed once, with the count and the mutations before
// its first occurrence, so a CI log shows how it came about.
func (s *soaker) violate(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if s.r.occurrences == nil {
		s.r.occurrences = map[string]int{}
	}
	s.r.occurrences[msg]++
	if s.r.occurrences[msg] > 1 {
		return
	}
	s.r.violations = append(s.r.violations, msg)
	s.r.contexts = append(s.r.contexts, fmt.Sprintf("first at step %d, after:\n      %s", s.r.steps, strings.Join(s.history, "\n      ")))
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
	violation, cutByDeadline := answerViolation(method, took, s.o.rpcTimeout, err)
	if violation != "" {
		s.violate("%s", violation)
	}
	if cutByDeadline {
		s.mu.Lock()
		s.r.mutationTimeouts++
		s.mu.Unlock()
	}
	return err
}

// handlerTimer is a server interceptor that checks, on the server side,
// that no handler outlives its caller's deadline: a handler that ignored
// its context would keep locks and goroutines after CA gave up.
func (s *soaker) handlerTimer(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	if deadline, ok := ctx.Deadline(); ok {
		if violation := handlerOverrun(info.FullMethod, time.Now(), deadline, time.Since(start)); violation != "" {
			s.violate("%s", violation)
		}
	}
	return resp, err
}

type groupView struct {
	id        string
	minSize   int
	maxSize   int
	target    int
	instances []*protos.Instance
}

// view reads a group's target and instances over gRPC.
func (s *soaker) view(g *protos.NodeGroup) (groupView, error) {
	v := groupView{id: g.GetId(), minSize: int(g.GetMinSize()), maxSize: int(g.GetMaxSize())}
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
