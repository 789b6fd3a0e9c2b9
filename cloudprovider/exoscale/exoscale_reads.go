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
	// clusterPoolManagers is each pool's manager as listed with the last
	// cluster read.
	clusterPoolManagers map[string]string
	members             []exoapi.Instance
	membersAt           time.Time
	// pools is the pool list at the last instance read.
	pools []exoapi.InstancePool
}

// plan decides what this refresh reads besides the pool list.
//
// The SKS nodepool list is read at least every maxAge (--max-staleness), and
// at once when the pool list shows something only it explains: a pool
// appeared or left, or a pool's manager changed (its nodepool mapping is
// unknown). A nodepool's labels, taints and settings
// (docs/group-settings.md) leave no trace in the pool list, so they are
// served within the bound. Sizes need no nodepool read: a nodepool's size
// and its instance pool's stay equal (shared doc §6.3), and the fresh pool
// list gives it, our own scales and evictions included.
//
// Instance states are read while some member is not yet running, when a
// pool's size, state or members changed since the last read, when an
// operation of ours settled, and at least every maxAge.
//
// force reads both.
func (r *refreshReads) plan(pools []exoapi.InstancePool, force, opSettled bool, now time.Time, maxAge time.Duration) (readClusters, readMembers bool) {
	readClusters = force || r.clustersAt.IsZero() || now.Sub(r.clustersAt) >= maxAge || !r.explains(pools)
	readMembers = force || opSettled || r.membersAt.IsZero() || now.Sub(r.membersAt) >= maxAge ||
		!samePools(r.pools, pools) || !allRunning(r.members)
	return readClusters, readMembers
}

// record notes what was read at now.
func (r *refreshReads) record(pools []exoapi.InstancePool, readClusters bool, clusters []exoapi.Cluster, readMembers bool, members []exoapi.Instance, now time.Time) {
	if readClusters {
		r.clusters, r.clustersAt = clusters, now
		r.clusterPoolManagers = make(map[string]string, len(pools))
		for _, p := range pools {
			r.clusterPoolManagers[p.ID] = poolManager(p)
		}
	}
	if readMembers {
		r.members, r.membersAt, r.pools = members, now, pools
	}
}

// explains reports whether the last SKS cluster list accounts for every
// pool: the same pools as when it was read, each with the same manager, and
// every pool an SKS nodepool manages found under that nodepool. A pool the
// list cannot map (a nodepool being created or deleted) makes every refresh
// read it until it can: such a pool must not be scaled as a plain pool.
func (r *refreshReads) explains(pools []exoapi.InstancePool) bool {
	if len(pools) != len(r.clusterPoolManagers) {
		return false
	}
	var nodepoolOfPool map[string]string
	for _, p := range pools {
		mgr, seen := r.clusterPoolManagers[p.ID]
		if !seen || mgr != poolManager(p) {
			return false
		}
		if p.ManagerType != exoapi.ManagerTypeSKSNodepool {
			continue
		}
		if nodepoolOfPool == nil {
			nodepoolOfPool = map[string]string{}
			for _, c := range r.clusters {
				for _, np := range c.Nodepools {
					nodepoolOfPool[np.InstancePoolID] = np.ID
				}
			}
		}
		if nodepoolOfPool[p.ID] != p.ManagerID {
			return false
		}
	}
	return true
}

// poolManager is what the pool list says manages a pool ("" for none).
func poolManager(p exoapi.InstancePool) string {
	if p.ManagerType == "" {
		return ""
	}
	return p.ManagerType + "/" + p.ManagerID
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
