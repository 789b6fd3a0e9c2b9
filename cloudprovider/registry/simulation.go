package registry

import (
	"fmt"
	"os"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

// StartSimulation runs the steps every Simulator takes once its fake cloud
// is seeded: serve it on opts.SimulateCloudAddress (a loopback port when
// empty), inject opts.SimulateFaults and serve its state (simcloud.Wire;
// groups is read on every request), then build the provider against it. If
// a step fails the fake is closed, so nothing is left listening. The
// returned Simulation has Provider, URL, Close and State set; the Simulator
// fills in the rest for its demo.
func StartSimulation(name string, fake *fakecloud.API, opts BuildOptions, groups func() []simcloud.Group,
	build func(endpoint string) (cloudprovider.CloudProvider, error)) (*Simulation, error) {
	endpoint, err := fake.ServeAt(opts.SimulateCloudAddress)
	if err != nil {
		return nil, fmt.Errorf("%s simulation: %w", name, err)
	}
	state, err := simcloud.Wire(fake, opts.SimulateFaults, groups)
	if err != nil {
		fake.Close()
		return nil, fmt.Errorf("%s simulation: --simulate-faults: %w", name, err)
	}
	p, err := build(endpoint)
	if err != nil {
		fake.Close()
		return nil, err
	}
	return &Simulation{Provider: p, URL: endpoint, Close: fake.Close, State: state}, nil
}

// SimulationCredential is the credential a simulation signs with: the
// environment variable env when set (so a test can follow a known
// credential through the whole binary), else the simulation's dummy.
func SimulationCredential(env, dummy string) string {
	if v := strings.TrimSpace(os.Getenv(env)); v != "" {
		return v
	}
	return dummy
}
