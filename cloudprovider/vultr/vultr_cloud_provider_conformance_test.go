package vultr_test

import (
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/providertest"
)

// TestConformance runs the kit under each behaviour of a busy pool.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, busy := range providertest.VultrBusy() {
		t.Run("busy="+string(busy), func(t *testing.T) {
			t.Parallel()
			cloudprovidertest.Run(t, providertest.VultrHarness(busy))
		})
	}
}
