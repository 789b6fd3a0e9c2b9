package fakeapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// Action names served by the fake.
const (
	ActionDescribeScalingGroups         = "DescribeScalingGroups"
	ActionDescribeScalingInstances      = "DescribeScalingInstances"
	ActionDescribeScalingConfigurations = "DescribeScalingConfigurations"
	ActionDescribeScalingActivities     = "DescribeScalingActivities"
	ActionModifyScalingGroup            = "ModifyScalingGroup"
	ActionRemoveInstances               = "RemoveInstances"
	ActionDescribeInstanceTypes         = "DescribeInstanceTypes"
	ActionDescribeImages                = "DescribeImages"
	ActionDescribeSubnets               = "DescribeSubnets"
)

type apiError struct {
	status  int
	code    string
	message string
}

func errf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

type handlerFunc func(s *Server, q url.Values) (any, *apiError)

var handlers = map[string]struct {
	version string
	service string
	fn      handlerFunc
}{
	ActionDescribeScalingGroups:         {"2020-01-01", "auto_scaling", (*Server).describeScalingGroups},
	ActionDescribeScalingInstances:      {"2020-01-01", "auto_scaling", (*Server).describeScalingInstances},
	ActionDescribeScalingConfigurations: {"2020-01-01", "auto_scaling", (*Server).describeScalingConfigurations},
	ActionDescribeScalingActivities:     {"2020-01-01", "auto_scaling", (*Server).describeScalingActivities},
	ActionModifyScalingGroup:            {"2020-01-01", "auto_scaling", (*Server).modifyScalingGroup},
	ActionRemoveInstances:               {"2020-01-01", "auto_scaling", (*Server).removeInstances},
	ActionDescribeInstanceTypes:         {"2020-04-01", "ecs", (*Server).describeInstanceTypes},
	ActionDescribeImages:                {"2020-04-01", "ecs", (*Server).describeImages},
	ActionDescribeSubnets:               {"2020-04-01", "vpc", (*Server).describeSubnets},
}

// actionOf returns the request's Action, the fake's operation name.
func actionOf(r *http.Request, _ []byte) string {
	return requestValues(r).Get("Action")
}

// requestValues returns the query, or the form of a form POST.
func requestValues(r *http.Request) url.Values {
	if r.Method == http.MethodPost {
		// The SDK only sends GET, but a form POST is harmless to accept.
		if err := r.ParseForm(); err == nil {
			return r.Form
		}
	}
	return r.URL.Query()
}

// serve answers one request the way the OpenAPI gateway does.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	q := requestValues(r)
	action := q.Get("Action")
	version := q.Get("Version")

	s.mu.Lock()
	var result any
	var aerr *apiError
	switch {
	case r.URL.Path != "/":
		aerr = errf(http.StatusNotFound, "InvalidActionOrVersion", "path %s not found", r.URL.Path)
	case r.Header.Get("Authorization") == "":
		aerr = errf(http.StatusUnauthorized, "MissingAuthenticationToken", "request is not signed")
	case s.opts.AccessKey != "" && accessKeyOf(r.Header.Get("Authorization")) != s.opts.AccessKey:
		aerr = errf(http.StatusUnauthorized, "InvalidAccessKey", "the access key is not valid")
	default:
		h, ok := handlers[action]
		switch {
		case !ok:
			aerr = errf(http.StatusNotFound, "InvalidActionOrVersion", "unknown action %q", action)
		case version != h.version:
			aerr = errf(http.StatusNotFound, "InvalidActionOrVersion", "action %s has no version %q", action, version)
		default:
			s.advanceLocked()
			result, aerr = h.fn(s, q)
		}
	}
	requestID := s.nextID("req-")
	s.mu.Unlock()

	meta := map[string]any{
		"RequestId": requestID,
		"Action":    action,
		"Version":   version,
		"Service":   handlers[action].service,
		"Region":    s.opts.Region,
	}
	body := map[string]any{"ResponseMetadata": meta}
	status := http.StatusOK
	if aerr != nil {
		status = aerr.status
		if status == 0 {
			status = http.StatusOK
		}
		meta["Error"] = map[string]any{"Code": aerr.code, "Message": aerr.message}
	} else {
		body["Result"] = result
	}
	w.Header().Set("Content-Type", contentType)
	fakecloud.WriteJSON(w, status, body)
}

