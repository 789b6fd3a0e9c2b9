package exoscale

import (
	"sync"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
)

// description is loaded once per test binary and only read after that.
var description = sync.OnceValues(apispec.Exoscale)

// watchSpec checks every exchange with f against Exoscale's description.
func watchSpec(t *testing.T, f *fakeapi.Server) {
	t.Helper()
	spec, err := description()
	if err != nil {
		t.Fatal(err)
	}
	apispec.Watch(t, f.API, spec, nil)
}
