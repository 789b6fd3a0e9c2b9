package reporting

import (
	"context"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

// seededProvider is an in-memory provider with two groups, refreshed.
func seededProvider(t *testing.T) *cloudprovidertest.InMemoryProvider {
	t.Helper()
	return seededProviderWith(t, groupstate.GuardOptions{})
}

// seededProviderWith is seededProvider with its groups' guards measuring
// the quarantine by guard.
func seededProviderWith(t *testing.T, guard groupstate.GuardOptions) *cloudprovidertest.InMemoryProvider {
	t.Helper()
	p := cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud(
		cloudprovidertest.CloudGroup{ID: "pool-a", Min: 1, Max: 5, Running: 2},
		cloudprovidertest.CloudGroup{ID: "pool-b", Min: 0, Max: 3, Running: 1, NoTemplate: true, Options: true},
	))
	p.Guard = guard
	if err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}
