package fakeapi

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// Auto Scaling list limits (BytePlus Auto Scaling API reference, request
// parameters of each action).
const (
	// maxFilterIDs bounds ScalingGroupIds.N and ScalingGroupNames.N
	// (DescribeScalingGroups) and ScalingConfigurationIds.N
	// (DescribeScalingConfigurations).
	maxFilterIDs = 10
	// maxInstanceIDs bounds InstanceIds.N (DescribeScalingInstances,
	// RemoveInstances).
	maxInstanceIDs = 20
)

// timeFormat is how the Auto Scaling API writes times.
const timeFormat = "2006-01-02T15:04:05Z"

func (s *Server) describeScalingGroups(r *params) (any, *apiError) {
	p := r.numberPage()
	ids := r.filter("ScalingGroupIds", maxFilterIDs)
	names := r.filter("ScalingGroupNames", maxFilterIDs)
	tags := r.tagFilter()
	if r.err != nil {
		return nil, r.err
	}
	all := byID(s.groups)
	matched := matching(all, func(g *Group) bool { return ids(g.ID) && names(g.Name) && tags(g.Tags) })
	// The API docs warn that unknown ids may be answered with other groups.
	if len(matched) == 0 && s.opts.UnrelatedForUnknownIDs {
		matched = all
	}
	return listResult(p, s.opts.TotalCountSkew, "ScalingGroups", matched, s.groupJSON), nil
}

// tagFilter reads TagFilters.N.Key and .Value as a match: a group matches
// when it has every key, with the value where one is given.
func (r *params) tagFilter() func(tags map[string]string) bool {
	type tagFilter struct{ key, value string }
	var filters []tagFilter
	for i := 1; ; i++ {
		k, ok := r.q[fmt.Sprintf("TagFilters.%d.Key", i)]
		if !ok {
			break
		}
		filters = append(filters, tagFilter{key: k[0], value: r.q.Get(fmt.Sprintf("TagFilters.%d.Value", i))})
	}
	return func(tags map[string]string) bool {
		for _, f := range filters {
			if v, has := tags[f.key]; !has || (f.value != "" && v != f.value) {
				return false
			}
		}
		return true
	}
}

func (s *Server) groupJSON(g *Group) map[string]any {
	_, total := s.countLive(g.ID)
	m := map[string]any{
		"ScalingGroupId":               g.ID,
		"ScalingGroupName":             g.Name,
		"MinInstanceNumber":            g.Min,
		"MaxInstanceNumber":            g.Max,
		"DesireInstanceNumber":         g.Desired,
		"TotalInstanceCount":           total,
		"LifecycleState":               g.LifecycleState,
		"ActiveScalingConfigurationId": g.ActiveConfigID,
		"DefaultCooldown":              300,
		"SubnetIds":                    append([]string{}, g.SubnetIDs...),
		"VpcId":                        "vpc-fake",
		"Tags":                         tagsJSON(g.Tags),
		"LaunchTemplateId":             g.LaunchTemplateID,
		"LaunchTemplateVersion":        g.LaunchTemplateVersion,
	}
	var overrides []map[string]any
	for _, t := range g.LaunchTemplateTypes {
		overrides = append(overrides, map[string]any{"InstanceType": t})
	}
	if overrides != nil {
		m["LaunchTemplateOverrides"] = overrides
	}
	return m
}

func tagsJSON(tags map[string]string) []map[string]any {
	out := make([]map[string]any, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, map[string]any{"Key": k, "Value": tags[k]})
	}
	return out
}

func (s *Server) describeScalingInstances(r *params) (any, *apiError) {
	p := r.numberPage()
	g := r.group(s.groups)
	ids := r.filter("InstanceIds", maxInstanceIDs)
	status := r.equal("Status")
	if r.err != nil {
		return nil, r.err
	}
	matched := matching(s.instancesOfLocked(g.ID), func(inst Instance) bool { return ids(inst.ID) && status(listedStatus(inst)) })
	return listResult(p, s.opts.TotalCountSkew, "ScalingInstances", matched, func(inst Instance) map[string]any {
		return map[string]any{
			"InstanceId":             inst.ID,
			"ScalingGroupId":         inst.GroupID,
			"Status":                 listedStatus(inst),
			"ZoneId":                 inst.ZoneID,
			"CreationType":           "AutoCreated",
			"Entrusted":              true,
			"ScalingConfigurationId": g.ActiveConfigID,
			"CreatedTime":            inst.Created.UTC().Format(timeFormat),
		}
	}), nil
}

