package exoscale_test

import (
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/providertest"
)

// TestConformance runs the kit under each undocumented behaviour the fake
// can take.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, v := range providertest.ExoscaleVariants() {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			cloudprovidertest.Run(t, providertest.ExoscaleHarness(v))
		})
	}
}