// contentType is what the gateway answers with.
const contentType = "application/json; charset=utf-8"

// writeError writes the gateway's error envelope for an injected fault. The
// real gateway puts some errors (flow limits) in a 200 answer, so status 200
// with a code is an error too.
func (s *Server) writeError(w http.ResponseWriter, status int, code, message string) {
	if code == "" {
		code = defaultErrorCode(status)
	}
	meta := map[string]any{
		"RequestId": s.requestID(),
		"Region":    s.opts.Region,
		"Error":     map[string]any{"Code": code, "Message": message},
	}
	w.Header().Set("Content-Type", contentType)
	fakecloud.WriteJSON(w, status, map[string]any{"ResponseMetadata": meta})
}

// defaultErrorCode picks the gateway's code for a fault given only a status,
// from the common codes in BytePlus's documentation (shared docs,
// providers/volcengine.md, "Codes worth simulating").
func defaultErrorCode(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "AccountFlowLimitExceeded"
	case status == http.StatusUnauthorized:
		return "SignatureDoesNotMatch"
	case status == http.StatusForbidden:
		return "AccessDenied"
	case status == http.StatusNotFound:
		return "InvalidActionOrVersion"
	case status >= 500:
		return "InternalError"
	default:
		return "InvalidParameter"
	}
}

func (s *Server) requestID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextID("req-")
}

// SigningScope returns the service and region a recorded request was signed
// for, from its Authorization header's credential scope.
func SigningScope(r fakecloud.RecordedRequest) (service, region string) {
	return parseCredential(r.Header.Get("Authorization"))
}

// parseCredential pulls service and region out of
// "HMAC-SHA256 Credential=AK/date/region/service/request, ...".
func parseCredential(auth string) (service, region string) {
	i := strings.Index(auth, "Credential=")
	if i < 0 {
		return "", ""
	}
	cred := auth[i+len("Credential="):]
	if j := strings.IndexByte(cred, ','); j >= 0 {
		cred = cred[:j]
	}
	parts := strings.Split(cred, "/")
	if len(parts) < 5 {
		return "", ""
	}
	return parts[3], parts[2]
}

// accessKeyOf pulls the access key out of the Authorization header's
// "Credential=AK/date/region/service/request".
func accessKeyOf(auth string) string {
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	ak, _, _ := strings.Cut(cred, "/")
	return ak
}

// listParam reads Name.1, Name.2, ... in order.
func listParam(q url.Values, name string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := q[fmt.Sprintf("%s.%d", name, i)]
		if !ok {
			return out
		}
		if len(v) > 0 && v[0] != "" {
			out = append(out, v[0])
		}
	}
}

func intParam(q url.Values, name string, def int) (int, *apiError) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errf(http.StatusBadRequest, "InvalidParameter", "%s %q is not an integer", name, v)
	}
	return n, nil
}

func boolParam(q url.Values, name string, def bool) (bool, *apiError) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errf(http.StatusBadRequest, "InvalidParameter", "%s %q is not a boolean", name, v)
	}
	return b, nil
}

// page applies PageNumber/PageSize (default 10, 1..100) to n items.
func page(q url.Values) (number, size int, aerr *apiError) {
	if number, aerr = intParam(q, "PageNumber", 1); aerr != nil {
		return
	}
	if size, aerr = intParam(q, "PageSize", 10); aerr != nil {
		return
	}
	if number < 1 {
		return 0, 0, errf(http.StatusBadRequest, "InvalidParameter", "PageNumber must be at least 1")
	}
	if size < 1 || size > 100 {
		return 0, 0, errf(http.StatusBadRequest, "InvalidParameter", "PageSize must be between 1 and 100")
	}
	return number, size, nil
}

func bounds(n, number, size int) (lo, hi int) {
	lo = (number - 1) * size
	if lo > n {
		lo = n
	}
	hi = lo + size
	if hi > n {
		hi = n
	}
	return lo, hi
}

func tagsJSON(tags map[string]string) []map[string]any {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, map[string]any{"Key": k, "Value": tags[k]})
	}
	return out
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

