package volcengine

import (
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// description is loaded once per test binary and only read after that.
var description = apispec.Once(apispec.Volcengine)

// watchSpec checks every exchange with f against Volcengine's metadata.
func watchSpec(t *testing.T, f *fakeapi.Server) {
	t.Helper()
	description.Watch(t, f.API, nil)
}
