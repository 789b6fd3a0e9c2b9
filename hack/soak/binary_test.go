package main

import (
	"slices"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

// TestBinaryArgsCarryTheMixAndTheTimings: the binary gets the soak's fault
// mix with slow faults held past the RPC deadline, and an outcome-unknown
// window that outlasts the hold, as the in-process soak sets them.
func TestBinaryArgsCarryTheMixAndTheTimings(t *testing.T) {
	mix := simcloud.Uniform(0.2, simcloud.AllFaults...)
	args := binaryArgs("vultr", mix, 2*time.Second)
	value := func(flag string) string {
		i := slices.Index(args, flag)
		if i < 0 || i+1 >= len(args) {
			t.Fatalf("%s missing from %v", flag, args)
		}
		return args[i+1]
	}
	got, err := simcloud.ParseFaultMix(value("--simulate-faults"), 0)
	if err != nil {
		t.Fatal(err)
	}
	slow, window := slowTimings(2 * time.Second)
	if !slices.Equal(got.Rates, mix.Rates) || got.Hold != slow || got.Hold <= 2*time.Second {
		t.Fatalf("--simulate-faults %q: rates %v hold %s, want %v held %s (past the 2s deadline)", value("--simulate-faults"), got.Rates, got.Hold, mix.Rates, slow)
	}
	w, err := time.ParseDuration(value("--unknown-outcome-window"))
	if err != nil || w != window || w <= slow {
		t.Fatalf("--unknown-outcome-window %q, want %s (longer than the %s hold)", value("--unknown-outcome-window"), window, slow)
	}
	if !slices.Contains(args, "--simulate") || value("--max-staleness") != soakMaxStaleness.String() {
		t.Fatalf("args %v", args)
	}
}