func (s *Server) describeScalingGroups(q url.Values) (any, *apiError) {
	number, size, aerr := page(q)
	if aerr != nil {
		return nil, aerr
	}
	ids := listParam(q, "ScalingGroupIds")
	names := listParam(q, "ScalingGroupNames")
	// BytePlus Auto Scaling API reference, DescribeScalingGroups, request
	// parameters: ScalingGroupIds.N and ScalingGroupNames.N take 1 to 10.
	if aerr := maxListLen("ScalingGroupIds", ids, maxFilterIDs); aerr != nil {
		return nil, aerr
	}
	if aerr := maxListLen("ScalingGroupNames", names, maxFilterIDs); aerr != nil {
		return nil, aerr
	}
	type tagFilter struct{ key, value string }
	var filters []tagFilter
	for i := 1; ; i++ {
		k, ok := q[fmt.Sprintf("TagFilters.%d.Key", i)]
		if !ok {
			break
		}
		filters = append(filters, tagFilter{key: k[0], value: q.Get(fmt.Sprintf("TagFilters.%d.Value", i))})
	}
	wanted := idFilter(ids)
	nameSet := map[string]bool{}
	for _, n := range names {
		nameSet[n] = true
	}
	var all, matched []*Group
	for _, g := range s.groups {
		all = append(all, g)
		if !wanted(g.ID) {
			continue
		}
		if len(nameSet) > 0 && !nameSet[g.Name] {
			continue
		}
		ok := true
		for _, f := range filters {
			v, has := g.Tags[f.key]
			if !has || (f.value != "" && v != f.value) {
				ok = false
				break
			}
		}
		if ok {
			matched = append(matched, g)
		}
	}
	if len(matched) == 0 && s.unrelatedForUnknown {
		matched = all
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].ID < matched[j].ID })
	lo, hi := bounds(len(matched), number, size)
	out := []map[string]any{}
	for _, g := range matched[lo:hi] {
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
		out = append(out, m)
	}
	return map[string]any{
		"ScalingGroups": out,
		"TotalCount":    len(matched) + s.totalCountSkew,
		"PageNumber":    number,
		"PageSize":      size,
	}, nil
}

func (s *Server) describeScalingInstances(q url.Values) (any, *apiError) {
	number, size, aerr := page(q)
	if aerr != nil {
		return nil, aerr
	}
	groupID := q.Get("ScalingGroupId")
	if groupID == "" {
		return nil, missingGroupID()
	}
	if _, ok := s.groups[groupID]; !ok {
		return nil, unknownGroup(groupID)
	}
	ids := listParam(q, "InstanceIds")
	// BytePlus Auto Scaling API reference, DescribeScalingInstances:
	// InstanceIds.N takes 1 to 20.
	if aerr := maxListLen("InstanceIds", ids, 20); aerr != nil {
		return nil, aerr
	}
	wanted := idFilter(ids)
	status := q.Get("Status")
	var matched []Instance
	for _, inst := range s.instancesOfLocked(groupID) {
		if !wanted(inst.ID) {
			continue
		}
		if status != "" && inst.Status != status {
			continue
		}
		matched = append(matched, inst)
	}
	lo, hi := bounds(len(matched), number, size)
	out := []map[string]any{}
	for _, inst := range matched[lo:hi] {
		out = append(out, map[string]any{
			"InstanceId":             inst.ID,
			"ScalingGroupId":         inst.GroupID,
			"Status":                 inst.Status,
			"ZoneId":                 inst.ZoneID,
			"CreationType":           "AutoCreated",
			"Entrusted":              true,
			"ScalingConfigurationId": s.groups[groupID].ActiveConfigID,
			"CreatedTime":            inst.Created.UTC().Format("2006-01-02T15:04:05Z"),
		})
	}
	return map[string]any{
		"ScalingInstances": out,
		"TotalCount":       len(matched) + s.totalCountSkew,
		"PageNumber":       number,
		"PageSize":         size,
	}, nil
}

