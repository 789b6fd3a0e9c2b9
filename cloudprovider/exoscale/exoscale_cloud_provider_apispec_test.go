package exoscale

import (
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
)

// description is loaded once per test binary and only read after that.
var description = apispec.Once(apispec.Exoscale)

// watchSpec checks every exchange with f against Exoscale's description.
func watchSpec(t *testing.T, f *fakeapi.Server) {
	t.Helper()
	description.Watch(t, f.API, nil)
}
