package vultr_test

import (
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrtest"
)

// TestConformance runs the kit under each behaviour of a busy pool.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, busy := range vultrtest.Busy() {
		t.Run("busy="+string(busy), func(t *testing.T) {
			t.Parallel()
			cloudprovidertest.Run(t, vultrtest.Harness(busy))
		})
	}
}