func (s *Server) describeScalingConfigurations(q url.Values) (any, *apiError) {
	number, size, aerr := page(q)
	if aerr != nil {
		return nil, aerr
	}
	ids := listParam(q, "ScalingConfigurationIds")
	// BytePlus Auto Scaling API reference, DescribeScalingConfigurations,
	// request parameters: ScalingConfigurationIds.N takes 1 to 10.
	if aerr := maxListLen("ScalingConfigurationIds", ids, maxFilterIDs); aerr != nil {
		return nil, aerr
	}
	wanted := idFilter(ids)
	groupID := q.Get("ScalingGroupId")
	var matched []*Configuration
	for _, c := range s.configs {
		if !wanted(c.ID) {
			continue
		}
		if groupID != "" && c.GroupID != groupID {
			continue
		}
		matched = append(matched, c)
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].ID < matched[j].ID })
	lo, hi := bounds(len(matched), number, size)
	out := []map[string]any{}
	for _, c := range matched[lo:hi] {
		out = append(out, map[string]any{
			"ScalingConfigurationId":   c.ID,
			"ScalingConfigurationName": c.ID,
			"ScalingGroupId":           c.GroupID,
			"InstanceTypes":            append([]string{}, c.InstanceTypes...),
			"ImageId":                  c.ImageID,
			"ZoneId":                   c.ZoneID,
			"LifecycleState":           "Active",
		})
	}
	return map[string]any{
		"ScalingConfigurations": out,
		"TotalCount":            len(matched) + s.totalCountSkew,
		"PageNumber":            number,
		"PageSize":              size,
	}, nil
}

func (s *Server) describeScalingActivities(q url.Values) (any, *apiError) {
	number, size, aerr := page(q)
	if aerr != nil {
		return nil, aerr
	}
	groupID := q.Get("ScalingGroupId")
	if groupID == "" {
		return nil, missingGroupID()
	}
	status := q.Get("StatusCode")
	var matched []*Activity
	for _, a := range s.activities {
		if a.GroupID != groupID || (status != "" && a.StatusCode != status) {
			continue
		}
		matched = append(matched, a)
	}
	// The order is undocumented: newest first unless ActivitiesOldestFirst.
	if !s.opts.ActivitiesOldestFirst {
		slices.Reverse(matched)
	}
	lo, hi := bounds(len(matched), number, size)
	out := []map[string]any{}
	for _, a := range matched[lo:hi] {
		var rel []map[string]any
		for _, r := range a.Related {
			rel = append(rel, map[string]any{"InstanceId": r.InstanceID, "Status": r.Status, "Message": r.Message, "OperateType": "Add"})
		}
		out = append(out, map[string]any{
			"ScalingActivityId": a.ID,
			"ScalingGroupId":    a.GroupID,
			"StatusCode":        a.StatusCode,
			"ResultMsg":         a.ResultMsg,
			"ActivityType":      "Normal",
			"RelatedInstances":  rel,
			"CreatedAt":         a.Created.UTC().Format("2006-01-02T15:04:05Z"),
		})
	}
	return map[string]any{
		"ScalingActivities": out,
		"TotalCount":        len(matched) + s.totalCountSkew,
		"PageNumber":        number,
		"PageSize":          size,
	}, nil
}

func (s *Server) modifyScalingGroup(q url.Values) (any, *apiError) {
	groupID := q.Get("ScalingGroupId")
	if groupID == "" {
		return nil, missingGroupID()
	}
	g, ok := s.groups[groupID]
	if !ok {
		return nil, unknownGroup(groupID)
	}
	min, aerr := intParam(q, "MinInstanceNumber", g.Min)
	if aerr != nil {
		return nil, aerr
	}
	max, aerr := intParam(q, "MaxInstanceNumber", g.Max)
	if aerr != nil {
		return nil, aerr
	}
	desired, aerr := intParam(q, "DesireInstanceNumber", g.Desired)
	if aerr != nil {
		return nil, aerr
	}
	if min < 0 || max > 100 || min > max {
		return nil, errf(http.StatusBadRequest, "InvalidParameter", "MinInstanceNumber %d and MaxInstanceNumber %d must satisfy 0 <= min <= max <= 100", min, max)
	}
	if q.Get("DesireInstanceNumber") != "" {
		if aerr := groupActive(g); aerr != nil {
			return nil, aerr
		}
		// BytePlus docs, "Desire instance number": the feature is chosen at
		// creation and cannot be switched on later.
		if g.Desired < 0 {
			return nil, errf(http.StatusBadRequest, codeInvalidParameter, "scaling group %s was created without a desired instance number", groupID)
		}
		if desired < min || desired > max {
			return nil, errf(http.StatusBadRequest, "InvalidParameter", "DesireInstanceNumber %d must be between %d and %d", desired, min, max)
		}
	}
	g.Min, g.Max, g.Desired = min, max, desired
	// No reconciliation here: the service acts on the new desired number at
	// its next periodic check (Options.CheckInterval).
	return map[string]any{"ScalingGroupId": g.ID}, nil
}

