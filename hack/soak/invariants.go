package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

// The invariants a cautious operator cares about, as pure functions of what
// the soak saw, so each can be tested on its own (invariants_test.go). Each
// returns the violations it found, as sentences for the report.

// groupBounds is a group's [min, max] as the provider reports it.
type groupBounds struct{ minSize, maxSize int }

// targetViolations: every group's target, as we report it, is within its bounds.
func targetViolations(views []groupView) []string {
	var out []string
	for _, v := range views {
		if v.target < v.minSize || v.target > v.maxSize {
			out = append(out, fmt.Sprintf("group %s: target %d outside [%d, %d]", v.id, v.target, v.minSize, v.maxSize))
		}
	}
	return out
}

// cloudDesiredViolations: the cloud's desired size of every group we serve is
// within the bounds we report for it. A served group the cloud's truth does
// not hold is a violation too, so the check cannot pass by matching nothing.
func cloudDesiredViolations(cloud []simcloud.Group, bounds map[string]groupBounds) []string {
	var out []string
	matched := map[string]bool{}
	for _, g := range cloud {
		for _, id := range g.IDs {
			b, ok := bounds[id]
			if !ok {
				continue
			}
			matched[id] = true
			if g.Desired < b.minSize || g.Desired > b.maxSize {
				out = append(out, fmt.Sprintf("group %s: cloud's desired size %d outside [%d, %d]", id, g.Desired, b.minSize, b.maxSize))
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(bounds)) {
		if !matched[id] {
			out = append(out, fmt.Sprintf("group %s: served, but not in the cloud's state", id))
		}
	}
	return out
}

// liveInstances returns the providerIDs of the cloud's instances that are not gone.
func liveInstances(cloud []simcloud.Group) map[string]bool {
	alive := map[string]bool{}
	for _, g := range cloud {
		for _, in := range g.Instances {
			if !in.Gone {
				alive[in.ProviderID] = true
			}
		}
	}
	return alive
}

// unrequestedLosses: an instance alive at the last look and gone now must
// have been asked for, by a deletion or by a decrease that may cancel it.
// It returns the lost instances, sorted.
func unrequestedLosses(before, now, requested, cancellable map[string]bool) []string {
	var lost []string
	for id := range before {
		if !now[id] && !requested[id] && !cancellable[id] {
			lost = append(lost, id)
		}
	}
	sort.Strings(lost)
	return lost
}

// snapshotMismatches: after a clean Refresh, our snapshot holds every cloud
// group with the cloud's desired size and live instances, and nothing else.
func snapshotMismatches(ours map[string]groupView, cloud []simcloud.Group) []string {
	var out []string
	matched := 0
	for _, cloudGroup := range cloud {
		var v groupView
		found := false
		for _, id := range cloudGroup.IDs {
			if candidate, ok := ours[id]; ok {
				v, found = candidate, true
			}
		}
		if !found {
			out = append(out, fmt.Sprintf("cloud group %v missing from our snapshot", cloudGroup.IDs))
			continue
		}
		matched++
		if v.target != cloudGroup.Desired {
			out = append(out, fmt.Sprintf("group %s: our target %d, cloud's desired %d after a clean refresh", v.id, v.target, cloudGroup.Desired))
		}
		mine := map[string]bool{}
		for _, in := range v.instances {
			if in.GetStatus().GetInstanceState() != protos.InstanceStatus_instanceDeleting {
				mine[in.GetId()] = true
			}
		}
		if diff := setDiff(mine, liveInstances([]simcloud.Group{cloudGroup})); diff != "" {
			out = append(out, fmt.Sprintf("group %s: instances differ from the cloud after a clean refresh: %s", v.id, diff))
		}
	}
	if matched != len(ours) {
		out = append(out, fmt.Sprintf("our snapshot has %d groups, the cloud %d", len(ours), matched))
	}
	return out
}

func setDiff(mine, cloud map[string]bool) string {
	var extra, missing []string
	for id := range mine {
		if !cloud[id] {
			extra = append(extra, id)
		}
	}
	for id := range cloud {
		if !mine[id] {
			missing = append(missing, id)
		}
	}
	if len(extra) == 0 && len(missing) == 0 {
		return ""
	}
	sort.Strings(extra)
	sort.Strings(missing)
	return fmt.Sprintf("only ours %v, only the cloud's %v", extra, missing)
}

// unservedChanges: an instance launched in the fake cloud behind the
// provider's back at launched[id] is listed by NodeGroupNodes (served) no
// later than deadline after the launch; deadline is the provider's
// --max-staleness plus the time the soak may go without a clean Refresh.
// Instances served, or gone from the cloud, are settled and left out of
// the returned pending set.
func unservedChanges(launched map[string]time.Time, served, alive map[string]bool, now time.Time, deadline time.Duration) (violations []string, pending map[string]time.Time) {
	pending = map[string]time.Time{}
	ids := make([]string, 0, len(launched))
	for id := range launched {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		at := launched[id]
		switch {
		case served[id] || !alive[id]:
		case now.Sub(at) > deadline:
			violations = append(violations, fmt.Sprintf("instance %s launched in the cloud %s ago is still not served (bound %s)", id, now.Sub(at).Round(time.Second), deadline))
		default:
			pending[id] = at
		}
	}
	return violations, pending
}

// answerViolation: every RPC is answered within its deadline (plus
// answerSlack). A mutation may end with DeadlineExceeded when the cloud is
// slower than the deadline (cutByDeadline); any other RPC is served from the
// snapshot and must not run into it.
func answerViolation(method string, took, deadline time.Duration, err error) (violation string, cutByDeadline bool) {
	switch {
	case took > deadline+answerSlack:
		return fmt.Sprintf("%s not answered within its %s deadline (took %s): %v", method, deadline, took.Round(time.Millisecond), err), false
	case status.Code(err) == codes.DeadlineExceeded && mutations[method]:
		return "", true
	case status.Code(err) == codes.DeadlineExceeded && took >= deadline-answerSlack:
		// An early DeadlineExceeded is the server giving up in time on a
		// slow cloud; running into the caller's deadline is not.
		return fmt.Sprintf("%s ran into its %s deadline: %v", method, deadline, err), false
	}
	return "", false
}

// handlerOverrun: no handler outlives its caller's deadline (plus
// answerSlack); one that ignored its context would keep locks and goroutines
// after CA gave up.
func handlerOverrun(method string, returned, deadline time.Time, ran time.Duration) string {
	if late := returned.Sub(deadline); late > answerSlack {
		return fmt.Sprintf("%s handler returned %s after its deadline (ran %s)", method, late.Round(time.Millisecond), ran.Round(time.Millisecond))
	}
	return ""
}

// check runs the per-step invariants.
func (s *soaker) check() {
	s.mu.Lock()
	s.r.checks++
	s.mu.Unlock()
	bounds := map[string]groupBounds{}
	var views []groupView
	for _, g := range s.nodeGroups() {
		v, err := s.view(g)
		if err != nil {
			s.violate("group %s: read failed while the snapshot should answer: %v", g.GetId(), err)
			continue
		}
		bounds[v.id] = groupBounds{minSize: v.minSize, maxSize: v.maxSize}
		views = append(views, v)
	}
	s.violateAll(targetViolations(views))
	served := map[string]bool{}
	for _, v := range views {
		for _, in := range v.instances {
			served[in.GetId()] = true
		}
	}
	cloud, ok := s.readCloud()
	if !ok {
		return
	}
	s.mu.Lock()
	late, pending := unservedChanges(s.launched, served, liveInstances(cloud), time.Now(), servedWithin)
	s.launched = pending
	s.mu.Unlock()
	s.violateAll(late)
	s.violateAll(cloudDesiredViolations(cloud, bounds))
	s.observe()
}

// readCloud reads the cloud's truth; a failed read is reported and the
// checks that need it are skipped, since an empty answer would look like
// every instance vanished.
func (s *soaker) readCloud() ([]simcloud.Group, bool) {
	cloud, err := s.state()
	if err != nil {
		s.violate("%v", err)
		return nil, false
	}
	return cloud, true
}

func (s *soaker) violateAll(violations []string) {
	for _, v := range violations {
		s.violate("%s", v)
	}
}

// observe compares the fake's live instances with the last look: any that
// vanished must have been asked for.
func (s *soaker) observe() {
	cloud, ok := s.readCloud()
	if !ok {
		return
	}
	alive := liveInstances(cloud)
	s.mu.Lock()
	lost := unrequestedLosses(s.alive, alive, s.requested, s.cancellable)
	s.alive = alive
	seen := s.lastSeen
	s.lastSeen = describeInstances(cloud)
	s.mu.Unlock()
	for _, id := range lost {
		s.violate("instance %s (%s) was deleted but nobody asked to delete it", id, seen[id])
	}
	if len(lost) > 0 && s.o.verbose {
		s.mu.Lock()
		fmt.Fprintf(os.Stderr, "lost %v after:\n  %s\n", lost, strings.Join(s.history, "\n  "))
		s.mu.Unlock()
	}
}

// describeInstances says, for every instance of cloud, its group, its state
// and the group's desired size, for a violation naming the instance later.
func describeInstances(cloud []simcloud.Group) map[string]string {
	out := map[string]string{}
	for _, g := range cloud {
		for _, in := range g.Instances {
			out[in.ProviderID] = fmt.Sprintf("last seen %s in group %v of desired size %d and %d instances", in.State, g.IDs, g.Desired, len(g.Instances))
		}
	}
	return out
}

// cleanCompare (in process only) turns faults off, lets the fake finish its pending work, takes
// a clean Refresh and compares our snapshot with the cloud.
func (s *soaker) cleanCompare() {
	s.fake.Chaos.SetMix(simcloud.FaultMix{})
	defer s.fake.Chaos.SetMix(s.o.mix)
	// A slow-applied request of an earlier step may still land; compare
	// only once it has.
	s.fake.WaitIdle()
	s.fake.Settle()
	s.observe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The first call may join a refresh that started under faults.
	_ = s.srv.RefreshOnce(ctx)
	if err := s.srv.RefreshOnce(ctx); err != nil {
		s.violate("clean refresh failed: %v", err)
		return
	}
	s.count("clean-compare")
	s.mu.Lock()
	s.r.checks++
	s.mu.Unlock()
	ours := map[string]groupView{}
	for _, g := range s.nodeGroups() {
		v, err := s.view(g)
		if err != nil {
			s.violate("group %s: read after clean refresh failed: %v", g.GetId(), err)
			continue
		}
		ours[v.id] = v
	}
	s.violateAll(snapshotMismatches(ours, s.fake.State()))
}
