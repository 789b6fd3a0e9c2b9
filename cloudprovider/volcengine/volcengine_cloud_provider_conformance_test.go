package volcengine_test

import (
	"fmt"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/providertest"
)

// TestConformance runs the kit against the strict fake, with scaling
// activities listed in either order (the API does not document it).
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, oldestFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("activitiesOldestFirst=%v", oldestFirst), func(t *testing.T) {
			t.Parallel()
			cloudprovidertest.Run(t, providertest.VolcengineHarness(oldestFirst))
		})
	}
}