func (s *Server) removeInstances(q url.Values) (any, *apiError) {
	groupID := q.Get("ScalingGroupId")
	if groupID == "" {
		return nil, missingGroupID()
	}
	g, ok := s.groups[groupID]
	if !ok {
		return nil, unknownGroup(groupID)
	}
	ids := listParam(q, "InstanceIds")
	if len(ids) < 1 || len(ids) > 20 {
		return nil, errf(http.StatusBadRequest, "InvalidParameter", "InstanceIds must hold 1 to 20 ids, got %d", len(ids))
	}
	decrease, aerr := boolParam(q, "DecreaseDesiredCapacity", true)
	if aerr != nil {
		return nil, aerr
	}
	force, aerr := boolParam(q, "ForceDelete", false)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := groupActive(g); aerr != nil {
		return nil, aerr
	}
	seen := map[string]bool{}
	for _, id := range ids {
		inst, ok := s.instances[id]
		if !ok || inst.GroupID != groupID {
			return nil, errf(http.StatusBadRequest, codeInvalidParameter, "instance %s is not in scaling group %s", id, groupID)
		}
		// BytePlus Auto Scaling API reference, RemoveInstances: only
		// instances in service can be removed.
		if inst.Status != StatusInService {
			return nil, errf(http.StatusBadRequest, codeInvalidParameter, "instance %s is %s, not InService", id, inst.Status)
		}
		if seen[id] {
			return nil, errf(http.StatusBadRequest, codeInvalidParameter, "instance %s given twice", id)
		}
		seen[id] = true
	}
	live, _ := s.countLive(groupID)
	// The desired number (and without one the instance count) must stay
	// within min..max (BytePlus Auto Scaling API reference, RemoveInstances:
	// ForceDelete only lifts this for a removal that keeps the desired number).
	if g.Desired >= 0 && decrease {
		if !s.opts.LenientMinOnRemove && g.Desired-len(ids) < g.Min {
			return nil, errf(http.StatusBadRequest, codeInvalidParameter, "removing %d instances would take the desired number %d below min %d", len(ids), g.Desired, g.Min)
		}
	} else if live-len(ids) < g.Min && !force {
		return nil, errf(http.StatusBadRequest, codeInvalidParameter, "removing %d instances would leave fewer than min %d", len(ids), g.Min)
	}
	now := s.opts.Now()
	for _, id := range ids {
		inst := s.instances[id]
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

// tokenPage applies MaxResults/NextToken (an offset) paging.
func tokenPage(q url.Values, n, def int) (lo, hi int, next string, aerr *apiError) {
	max, aerr := intParam(q, "MaxResults", def)
	if aerr != nil {
		return 0, 0, "", aerr
	}
	if max < 1 || max > 1000 {
		return 0, 0, "", errf(http.StatusBadRequest, "InvalidParameter", "MaxResults must be between 1 and 1000")
	}
	if tok := q.Get("NextToken"); tok != "" {
		off, err := strconv.Atoi(tok)
		if err != nil || off < 0 {
			return 0, 0, "", errf(http.StatusBadRequest, "InvalidParameter", "bad NextToken %q", tok)
		}
		lo = off
	}
	if lo > n {
		lo = n
	}
	hi = lo + max
	if hi > n {
		hi = n
	}
	if hi < n {
		next = strconv.Itoa(hi)
	}
	return lo, hi, next, nil
}

func (s *Server) describeInstanceTypes(q url.Values) (any, *apiError) {
	ids := listParam(q, "InstanceTypeIds")
	if len(ids) > 10 {
		return nil, errf(http.StatusBadRequest, "InvalidParameter", "at most 10 InstanceTypeIds")
	}
	wanted := idFilter(ids)
	var matched []*InstanceType
	for _, t := range s.types {
		if !wanted(t.ID) {
			continue
		}
		matched = append(matched, t)
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].ID < matched[j].ID })
	lo, hi, next, aerr := tokenPage(q, len(matched), 10)
	if aerr != nil {
		return nil, aerr
	}
	out := []map[string]any{}
	for _, t := range matched[lo:hi] {
		m := map[string]any{
			"InstanceTypeId":     t.ID,
			"InstanceTypeFamily": t.Family,
			"Processor":          map[string]any{"Cpus": t.CPUs, "Model": "Fake CPU"},
			"Memory":             map[string]any{"Size": t.MemoryMiB},
		}
		if t.GPUCount > 0 {
			m["Gpu"] = map[string]any{"GpuDevices": []map[string]any{{
				"Count": t.GPUCount, "ProductName": t.GPUModel, "Memory": map[string]any{"Size": 24576},
			}}}
		}
		out = append(out, m)
	}
	return map[string]any{"InstanceTypes": out, "NextToken": next, "TotalCount": len(matched) + s.totalCountSkew}, nil
}

