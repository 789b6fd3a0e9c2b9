// Command bench replays the upstream Cluster Autoscaler's per-loop call
// pattern over gRPC against the provider binary, for each provider backed by
// its fake cloud API, and prints a markdown table: cloud API calls per loop
// (from the binary's own metrics), per-RPC latency, loop wall time, heap and
// RSS. `make bench` runs it; see docs/performance.md for the results. With
// -memory-loops it instead runs a long run per provider (the fake cloud
// outside the binary, then --simulate's inside it) and reports the binary's
// heap in use and RSS from the end of a warm-up to the end.
//
// The binary runs as a child process so that its heap and RSS are its own;
// the fake cloud and this driver live in the parent. NodeGroupForNode's
// server-side time is also measured in-process on the handler itself, because
// the binary's histogram only resolves to bucket bounds.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/hack/bench/cluster"
	_ "github.com/ca-providers/cluster-autoscaler-provider/router"
)

// rpcTimeout is CA's default grpc_timeout.
const rpcTimeout = 5 * time.Second

// Per-loop multipliers from the contract doc §4.3 (steady state).
const (
	// unmanagedAsks: "not autoscaled" answers are never cached, so each
	// unmanaged node is asked 5–7 times per loop.
	unmanagedAsks = 6
	// targetSizeAsks: TargetSize is asked 3–6 times per group per loop.
	targetSizeAsks = 4
	// getOptionsAsks: GetOptions is asked about twice per autoscaled node.
	getOptionsAsks = 2
)

type options struct {
	binary    string
	providers []string
	nodes     []int
	groups    []int
	loops     int
	unmanaged int
	out       string
	// window is how long the loops of one row run at least, so a row
	// includes a loop past the binary's --max-staleness (default 60 s).
	window time.Duration
	// memLoops, when not 0, runs the long memory run instead of the table:
	// memWarmup loops, then memLoops loops sampled memSamples times, with
	// the fake cloud outside the binary and with --simulate's inside it.
	memLoops, memWarmup, memSamples int
	// memFakes are where the memory run's fake cloud lives: "external",
	// "simulate" or both.
	memFakes []string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	var providers, nodes, groups, memFakes string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.binary, "binary", "bin/cluster-autoscaler-provider", "provider binary to benchmark (make build)")
	fs.StringVar(&providers, "providers", strings.Join(cluster.Providers, ","), "providers to benchmark")
	fs.StringVar(&nodes, "nodes", "100,1000,5000,10000", "node counts N")
	fs.StringVar(&groups, "groups", "3,20,100", "node group counts G")
	fs.IntVar(&o.loops, "loops", 3, "measured CA loops per configuration (after one warm-up loop)")
	fs.IntVar(&o.unmanaged, "unmanaged", 3, "nodes in no group (control plane), asked repeatedly every loop")
	fs.StringVar(&o.out, "out", "", "also write the markdown report to this file")
	fs.IntVar(&o.memLoops, "memory-loops", 0, "run the long memory run instead of the table: this many CA loops per provider, against the fake outside the binary (first -nodes and -groups) and with --simulate (0: off)")
	fs.IntVar(&o.memWarmup, "memory-warmup", 1000, "loops before the memory run's first sample")
	fs.IntVar(&o.memSamples, "memory-samples", 10, "samples over the memory run's measured loops")
	fs.StringVar(&memFakes, "memory-fakes", "external,simulate", "where the memory run's fake cloud lives: external (the bench process), simulate (inside the binary), or both")
	fs.DurationVar(&o.window, "window", 0, "keep looping each row until this long after the first measured loop, for the mean over a window that includes the --max-staleness re-reads (0: off)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.providers = strings.Split(providers, ",")
	o.memFakes = strings.Split(memFakes, ",")
	for _, f := range o.memFakes {
		if f != "external" && f != "simulate" {
			fmt.Fprintf(stderr, "error: -memory-fakes: %q is neither external nor simulate\n", f)
			return 2
		}
	}
	var err error
	if o.nodes, err = ints(nodes); err == nil {
		o.groups, err = ints(groups)
	}
	if err != nil || o.loops < 1 || o.memLoops < 0 || o.memWarmup < 0 || o.memSamples < 1 {
		fmt.Fprintf(stderr, "error: bad -nodes/-groups/-loops/-memory-*: %v\n", err)
		return 2
	}
	if _, err := os.Stat(o.binary); err != nil {
		fmt.Fprintf(stderr, "error: %v (run make build first)\n", err)
		return 2
	}
	// The in-process providers log their configuration; the table is the output.
	quietKlog()
	ctx := context.Background()
	start := time.Now()
	if o.memLoops > 0 {
		return runMemory(ctx, o, stdout, stderr)
	}
	var results []result
	for _, p := range o.providers {
		for _, n := range o.nodes {
			for _, g := range o.groups {
				fmt.Fprintf(stderr, "bench %s N=%d G=%d ...\n", p, n, g)
				r, err := benchOne(ctx, o, p, n, g)
				if err != nil {
					fmt.Fprintf(stderr, "error: %s N=%d G=%d: %v\n", p, n, g, err)
					return 1
				}
				results = append(results, r)
			}
		}
	}
	return emit(o, render(o, results, time.Since(start)), stdout, stderr)
}

