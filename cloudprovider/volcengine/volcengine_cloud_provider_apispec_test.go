package volcengine

import (
	"sync"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// description is loaded once per test binary and only read after that.
var description = sync.OnceValues(apispec.Volcengine)

// watchSpec checks every exchange with f against Volcengine's metadata.
func watchSpec(t *testing.T, f *fakeapi.Server) {
	t.Helper()
	m, err := description()
	if err != nil {
		t.Fatal(err)
	}
	apispec.Watch(t, f.API, m, nil)
}