func (s *Server) describeImages(q url.Values) (any, *apiError) {
	ids := listParam(q, "ImageIds")
	wanted := idFilter(ids)
	var matched []*Image
	for _, im := range s.images {
		if !wanted(im.ID) {
			continue
		}
		matched = append(matched, im)
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].ID < matched[j].ID })
	lo, hi, next, aerr := tokenPage(q, len(matched), 20)
	if aerr != nil {
		return nil, aerr
	}
	out := []map[string]any{}
	for _, im := range matched[lo:hi] {
		out = append(out, map[string]any{"ImageId": im.ID, "Architecture": im.Architecture, "OsType": im.OSType, "Status": "available"})
	}
	return map[string]any{"Images": out, "NextToken": next, "TotalCount": len(matched) + s.totalCountSkew}, nil
}

func (s *Server) describeSubnets(q url.Values) (any, *apiError) {
	number, size, aerr := page(q)
	if aerr != nil {
		return nil, aerr
	}
	ids := listParam(q, "SubnetIds")
	if len(ids) > 100 {
		return nil, errf(http.StatusBadRequest, "InvalidParameter", "at most 100 SubnetIds")
	}
	wanted := idFilter(ids)
	var matched []*Subnet
	for _, sn := range s.subnets {
		if !wanted(sn.ID) {
			continue
		}
		matched = append(matched, sn)
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].ID < matched[j].ID })
	lo, hi := bounds(len(matched), number, size)
	out := []map[string]any{}
	for _, sn := range matched[lo:hi] {
		out = append(out, map[string]any{"SubnetId": sn.ID, "ZoneId": sn.ZoneID, "VpcId": "vpc-fake", "Status": "Available"})
	}
	return map[string]any{
		"Subnets":    out,
		"TotalCount": len(matched) + s.totalCountSkew,
		"PageNumber": number,
		"PageSize":   size,
	}, nil
}

// maxFilterIDs is the documented limit of the Auto Scaling id and name filters.
const maxFilterIDs = 10

func maxListLen(name string, values []string, limit int) *apiError {
	if len(values) > limit {
		return errf(http.StatusBadRequest, "InvalidParameter", "%s.N takes at most %d values, got %d", name, limit, len(values))
	}
	return nil
}

// Error codes. Only codes documented for the Auto Scaling API or the gateway
// are used (BytePlus common error codes: InvalidParameter, MissingParameter;
// Auto Scaling error codes: the InvalidScalingGroup.InvalidStatus form). An
// unknown scaling group gets InvalidParameter: the docs name no code for it.
const (
	codeInvalidParameter   = "InvalidParameter"
	codeMissingGroupID     = "MissingParameter.ScalingGroupId"
	codeGroupInvalidStatus = "InvalidScalingGroup.InvalidStatus"
)

func unknownGroup(groupID string) *apiError {
	return errf(http.StatusBadRequest, codeInvalidParameter, "scaling group %s does not exist", groupID)
}

func missingGroupID() *apiError {
	return errf(http.StatusBadRequest, codeMissingGroupID, "ScalingGroupId is required")
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

// idFilter matches every id when ids is empty (the API's "no filter"), else
// only the listed ones.
func idFilter(ids []string) func(string) bool {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return func(id string) bool { return len(set) == 0 || set[id] }
}
