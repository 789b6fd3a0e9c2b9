package vultr

import (
	"sync"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// description is loaded once per test binary and only read after that.
var description = sync.OnceValues(apispec.Vultr)

// watchSpec checks every exchange with f against Vultr's description.
func watchSpec(t *testing.T, f *fakeapi.Server) {
	t.Helper()
	spec, err := description()
	if err != nil {
		t.Fatal(err)
	}
	apispec.Watch(t, f.API, spec, nil)
}