func (s *Server) describeScalingConfigurations(r *params) (any, *apiError) {
	p := r.numberPage()
	ids := r.filter("ScalingConfigurationIds", maxFilterIDs)
	group := r.equal("ScalingGroupId")
	if r.err != nil {
		return nil, r.err
	}
	matched := matching(byID(s.configs), func(c *Configuration) bool { return ids(c.ID) && group(c.GroupID) })
	return listResult(p, s.opts.TotalCountSkew, "ScalingConfigurations", matched, func(c *Configuration) map[string]any {
		return map[string]any{
			"ScalingConfigurationId":   c.ID,
			"ScalingConfigurationName": c.ID,
			"ScalingGroupId":           c.GroupID,
			"InstanceTypes":            append([]string{}, c.InstanceTypes...),
			"ImageId":                  c.ImageID,
			"ZoneId":                   c.ZoneID,
			"LifecycleState":           "Active",
		}
	}), nil
}

func (s *Server) describeScalingActivities(r *params) (any, *apiError) {
	p := r.numberPage()
	// The group is not looked up: an unknown group lists no activities.
	groupID := r.required("ScalingGroupId")
	status := r.equal("StatusCode")
	if r.err != nil {
		return nil, r.err
	}
	matched := matching(s.activities, func(a *Activity) bool { return a.GroupID == groupID && status(a.StatusCode) })
	// The order is undocumented: newest first unless ActivitiesOldestFirst.
	if !s.opts.ActivitiesOldestFirst {
		slices.Reverse(matched)
	}
	return listResult(p, s.opts.TotalCountSkew, "ScalingActivities", matched, activityJSON), nil
}

func activityJSON(a *Activity) map[string]any {
	var rel []map[string]any
	for _, r := range a.Related {
		rel = append(rel, map[string]any{"InstanceId": r.InstanceID, "Status": r.Status, "Message": r.Message, "OperateType": "Add"})
	}
	return map[string]any{
		"ScalingActivityId": a.ID,
		"ScalingGroupId":    a.GroupID,
		"StatusCode":        a.StatusCode,
		"ResultMsg":         a.ResultMsg,
		"ActivityType":      "Normal",
		"RelatedInstances":  rel,
		"CreatedAt":         a.Created.UTC().Format(timeFormat),
	}
}

func (s *Server) modifyScalingGroup(r *params) (any, *apiError) {
	g := r.group(s.groups)
	if r.err != nil {
		return nil, r.err
	}
	minSize := r.int("MinInstanceNumber", g.Min)
	maxSize := r.int("MaxInstanceNumber", g.Max)
	desired := r.int("DesireInstanceNumber", g.Desired)
	if r.err != nil {
		return nil, r.err
	}
	if minSize < 0 || maxSize > 100 || minSize > maxSize {
		return nil, invalid("MinInstanceNumber %d and MaxInstanceNumber %d must satisfy 0 <= min <= max <= 100", minSize, maxSize)
	}
	if r.str("DesireInstanceNumber") != "" {
		if aerr := groupActive(g); aerr != nil {
			return nil, aerr
		}
		// BytePlus docs, "Desire instance number": the feature is chosen at
		// creation and cannot be switched on later.
		if g.Desired < 0 {
			return nil, invalid("scaling group %s was created without a desired instance number", g.ID)
		}
		if desired < minSize || desired > maxSize {
			return nil, invalid("DesireInstanceNumber %d must be between %d and %d", desired, minSize, maxSize)
		}
	}
	g.Min, g.Max, g.Desired = minSize, maxSize, desired
	// No reconciliation here: the service acts on the new desired number at
	// its next periodic check (Options.CheckInterval).
	return map[string]any{"ScalingGroupId": g.ID}, nil
}