// runMemory runs the long memory run for every provider, both ways.
func runMemory(ctx context.Context, o options, stdout, stderr io.Writer) int {
	start := time.Now()
	var results []memResult
	for _, p := range o.providers {
		for _, mode := range o.memFakes {
			fmt.Fprintf(stderr, "memory %s %s: %d + %d loops ...\n", p, mode, o.memWarmup, o.memLoops)
			r, err := memoryRun(ctx, o, p, mode, stderr)
			if err != nil {
				fmt.Fprintf(stderr, "error: memory %s %s: %v\n", p, mode, err)
				return 1
			}
			results = append(results, r)
		}
	}
	return emit(o, renderMemory(o, results, time.Since(start)), stdout, stderr)
}

// emit prints the report and writes it to -out.
func emit(o options, report string, stdout, stderr io.Writer) int {
	fmt.Fprint(stdout, report)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(report), 0o644); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 1
		}
	}
	return 0
}

// machine describes where the bench ran.
func machine(o options) string {
	return fmt.Sprintf("%s, %s/%s, %d CPUs (GOMAXPROCS %d), %s, %s, binary %s", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel(), time.Now().UTC().Format("2006-01-02 15:04 MST"), o.binary)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// result is one provider × N × G measurement.
type result struct {
	provider string
	nodes    int
	groups   int
	calls    []int
	byOp     map[string]float64
	loopWall []time.Duration
	latency  map[string][]time.Duration
	handler  []time.Duration
	under100 float64
	// afterScaleUp is the cloud calls of the loop right after an
	// IncreaseSize(1) of one group (-1 when the scale-up was refused), and
	// afterByOp those calls by operation.
	afterScaleUp int
	afterByOp    map[string]float64
	// scaleUpErr is why the scale-up was refused.
	scaleUpErr error
	// windowMean is the mean cloud calls per loop over every loop from the
	// first measured one until -window had passed (the scale-up's own
	// request left out), windowLoops how many loops that was; 0 loops: off.
	windowMean  float64
	windowLoops int
	windowTook  time.Duration
	heapBytes   float64
	rssBytes    float64
}

// serveBinary starts binary with args and env, waits until it is ready and
// dials its gRPC address; stop closes the connection and stops the process.
func serveBinary(ctx context.Context, binary string, args, env []string) (*cluster.Process, protos.CloudProviderClient, func(), error) {
	proc, err := cluster.StartProcess(ctx, binary, args, env, nil, time.Minute)
	if err != nil {
		return nil, nil, nil, err
	}
	// The first snapshot of a large cluster under the cloud's default rate
	// limit can outlast the binary's 30 s start-up refresh (Volcengine lists
	// 10,000 instances in about 200 pages at 10/s); it then serves
	// not-ready and keeps refreshing, as it would for CA.
	if err := proc.WaitReady(ctx, 5*time.Minute); err != nil {
		proc.Stop(5 * time.Second)
		return nil, nil, nil, err
	}
	conn, err := grpc.NewClient(proc.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		proc.Stop(5 * time.Second)
		return nil, nil, nil, fmt.Errorf("dial: %w", err)
	}
	return proc, protos.NewCloudProviderClient(conn), func() { conn.Close(); proc.Stop(5 * time.Second) }, nil
}

// workload is the prepared requests of one loop.
type workload struct {
	groupIDs  []string
	managed   []*protos.ExternalGrpcNode
	groupOf   []string
	unmanaged []*protos.ExternalGrpcNode
	defaults  *protos.NodeGroupAutoscalingOptions
}

func benchOne(ctx context.Context, o options, provider string, nodes, groups int) (result, error) {
	r := result{provider: provider, nodes: nodes, groups: groups, latency: map[string][]time.Duration{}}
	fake, err := cluster.Start(cluster.Options{Provider: provider, Nodes: nodes, Groups: groups, Unmanaged: o.unmanaged, Seed: 1})
	if err != nil {
		return r, err
	}
	defer fake.Close()

	args := append([]string{"--cloud-provider", provider, "--address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0"}, fake.Flags...)
	if fake.CloudConfig != "" {
		args = append(args, "--cloud-config", fake.CloudConfig)
	}
	proc, client, stop, err := serveBinary(ctx, o.binary, args, fake.EnvList())
	if err != nil {
		return r, err
	}
	defer stop()

	w, err := discover(ctx, client, fake.Unmanaged)
	if err != nil {
		return r, err
	}
	if len(w.managed) != nodes || len(w.groupIDs) != groups {
		return r, fmt.Errorf("served %d nodes in %d groups, seeded %d in %d", len(w.managed), len(w.groupIDs), nodes, groups)
	}
	// CA asks GPULabel once per process (it caches the first success).
	if err := timed(ctx, nil, "GPULabel", func(c context.Context) error {
		_, err := client.GPULabel(c, &protos.GPULabelRequest{})
		return err
	}); err != nil {
		return r, err
	}
	// The warm-up loop fills what CA's first loop fills (templates).
	if _, err := runLoop(ctx, client, w, nil); err != nil {
		return r, fmt.Errorf("warm-up loop: %w", err)
	}
	before, err := cluster.Scrape(ctx, proc.MetricsURL)
	if err != nil {
		return r, err
	}
	prev := before
	windowStart := time.Now()
	for i := 0; i < o.loops; i++ {
		wall, err := runLoop(ctx, client, w, r.latency)
		if err != nil {
			return r, fmt.Errorf("loop %d: %w", i+1, err)
		}
		r.loopWall = append(r.loopWall, wall)
		cur, err := cluster.Scrape(ctx, proc.MetricsURL)
		if err != nil {
			return r, err
		}
		r.calls = append(r.calls, int(cloudCalls(cur, nil)-cloudCalls(prev, nil)))
		prev = cur
	}
	after := prev
	r.byOp = map[string]float64{}
	b, a := cluster.ByLabel(before, "cluster_autoscaler_provider_cloud_requests_total", "operation"), cluster.ByLabel(after, "cluster_autoscaler_provider_cloud_requests_total", "operation")
	for op, v := range a {
		if d := (v - b[op]) / float64(o.loops); d > 0 {
			r.byOp[op] = d
		}
	}
	le := map[string]string{"method": "NodeGroupForNode", "le": "0.0001"}
	cnt := map[string]string{"method": "NodeGroupForNode"}
	const hist = "cluster_autoscaler_provider_grpc_request_duration_seconds"
	fast := cluster.Sum(after, hist+"_bucket", le) - cluster.Sum(before, hist+"_bucket", le)
	total := cluster.Sum(after, hist+"_count", cnt) - cluster.Sum(before, hist+"_count", cnt)
	if total > 0 {
		r.under100 = fast / total
	}
	r.heapBytes = cluster.Sum(after, "go_memstats_heap_inuse_bytes", nil)
	r.rssBytes = cluster.Sum(after, "process_resident_memory_bytes", nil)

	// One loop right after a scale-up of one group: what a change costs.
	r.afterScaleUp = -1
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = client.NodeGroupIncreaseSize(sctx, &protos.NodeGroupIncreaseSizeRequest{Id: w.groupIDs[0], Delta: 1})
	cancel()
	r.scaleUpErr = err
	if err == nil {
		if _, err := runLoop(ctx, client, w, nil); err != nil {
			return r, fmt.Errorf("loop after scale-up: %w", err)
		}
		cur, err := cluster.Scrape(ctx, proc.MetricsURL)
		if err != nil {
			return r, err
		}
		// The IncreaseSize call itself is not part of the loop.
		r.afterScaleUp = int(cloudCalls(cur, nil) - cloudCalls(after, nil) - mutationCalls(cur, after))
		r.afterByOp = map[string]float64{}
		b, a := cluster.ByLabel(after, "cluster_autoscaler_provider_cloud_requests_total", "operation"), cluster.ByLabel(cur, "cluster_autoscaler_provider_cloud_requests_total", "operation")
		for op, v := range a {
			if d := v - b[op]; d > 0 && !mutationOp(op) {
				r.afterByOp[op] = d
			}
		}
	}

	if o.window > 0 {
		loops := o.loops
		if r.afterScaleUp >= 0 {
			loops++
		}
		for time.Since(windowStart) < o.window {
			if _, err := runLoop(ctx, client, w, nil); err != nil {
				return r, fmt.Errorf("loop in the window: %w", err)
			}
			loops++
		}
		cur, err := cluster.Scrape(ctx, proc.MetricsURL)
		if err != nil {
			return r, err
		}
		r.windowLoops, r.windowTook = loops, time.Since(windowStart)
		r.windowMean = (cloudCalls(cur, nil) - cloudCalls(before, nil) - mutationCalls(cur, before)) / float64(loops)
	}

	r.handler, err = handlerTimes(ctx, fake, w)
	if err != nil {
		return r, err
	}
	return r, nil
}

// mutationCalls counts the non-GET cloud requests between two scrapes
// (Volcengine's actions all travel as GET, and its scale-up is one
// ModifyScalingGroup), so a loop's count leaves out the scale-up itself.
func mutationCalls(cur, prev []cluster.Series) float64 {
	c := cluster.ByLabel(cur, "cluster_autoscaler_provider_cloud_requests_total", "operation")
	p := cluster.ByLabel(prev, "cluster_autoscaler_provider_cloud_requests_total", "operation")
	var n float64
	for op, v := range c {
		if mutationOp(op) {
			n += v - p[op]
		}
	}
	return n
}

// mutationOp tells a mutation's operation label from a read's.
func mutationOp(op string) bool {
	return !strings.HasPrefix(op, "GET ") || strings.Contains(op, "Action=Modify")
}

func cloudCalls(s []cluster.Series, match map[string]string) float64 {
	return cluster.Sum(s, "cluster_autoscaler_provider_cloud_requests_total", match)
}

// discover lists what CA would see: the groups, and one Node per instance
// (providerID as the instance id, labels as a kubelet sets them).
func discover(ctx context.Context, client protos.CloudProviderClient, unmanaged []string) (*workload, error) {
	w := &workload{defaults: &protos.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold: 0.5, ScaleDownGpuUtilizationThreshold: 0.5,
		ScaleDownUnneededDuration: durationpb.New(10 * time.Minute), ScaleDownUnreadyDuration: durationpb.New(20 * time.Minute),
		MaxNodeProvisionDuration: durationpb.New(15 * time.Minute),
	}}
	c, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := client.NodeGroups(c, &protos.NodeGroupsRequest{})
	if err != nil {
		return nil, fmt.Errorf("NodeGroups: %w", err)
	}
	for _, g := range resp.GetNodeGroups() {
		w.groupIDs = append(w.groupIDs, g.GetId())
		nr, err := client.NodeGroupNodes(c, &protos.NodeGroupNodesRequest{Id: g.GetId()})
		if err != nil {
			return nil, fmt.Errorf("NodeGroupNodes %s: %w", g.GetId(), err)
		}
		for i, in := range nr.GetInstances() {
			name := fmt.Sprintf("node-%s-%d", shortID(g.GetId()), i)
			w.managed = append(w.managed, kubeNode(name, in.GetId()))
			w.groupOf = append(w.groupOf, g.GetId())
		}
	}
	for i, id := range unmanaged {
		w.unmanaged = append(w.unmanaged, kubeNode(fmt.Sprintf("control-plane-%d", i), id))
	}
	return w, nil
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[len(id)-8:]
	}
	return id
}

