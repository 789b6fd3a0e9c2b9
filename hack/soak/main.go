// Command soak drives random Cluster Autoscaler-like operations (scale-ups,
// deletions, decreases, refreshes, concurrent callers) over gRPC against each
// provider while its fake cloud injects faults (5xx, 429 with Retry-After,
// connection resets, answers slower than the deadline, malformed bodies,
// answers lost after the request was applied). After every step it checks
// the invariants a cautious operator cares about:
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
//
// With --binary it drives the built provider binary instead, started with
// --simulate and the same fault mix as --simulate-faults, over gRPC from
// outside as CA does; the invariants that need the cloud's truth read the
// simulated cloud's state endpoint (simcloud.StatePath).
//
// Files: main.go (flags, report), soaker.go (one provider's soak: setup, RPCs
// under deadlines), binary.go (the binary mode), workload.go (the random operations), invariants.go (the
// checks, as pure functions tested in invariants_test.go).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
	"github.com/ca-providers/cluster-autoscaler-provider/hack/bench/cluster"
	_ "github.com/ca-providers/cluster-autoscaler-provider/router"
)

type options struct {
	providers  []string
	duration   time.Duration
	nodes      int
	groups     int
	maxSize    int
	faultRate  float64
	mix        simcloud.FaultMix
	binary     string
	rpcTimeout time.Duration
	cleanEvery int
	callers    int
	seed       int64
	verbose    bool
	ops        map[string]bool
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
	for _, k := range simcloud.DefaultFaults {
		all = append(all, string(k))
	}
	fs.StringVar(&faults, "faults", strings.Join(all, ","), "fault mix: kinds sharing --fault-rate evenly, or kind:rate entries (add slow-applied for requests the cloud applies after the caller gave up)")
	fs.StringVar(&o.binary, "binary", "", "drive this provider binary, started with --simulate and the fault mix as --simulate-faults, over gRPC instead of the in-process server")
	fs.StringVar(&ops, "ops", strings.Join(allOps, ","), "operations to draw from")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.providers = strings.Split(providers, ",")
	if o.faultRate < 0 || o.faultRate > 1 {
		fmt.Fprintf(stderr, "error: --fault-rate %g: want a share between 0 and 1\n", o.faultRate)
		return 2
	}
	var err error
	if o.mix, err = simcloud.ParseFaultMix(faults, o.faultRate); err != nil {
		fmt.Fprintf(stderr, "error: --faults: %v\n", err)
		return 2
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
	if o.binary != "" {
		fmt.Fprintf(stdout, "soak: seed %d, %s per provider, the simulated demo cluster, faults %s, RPC deadline %s\n%s\n\n",
			o.seed, o.duration, o.mix, o.rpcTimeout, describeBinaryMode(o.binary))
	} else {
		fmt.Fprintf(stdout, "soak: seed %d, %s per provider, %d nodes in %d groups (min 1, max %d), faults %s, RPC deadline %s\n\n",
			o.seed, o.duration, o.nodes, o.groups, o.maxSize, o.mix, o.rpcTimeout)
	}
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
			r.mutationTimeouts, simcloud.FaultSummary(r.faults), r.checks, r.violationCount())
		total += r.violationCount()
		for i, v := range r.violations {
			d := p + ": " + v
			if n := r.occurrences[v]; n > 1 {
				d += fmt.Sprintf(" (seen %d times)", n)
			}
			details = append(details, d+"\n    "+r.contexts[i])
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
