package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
	"github.com/ca-providers/cluster-autoscaler-provider/hack/bench/cluster"
)

// binaryStart bounds the binary's start-up and its first snapshot, which
// it takes under faults and retries until one succeeds.
const binaryStart = 60 * time.Second

// binaryArgs are the flags the soak runs the provider binary with: its
// simulated cloud injecting mix (slow faults held past the RPC deadline), the
// soak's staleness bound, and an outcome-unknown window that outlasts a slow
// request, as in process.
func binaryArgs(provider string, mix simcloud.FaultMix, rpcTimeout time.Duration) []string {
	slow, window := slowTimings(rpcTimeout)
	mix.Hold = slow
	return []string{
		"--cloud-provider", provider, "--simulate", "--simulate-faults", mix.String(),
		"--address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0",
		"--max-staleness", soakMaxStaleness.String(), "--unknown-outcome-window", window.String(),
	}
}

// startBinary runs the provider binary with --simulate and the soak's fault
// mix, and drives it over gRPC like CA would. The simulated cloud's truth
// comes from the state the binary serves next to /metrics. The returned func
// stops the binary and checks that it drained and exited cleanly on SIGTERM.
func (s *soaker) startBinary() (func(), error) {
	ctx := context.Background()
	s.now = time.Now
	s.provisionTimeout = binaryProvisionTimeout
	var log io.Writer = io.Discard
	if s.o.verbose {
		log = os.Stderr
	}
	args := binaryArgs(s.provider, s.o.mix, s.o.rpcTimeout)
	proc, err := cluster.StartProcess(ctx, s.o.binary, args, nil, log, binaryStart)
	if err != nil {
		return nil, err
	}
	if err := proc.WaitReady(ctx, binaryStart); err != nil {
		_ = proc.Stop(5 * time.Second)
		return nil, err
	}
	stateURL := strings.TrimSuffix(proc.MetricsURL, "/metrics") + simcloud.StatePath
	client := &http.Client{Timeout: 5 * time.Second}
	last := simcloud.State{}
	s.state = func() ([]simcloud.Group, error) {
		st, err := simcloud.ReadState(ctx, client, stateURL)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		last = st
		s.mu.Unlock()
		return st.Groups, nil
	}
	conn, err := grpc.NewClient(proc.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		_ = proc.Stop(5 * time.Second)
		return nil, err
	}
	s.client = protos.NewCloudProviderClient(conn)
	return func() {
		if _, err := s.state(); err != nil {
			s.violate("%v", err)
		}
		s.mu.Lock()
		s.r.faults = last.Faults
		s.mu.Unlock()
		_ = conn.Close()
		// The binary's --shutdown-timeout (20 s) plus a margin.
		if err := proc.Stop(30 * time.Second); err != nil {
			s.violate("provider binary did not exit cleanly on SIGTERM: %v", err)
		}
	}, nil
}

// describeBinaryMode is the report's note on what the binary mode checks.
func describeBinaryMode(binary string) string {
	return fmt.Sprintf("against the binary %s with --simulate and --simulate-faults (gRPC from outside; the simulated cloud's truth from %s; "+
		"not checked here: the clean-refresh comparison, changes behind the provider's back, handler overruns and goroutine leaks, which need the process)",
		binary, simcloud.StatePath)
}
