package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/hack/bench/cluster"
)

// memSample is the binary's memory at one point of a long run.
type memSample struct {
	loop       int
	heap, rss  float64
	goroutines float64
}

// memResult is one long run: samples from the end of the warm-up to the end.
type memResult struct {
	provider string
	// mode is "external" (the fake cloud in the bench process, reached
	// through the provider's API URL) or "simulate" (the binary's own
	// --simulate fake, in its process).
	mode    string
	nodes   int
	groups  int
	warmup  int
	loops   int
	samples []memSample
	took    time.Duration
}

// memoryRun drives o.memLoops CA loops (after o.memWarmup loops of warm-up)
// against the binary and samples its heap in use and RSS along the way.
// Before each sample it has the binary collect garbage (pprof's heap
// profile with gc=1), so the heap figure is what is live, not wherever the
// GC cycle happens to stand.
func memoryRun(ctx context.Context, o options, provider, mode string, progress io.Writer) (memResult, error) {
	r := memResult{provider: provider, mode: mode, warmup: o.memWarmup, loops: o.memLoops}
	args := []string{"--cloud-provider", provider, "--address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0", "--profiling"}
	var env []string
	var unmanaged []string
	if mode == "simulate" {
		args = append(args, "--simulate")
	} else {
		r.nodes, r.groups = o.nodes[0], o.groups[0]
		fake, err := cluster.Start(cluster.Options{Provider: provider, Nodes: r.nodes, Groups: r.groups, Unmanaged: o.unmanaged, Seed: 1})
		if err != nil {
			return r, err
		}
		defer fake.Close()
		args = append(args, fake.Flags...)
		if fake.CloudConfig != "" {
			args = append(args, "--cloud-config", fake.CloudConfig)
		}
		env, unmanaged = fake.EnvList(), fake.Unmanaged
	}
	proc, client, stop, err := serveBinary(ctx, o.binary, args, env)
	if err != nil {
		return r, err
	}
	defer stop()
	w, err := discover(ctx, client, unmanaged)
	if err != nil {
		return r, err
	}
	if mode == "simulate" {
		r.nodes, r.groups = len(w.managed), len(w.groupIDs)
	}

	start := time.Now()
	every := max(o.memLoops/o.memSamples, 1)
	for i := 1; i <= o.memWarmup+o.memLoops; i++ {
		if _, err := runLoop(ctx, client, w, nil); err != nil {
			return r, fmt.Errorf("loop %d: %w", i, err)
		}
		if after := i - o.memWarmup; after == 0 || (after > 0 && after%every == 0) {
			s, err := sampleMemory(ctx, proc.MetricsURL)
			if err != nil {
				return r, err
			}
			s.loop = after
			r.samples = append(r.samples, s)
			fmt.Fprintf(progress, "  loop %d: heap %s MiB, RSS %s MiB\n", after, mib(s.heap), mib(s.rss))
		}
	}
	r.took = time.Since(start)
	return r, nil
}

// sampleMemory has the binary collect garbage, then reads its heap in use,
// RSS and goroutine count from /metrics.
func sampleMemory(ctx context.Context, metricsURL string) (memSample, error) {
	gcURL := strings.TrimSuffix(metricsURL, "/metrics") + "/debug/pprof/heap?gc=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, gcURL, nil)
	if err != nil {
		return memSample{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return memSample{}, fmt.Errorf("force a GC: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return memSample{}, fmt.Errorf("force a GC: %s answered %s (is --profiling on?)", gcURL, resp.Status)
	}
	series, err := cluster.Scrape(ctx, metricsURL)
	if err != nil {
		return memSample{}, err
	}
	return memSample{
		heap:       cluster.Sum(series, "go_memstats_heap_inuse_bytes", nil),
		rss:        cluster.Sum(series, "process_resident_memory_bytes", nil),
		goroutines: cluster.Sum(series, "go_goroutines", nil),
	}, nil
}

// change is end over start, in percent.
func change(start, end float64) string {
	if start == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f %%", 100*(end-start)/start)
}

func renderMemory(o options, rs []memResult, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Memory over a long run\n\n")
	fmt.Fprintf(&b, "- %s; %d warm-up loops, then %d measured loops per row, sampled %d times; whole run took %s\n",
		machine(o), o.memWarmup, o.memLoops, o.memSamples, took.Round(time.Second))
	fmt.Fprintf(&b, "- each sample is taken right after the binary collected garbage (`/debug/pprof/heap?gc=1`): heap is `go_memstats_heap_inuse_bytes`, RSS `process_resident_memory_bytes`\n")
	fmt.Fprintf(&b, "- *external*: the binary against the fake cloud in the bench process (its API URL in the provider's configuration); *simulate*: `--simulate`, the fake cloud inside the binary\n\n")
	fmt.Fprintf(&b, "| provider | fake | N | G | loops | heap MiB start → end | heap change | heap min–max | RSS MiB start → end | RSS change | RSS min–max | goroutines start → end | seconds |\n")
	fmt.Fprintf(&b, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		first, last := r.samples[0], r.samples[len(r.samples)-1]
		hlo, hhi, rlo, rhi := first.heap, first.heap, first.rss, first.rss
		for _, s := range r.samples {
			hlo, hhi, rlo, rhi = min(hlo, s.heap), max(hhi, s.heap), min(rlo, s.rss), max(rhi, s.rss)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s → %s | %s | %s–%s | %s → %s | %s | %s–%s | %.0f → %.0f | %.0f |\n",
			r.provider, r.mode, r.nodes, r.groups, r.loops,
			mib(first.heap), mib(last.heap), change(first.heap, last.heap), mib(hlo), mib(hhi),
			mib(first.rss), mib(last.rss), change(first.rss, last.rss), mib(rlo), mib(rhi),
			first.goroutines, last.goroutines, r.took.Seconds())
	}
	return b.String()
}