func (s *Server) removeInstances(r *params) (any, *apiError) {
	g := r.group(s.groups)
	ids := r.ids("InstanceIds", maxInstanceIDs)
	decrease := r.bool("DecreaseDesiredCapacity", true)
	force := r.bool("ForceDelete", false)
	if r.err != nil {
		return nil, r.err
	}
	if aerr := groupActive(g); aerr != nil {
		return nil, aerr
	}
	if aerr := s.removable(g, ids); aerr != nil {
		return nil, aerr
	}
	live, _ := s.countLive(g.ID)
	// The desired number (and without one the instance count) must stay
	// within min..max (BytePlus Auto Scaling API reference, RemoveInstances:
	// ForceDelete only lifts this for a removal that keeps the desired number).
	if g.Desired >= 0 && decrease {
		if !s.opts.LenientMinOnRemove && g.Desired-len(ids) < g.Min {
			return nil, invalid("removing %d instances would take the desired number %d below min %d", len(ids), g.Desired, g.Min)
		}
	} else if live-len(ids) < g.Min && !force {
		return nil, invalid("removing %d instances would leave fewer than min %d", len(ids), g.Min)
	}
	now := s.opts.Now()
	for _, id := range ids {
		inst := s.instances[id]
		if s.heldRemovals[id] {
			delete(s.heldRemovals, id)
			inst.lagging, inst.listedAs = true, inst.Status
		}
		inst.Status = StatusRemoving
		inst.goneAt = now.Add(s.opts.RemoveDelay)
	}
	if g.Desired >= 0 && decrease {
		g.Desired = max(g.Desired-len(ids), 0)
	}
	act := &Activity{ID: s.nextID("sga-fake"), GroupID: g.ID, StatusCode: "Success", Created: now}
	for _, id := range ids {
		act.Related = append(act.Related, RelatedInstance{InstanceID: id, Status: "Success"})
	}
	s.activities = append(s.activities, act)
	return map[string]any{"ScalingActivityId": act.ID}, nil
}

// removable refuses ids that RemoveInstances cannot remove from g: ids of
// other groups, repeats, and (BytePlus Auto Scaling API reference,
// RemoveInstances) instances not in service.
func (s *Server) removable(g *Group, ids []string) *apiError {
	seen := map[string]bool{}
	for _, id := range ids {
		inst, ok := s.instances[id]
		if !ok || inst.GroupID != g.ID {
			return invalid("instance %s is not in scaling group %s", id, g.ID)
		}
		if inst.Status != StatusInService {
			return invalid("instance %s is %s, not InService", id, inst.Status)
		}
		if seen[id] {
			return invalid("instance %s given twice", id)
		}
		seen[id] = true
	}
	return nil
}

// group reads the required ScalingGroupId and finds the group. An unknown
// group is InvalidParameter: the docs name no code for it.
func (r *params) group(groups map[string]*Group) *Group {
	id := r.required("ScalingGroupId")
	if r.err != nil {
		return nil
	}
	g, ok := groups[id]
	if !ok {
		r.fail(invalid("scaling group %s does not exist", id))
	}
	return g
}

// groupActive refuses changes to a disabled group: only an Active group
// scales (BytePlus Auto Scaling API reference, ModifyScalingGroup and
// RemoveInstances, group status requirement).
func groupActive(g *Group) *apiError {
	if !strings.EqualFold(g.LifecycleState, "Active") {
		return errf(http.StatusBadRequest, codeGroupInvalidStatus, "scaling group %s is %s, not Active", g.ID, g.LifecycleState)
	}
	return nil
}

func (s *Server) countLive(groupID string) (live, total int) {
	for _, inst := range s.instances {
		if inst.GroupID != groupID {
			continue
		}
		total++
		if isLive(inst.Status) {
			live++
		}
	}
	return live, total
}
