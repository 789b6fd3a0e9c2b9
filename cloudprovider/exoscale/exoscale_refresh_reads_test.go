package exoscale

import (
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
)

// TestReadsPlan: what the pool list alone decides about the other two
// lists; the nodepool list is read only for what it explains or at the bound.
func TestReadsPlan(t *testing.T) {
	t.Parallel()
	const bound = time.Minute
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	sks := func(id, nodepool string, size int, members ...string) exoapi.InstancePool {
		return exoapi.InstancePool{ID: id, State: "running", Size: size, ManagerType: exoapi.ManagerTypeSKSNodepool, ManagerID: nodepool, InstanceIDs: members}
	}
	plain := exoapi.InstancePool{ID: "plain", State: "running", Size: 1, InstanceIDs: []string{"i3"}}
	listed := []exoapi.InstancePool{sks("p1", "np1", 2, "i1", "i2"), plain}
	clusters := []exoapi.Cluster{{ID: "c", Nodepools: []exoapi.Nodepool{{ID: "np1", InstancePoolID: "p1"}}}}
	running := []exoapi.Instance{
		{ID: "i1", State: "running", ManagerType: exoapi.ManagerTypeInstancePool, ManagerID: "p1"},
		{ID: "i2", State: "running", ManagerType: exoapi.ManagerTypeInstancePool, ManagerID: "p1"},
		{ID: "i3", State: "running", ManagerType: exoapi.ManagerTypeInstancePool, ManagerID: "plain"},
	}
	read := func() *refreshReads {
		r := &refreshReads{}
		r.record(listed, true, clusters, true, running, at)
		return r
	}
	for _, tc := range []struct {
		name                        string
		reads                       func() *refreshReads
		pools                       []exoapi.InstancePool
		opSettled                   bool
		after                       time.Duration
		wantClusters, wantInstances bool
	}{
		{name: "first refresh", reads: func() *refreshReads { return &refreshReads{} }, pools: listed, wantClusters: true, wantInstances: true},
		{name: "nothing changed", reads: read, pools: listed, after: bound - time.Second},
		{name: "bound reached", reads: read, pools: listed, after: bound, wantClusters: true, wantInstances: true},
		{name: "pool grew (our scale-up)", reads: read, pools: []exoapi.InstancePool{sks("p1", "np1", 3, "i1", "i2", "i4"), plain}, wantInstances: true},
		{name: "operation settled", reads: read, pools: listed, opSettled: true, wantInstances: true},
		{name: "new pool", reads: read, pools: append([]exoapi.InstancePool{sks("p2", "np2", 0)}, listed...), wantClusters: true, wantInstances: true},
		{name: "pool gone", reads: read, pools: listed[:1], wantClusters: true, wantInstances: true},
		{name: "pool's nodepool changed", reads: read, pools: []exoapi.InstancePool{sks("p1", "np9", 2, "i1", "i2"), plain}, wantClusters: true},
		{name: "pool no longer managed by a nodepool", reads: read, pools: []exoapi.InstancePool{{ID: "p1", State: "running", Size: 2, InstanceIDs: []string{"i1", "i2"}}, plain}, wantClusters: true},
		{name: "SKS pool the nodepool list does not map", reads: func() *refreshReads {
			r := read()
			r.clusters = []exoapi.Cluster{{ID: "c"}}
			return r
		}, pools: listed, wantClusters: true},
		{name: "a member still starting", reads: func() *refreshReads {
			r := read()
			r.members = append([]exoapi.Instance{{ID: "i0", State: "starting", ManagerType: exoapi.ManagerTypeInstancePool, ManagerID: "p1"}}, running...)
			return r
		}, pools: listed, wantInstances: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.reads()
			round := refresh.NewFreshness(bound, func() time.Time { return at.Add(tc.after) }).Begin(true)
			clusters, instances := r.plan(tc.pools, false, tc.opSettled, round)
			if clusters != tc.wantClusters || instances != tc.wantInstances {
				t.Fatalf("plan reads nodepools %v, instances %v; want %v, %v", clusters, instances, tc.wantClusters, tc.wantInstances)
			}
		})
	}
}
