package fakeapi

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The service's side of the fake: instances move through their lifecycle
// with the injected clock, and a periodic check (Options.CheckInterval)
// replaces Error instances and brings each group to its desired number, as
// the real service does on its own schedule rather than inside the call
// that changed the group.

func (s *Server) newInstanceLocked(groupID, status string) *Instance {
	now := s.opts.Now()
	zone := ""
	if g, ok := s.groups[groupID]; ok {
		for _, sn := range g.SubnetIDs {
			if subnet, ok := s.subnets[sn]; ok {
				zone = subnet.ZoneID
				break
			}
		}
	}
	inst := &Instance{
		ID:      s.nextID("i-fake"),
		GroupID: groupID,
		Status:  status,
		ZoneID:  zone,
		Created: now,
		readyAt: now.Add(s.opts.ProvisionDelay),
	}
	if status == StatusRemoving {
		inst.goneAt = now.Add(s.opts.RemoveDelay)
	}
	s.instances[inst.ID] = inst
	return inst
}

func (s *Server) instancesOfLocked(groupID string) []Instance {
	var out []Instance
	for _, inst := range s.instances {
		if inst.GroupID == groupID {
			out = append(out, *inst)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func isLive(status string) bool {
	return status != StatusRemoving && status != StatusRemoveWait
}

// advanceLocked moves every instance along its lifecycle up to the clock's
// now, and runs the service's periodic check when it is due.
func (s *Server) advanceLocked() {
	now := s.opts.Now()
	s.progressLocked(now)
	if now.Before(s.nextCheck) {
		return
	}
	s.nextCheck = now.Add(s.opts.CheckInterval)
	for _, g := range s.groups {
		s.healthCheckLocked(g, now)
		s.reconcileLocked(g)
	}
	s.progressLocked(now)
}

// healthCheckLocked removes the group's Error instances that have been in
// Error for ErrorGrace (the service's health check replaces unhealthy
// instances: BytePlus Auto Scaling docs, "health check"). The desired
// number does not change, so the reconciliation that follows replaces them.
func (s *Server) healthCheckLocked(g *Group, now time.Time) {
	if !strings.EqualFold(g.LifecycleState, "Active") {
		return
	}
	for _, inst := range s.instances {
		if inst.GroupID == g.ID && inst.Status == StatusError && !now.Before(inst.errorSince.Add(s.opts.ErrorGrace)) {
			inst.Status = StatusRemoving
			inst.goneAt = now.Add(s.opts.RemoveDelay)
		}
	}
}

func (s *Server) progressLocked(now time.Time) {
	for id, inst := range s.instances {
		switch inst.Status {
		case StatusInit, StatusPending, StatusPendingWait:
			if !now.Before(inst.readyAt) {
				s.finishProvisionLocked(inst)
			}
		case StatusRemoving, StatusRemoveWait:
			if !inst.lagging && !now.Before(inst.goneAt) {
				delete(s.instances, id)
			}
		}
	}
}

func (s *Server) finishProvisionLocked(inst *Instance) {
	if inst.failing {
		inst.Status = StatusError
		inst.errorSince = s.opts.Now()
		return
	}
	inst.Status = StatusInService
}

func (s *Server) reconcileAllLocked() {
	for _, g := range s.groups {
		s.reconcileLocked(g)
	}
}

// reconcileLocked creates or removes instances so that the live count equals
// the desired number, the way a scaling activity would.
func (s *Server) reconcileLocked(g *Group) {
	// A disabled group does not scale (LifecycleState other than Active).
	if g.Desired < 0 || !strings.EqualFold(g.LifecycleState, "Active") {
		return
	}
	var live []*Instance
	for _, inst := range s.instances {
		if inst.GroupID == g.ID && isLive(inst.Status) {
			live = append(live, inst)
		}
	}
	now := s.opts.Now()
	switch {
	case len(live) < g.Desired && s.launchLate[g.ID]:
	case len(live) < g.Desired:
		act := &Activity{ID: s.nextID("sga-fake"), GroupID: g.ID, StatusCode: "Success", Created: now}
		fail, failing := s.createFailures[g.ID]
		if failing && fail.NoInstances {
			act.StatusCode = "Error"
			act.ResultMsg = fmt.Sprintf("%s: %s", fail.Code, fail.Message)
			s.activities = append(s.activities, act)
			return
		}
		for i := len(live); i < g.Desired; i++ {
			inst := s.newInstanceLocked(g.ID, StatusPending)
			rel := RelatedInstance{InstanceID: inst.ID, Status: "Success"}
			if failing {
				inst.failing = true
				rel.Status = "Failed"
				rel.Message = fmt.Sprintf("%s: %s", fail.Code, fail.Message)
			}
			act.Related = append(act.Related, rel)
		}
		if failing {
			act.StatusCode = "Error"
			act.ResultMsg = fmt.Sprintf("%s: %s", fail.Code, fail.Message)
		}
		s.activities = append(s.activities, act)
	case len(live) > g.Desired:
		// Error instances first: the health check takes them away when the
		// desired number no longer wants them, which is how a client
		// deletes one (RemoveInstances refuses it). Then newest first, like
		// the default instance terminate policy.
		sort.Slice(live, func(i, j int) bool {
			if ei, ej := live[i].Status == StatusError, live[j].Status == StatusError; ei != ej {
				return ei
			}
			if !live[i].Created.Equal(live[j].Created) {
				return live[i].Created.After(live[j].Created)
			}
			return live[i].ID > live[j].ID
		})
		for _, inst := range live[:len(live)-g.Desired] {
			inst.Status = StatusRemoving
			inst.goneAt = now.Add(s.opts.RemoveDelay)
		}
	}
}
