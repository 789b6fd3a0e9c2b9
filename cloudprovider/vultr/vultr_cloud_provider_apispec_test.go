package vultr

import (
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// description is loaded once per test binary and only read after that.
var description = apispec.Once(apispec.Vultr)

// watchSpec checks every exchange with f against Vultr's description.
func watchSpec(t *testing.T, f *fakeapi.Server) {
	t.Helper()
	description.Watch(t, f.API, nil)
}
