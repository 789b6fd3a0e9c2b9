package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// TestTwoSpecsForOneGroupExit2: two --nodes specs for one group, one by id
// and one by name, are found at the first listing and exit 2 naming both;
// two for the same name with other bounds exit 2 before any listing.
func TestTwoSpecsForOneGroupExit2(t *testing.T) {
	reg, ok := registry.Lookup("vultr")
	if !ok {
		t.Skip("vultr is not compiled in")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The simulated cloud is seeded alike each time: learn a pool's id.
	sim, err := reg.Simulate(ctx, registry.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sim.Close()
	var id, name string
	for i, n := range sim.GroupNames {
		id, name = i, n
		break
	}
	if id == "" || name == "" || id == name {
		t.Fatalf("simulated groups %v: want one with an id and another name", sim.GroupNames)
	}
	for _, specs := range [][]string{
		{"1:3:" + id, "1:4:" + name},
		{"1:3:" + name, "1:4:" + name},
	} {
		var out, errb strings.Builder
		code := run(ctx, []string{"--cloud-provider", "vultr", "--simulate", "--nodes", specs[0], "--nodes", specs[1],
			"--address", "127.0.0.1:0", "--metrics-address", ""}, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), specs[0]) || !strings.Contains(errb.String(), specs[1]) {
			t.Fatalf("--nodes %s --nodes %s: exit %d, stderr %q; want 2 naming both specs", specs[0], specs[1], code, errb.String())
		}
	}
}
