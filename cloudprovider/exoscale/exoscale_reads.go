package exoscale

import (
	"slices"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
)

// refreshReads remembers the SKS cluster list and the instance list a
// refresh read last, so a refresh that finds the instance pools unchanged
// costs the one pool list. Only refresh (under refreshMu) uses it.
type refreshReads struct {
	clusters   []exoapi.Cluster
	clustersAt time.Time
	members    []exoapi.Instance
	membersAt  time.Time
	// pools is the pool list at the last instance read.
	pools []exoapi.InstancePool
}

// plan decides what this refresh reads besides the pool list. The SKS
// nodepool list is read every refresh: a nodepool's labels carry the
// group's settings (docs/group-settings.md) and change without any trace
// in the pool list. Instance states are read while some member
// is not yet running, when a pool's size, state or members changed since the
// last read, while an operation of ours finished or is pending (mustRead),
// and at least every maxAge: anything else in the cloud is served within
// the bound.
func (r *refreshReads) plan(pools []exoapi.InstancePool, mustRead bool, now time.Time, maxAge time.Duration) (readClusters, readMembers bool) {
	readClusters = true
	readMembers = mustRead || r.membersAt.IsZero() || now.Sub(r.membersAt) >= maxAge ||
		!samePools(r.pools, pools) || !allRunning(r.members)
	return readClusters, readMembers
}

// record notes what was read at now.
func (r *refreshReads) record(pools []exoapi.InstancePool, readClusters bool, clusters []exoapi.Cluster, readMembers bool, members []exoapi.Instance, now time.Time) {
	if readClusters {
		r.clusters, r.clustersAt = clusters, now
	}
	if readMembers {
		r.members, r.membersAt, r.pools = members, now, pools
	}
}

// allRunning reports whether every pool member is running.
func allRunning(members []exoapi.Instance) bool {
	for _, in := range members {
		if in.ManagerType == exoapi.ManagerTypeInstancePool && in.State != "running" {
			return false
		}
	}
	return true
}

func samePoolIDs(a, b []exoapi.InstancePool) bool {
	if len(a) != len(b) {
		return false
	}
	ids := make(map[string]bool, len(a))
	for _, p := range a {
		ids[p.ID] = true
	}
	for _, p := range b {
		if !ids[p.ID] {
			return false
		}
	}
	return true
}

// samePools reports whether every pool kept its size, state and members. A
// pool that lists no members while it has a size cannot tell, so it counts
// as changed.
func samePools(a, b []exoapi.InstancePool) bool {
	if !samePoolIDs(a, b) {
		return false
	}
	byID := make(map[string]exoapi.InstancePool, len(a))
	for _, p := range a {
		byID[p.ID] = p
	}
	for _, p := range b {
		old := byID[p.ID]
		if p.Size != old.Size || p.State != old.State || (p.Size > 0 && len(p.InstanceIDs) == 0) {
			return false
		}
		x, y := slices.Clone(old.InstanceIDs), slices.Clone(p.InstanceIDs)
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(x, y) {
			return false
		}
	}
	return true
}