func kubeNode(name, providerID string) *protos.ExternalGrpcNode {
	return &protos.ExternalGrpcNode{
		Name: name, ProviderID: providerID,
		Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"node.kubernetes.io/instance-type": "bench-type", "topology.kubernetes.io/region": "bench-region",
			"topology.kubernetes.io/zone": "bench-zone-a", "beta.kubernetes.io/os": "linux",
		},
		Annotations: map[string]string{
			"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true",
		},
	}
}

// timed runs one RPC under CA's deadline and records its round-trip time.
func timed(ctx context.Context, lat map[string][]time.Duration, method string, f func(context.Context) error) error {
	c, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	start := time.Now()
	err := f(c)
	if lat != nil {
		lat[method] = append(lat[method], time.Since(start))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// optional accepts Unimplemented, which the four optional RPCs may answer.
func optional(err error) error {
	if err != nil && strings.Contains(err.Error(), "code = Unimplemented") {
		return nil
	}
	return err
}

// runLoop replays one CA loop in the order of the contract doc §4.2, one call
// at a time as CA's main loop does.
func runLoop(ctx context.Context, client protos.CloudProviderClient, w *workload, lat map[string][]time.Duration) (time.Duration, error) {
	start := time.Now()
	steps := []func() error{
		func() error {
			return timed(ctx, lat, "Refresh", func(c context.Context) error { _, err := client.Refresh(c, &protos.RefreshRequest{}); return err })
		},
		func() error {
			return timed(ctx, lat, "NodeGroups", func(c context.Context) error {
				_, err := client.NodeGroups(c, &protos.NodeGroupsRequest{})
				return err
			})
		},
		func() error {
			for _, n := range w.managed {
				if err := timed(ctx, lat, "NodeGroupForNode", func(c context.Context) error {
					resp, err := client.NodeGroupForNode(c, &protos.NodeGroupForNodeRequest{Node: n})
					if err == nil && resp.GetNodeGroup().GetId() == "" {
						return fmt.Errorf("node %s: no group", n.GetProviderID())
					}
					return err
				}); err != nil {
					return err
				}
			}
			for i := 0; i < unmanagedAsks; i++ {
				for _, n := range w.unmanaged {
					if err := timed(ctx, lat, "NodeGroupForNode(unmanaged)", func(c context.Context) error {
						_, err := client.NodeGroupForNode(c, &protos.NodeGroupForNodeRequest{Node: n})
						return err
					}); err != nil {
						return err
					}
				}
			}
			return nil
		},
		func() error {
			for i := 0; i < targetSizeAsks; i++ {
				for _, id := range w.groupIDs {
					if err := timed(ctx, lat, "NodeGroupTargetSize", func(c context.Context) error {
						_, err := client.NodeGroupTargetSize(c, &protos.NodeGroupTargetSizeRequest{Id: id})
						return err
					}); err != nil {
						return err
					}
				}
			}
			return nil
		},
		func() error {
			for _, id := range w.groupIDs {
				if err := timed(ctx, lat, "NodeGroupNodes", func(c context.Context) error {
					_, err := client.NodeGroupNodes(c, &protos.NodeGroupNodesRequest{Id: id})
					return err
				}); err != nil {
					return err
				}
				if err := timed(ctx, lat, "NodeGroupTemplateNodeInfo", func(c context.Context) error {
					_, err := client.NodeGroupTemplateNodeInfo(c, &protos.NodeGroupTemplateNodeInfoRequest{Id: id})
					return optional(err)
				}); err != nil {
					return err
				}
			}
			return nil
		},
		func() error {
			// CA asks GetOptions of the node's group, which it has cached
			// from the lookup above.
			for i := 0; i < getOptionsAsks; i++ {
				for _, id := range w.groupOf {
					if err := timed(ctx, lat, "NodeGroupGetOptions", func(c context.Context) error {
						_, err := client.NodeGroupGetOptions(c, &protos.NodeGroupAutoscalingOptionsRequest{Id: id, Defaults: w.defaults})
						return optional(err)
					}); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// handlerTimes times the NodeGroupForNode handler itself, in-process, for
// every node three times: the server time without gRPC and loopback.
func handlerTimes(ctx context.Context, fake *cluster.Fake, w *workload) ([]time.Duration, error) {
	p, err := fake.Build(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer p.Cleanup(ctx)
	srv := externalgrpc.NewServer(p, externalgrpc.Options{})
	if err := srv.RefreshOnce(ctx); err != nil {
		return nil, fmt.Errorf("in-process refresh: %w", err)
	}
	nodes := append(append([]*protos.ExternalGrpcNode(nil), w.managed...), w.unmanaged...)
	out := make([]time.Duration, 0, 3*len(nodes))
	for pass := 0; pass < 3; pass++ {
		for _, n := range nodes {
			req := &protos.NodeGroupForNodeRequest{Node: n}
			start := time.Now()
			_, err := srv.NodeGroupForNode(ctx, req)
			out = append(out, time.Since(start))
			if err != nil {
				return nil, fmt.Errorf("in-process NodeGroupForNode: %w", err)
			}
		}
	}
	return out, nil
}

func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var t time.Duration
	for _, x := range d {
		t += x
	}
	return t / time.Duration(len(d))
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Microsecond)) }

func pq(d []time.Duration) string {
	return us(percentile(d, 0.50)) + " / " + us(percentile(d, 0.99))
}

func callRange(c []int) string {
	lo, hi, sum := c[0], c[0], 0
	for _, x := range c {
		lo, hi, sum = min(lo, x), max(hi, x), sum+x
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%.1f (%d–%d)", float64(sum)/float64(len(c)), lo, hi)
}

func mib(b float64) string { return fmt.Sprintf("%.1f", b/(1<<20)) }

func render(o options, rs []result, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Machine\n\n")
	fmt.Fprintf(&b, "- %s, %s/%s, %d CPUs (GOMAXPROCS %d), %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel())
	fmt.Fprintf(&b, "- %s, binary %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), o.binary)
	fmt.Fprintf(&b, "- %d measured loops per row after one warm-up loop; %d unmanaged nodes asked %d× per loop; whole run took %s\n\n",
		o.loops, o.unmanaged, unmanagedAsks, took.Round(time.Second))
	fmt.Fprintf(&b, "### CA loop over gRPC (loopback), provider binary against its fake cloud\n\n")
	fmt.Fprintf(&b, "Latencies are client round trips in µs as p50 / p99, except *NGFN handler*, which is the server's handler time in-process. ")
	fmt.Fprintf(&b, "*≤100µs* is the share of NodeGroupForNode requests the binary's own histogram put in its 100 µs bucket.\n\n")
	fmt.Fprintf(&b, "*cloud calls/loop* is a loop where nothing changed; *after scale-up* is the loop right after an IncreaseSize(1) of one group (the mutation's own call not counted).\n\n")
	fmt.Fprintf(&b, "| provider | N | G | cloud calls/loop | after scale-up | loop wall ms | Refresh | NodeGroupForNode | NGFN handler | ≤100µs | GetOptions | TargetSize | Nodes | heap MiB | RSS MiB |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		after := "refused"
		if r.afterScaleUp >= 0 {
			after = strconv.Itoa(r.afterScaleUp)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %.1f | %s | %s | %s | %.1f%% | %s | %s | %s | %s | %s |\n",
			r.provider, r.nodes, r.groups, callRange(r.calls), after, float64(mean(r.loopWall))/float64(time.Millisecond),
			pq(r.latency["Refresh"]), pq(r.latency["NodeGroupForNode"]), pq(r.handler), 100*r.under100,
			pq(r.latency["NodeGroupGetOptions"]), pq(r.latency["NodeGroupTargetSize"]), pq(r.latency["NodeGroupNodes"]),
			mib(r.heapBytes), mib(r.rssBytes))
	}
	if o.window > 0 {
		fmt.Fprintf(&b, "\n*Mean over a window*: every loop from the first measured one until at least %s had passed (the unchanged loops, the one after the scale-up and as many more as fit), so it includes the re-reads the binary makes when data reaches its --max-staleness bound.\n\n", o.window)
		fmt.Fprintf(&b, "| provider | N | G | loops | seconds | mean cloud calls/loop |\n|---|---:|---:|---:|---:|---:|\n")
		for _, r := range rs {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %.0f | %.1f |\n", r.provider, r.nodes, r.groups, r.windowLoops, r.windowTook.Seconds(), r.windowMean)
		}
	}
	fmt.Fprintf(&b, "\n### Cloud calls per loop by operation\n\n")
	fmt.Fprintf(&b, "*after scale-up* leaves out the IncreaseSize's own request, as the column above does.\n\n")
	fmt.Fprintf(&b, "| provider | N | G | loop where nothing changed | loop after scale-up |\n|---|---:|---:|---|---|\n")
	for _, r := range rs {
		after := opList(r.afterByOp)
		if r.afterScaleUp < 0 {
			after = "refused: " + strings.ReplaceAll(fmt.Sprint(r.scaleUpErr), "|", "/")
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", r.provider, r.nodes, r.groups, opList(r.byOp), after)
	}
	return b.String()
}

// opList renders calls by operation, sorted by operation.
func opList(byOp map[string]float64) string {
	ops := make([]string, 0, len(byOp))
	for op, v := range byOp {
		ops = append(ops, fmt.Sprintf("`%s` %.1f", op, v))
	}
	sort.Strings(ops)
	if len(ops) == 0 {
		return "none"
	}
	return strings.Join(ops, ", ")
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "model name") {
			if i := strings.Index(line, ":"); i >= 0 {
				return strings.TrimSpace(line[i+1:])
			}
		}
	}
	return "unknown CPU"
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
