package volcengine

import (
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

// groupListing is the last DescribeScalingInstances listing of one group and
// what DescribeScalingGroups said about the group when it was taken.
type groupListing struct {
	desired, total int
	lifecycle      string
	// seq is the group's mutation attempts (MutationGuard.Attempts) when the
	// listing started: a mutation whose answer was lost counts too.
	seq       uint64
	at        time.Time
	instances []volcapi.ScalingInstance
}

// listingStillGood reports whether a refresh may reuse the group's previous
// listing instead of paging through its instances again: DescribeScalingGroups
// shows the same desired count, total and lifecycle state, every instance was
// in service, we made no change to the group since, and the listing is
// younger than the staleness bound. Anything else lists the group, so a
// change made in the cloud is served within the bound at the latest.
func (l groupListing) stillGood(g volcapi.ScalingGroup, seq uint64, now time.Time, maxAge time.Duration) bool {
	return l.desired == g.Desired && l.total == g.TotalInstances && l.lifecycle == g.LifecycleState &&
		!l.due(seq, now, maxAge)
}

// due reports whether the listing must be taken again whatever
// DescribeScalingGroups says: we attempted a mutation since, it reached the
// bound, or an instance was not in service.
func (l groupListing) due(seq uint64, now time.Time, maxAge time.Duration) bool {
	if l.seq != seq || now.Sub(l.at) >= maxAge {
		return true
	}
	for _, in := range l.instances {
		if in.Status != asStatusInService {
			return true
		}
	}
	return false
}
