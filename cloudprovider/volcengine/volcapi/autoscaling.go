package volcapi

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

// Action names, as sent in the Action query parameter.
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

// Paging and batch limits of the API.
const (
	// PageSize is used for every PageNumber/PageSize list. The Volcengine docs
	// allow 100, the BytePlus docs only 50; 50 works on both.
	PageSize = 50
	// MaxRemoveBatch is the most InstanceIds one RemoveInstances accepts.
	MaxRemoveBatch = 20
	// maxInstanceTypeIDs is the most InstanceTypeIds one DescribeInstanceTypes accepts.
	maxInstanceTypeIDs = 10
	// MaxFilterIDs is the most ids one ScalingGroupIds.N or
	// ScalingConfigurationIds.N filter accepts (BytePlus Auto Scaling API
	// reference, DescribeScalingGroups and DescribeScalingConfigurations,
	// request parameters: N is 1 to 10).
	MaxFilterIDs = 10
	// MaxPages stops a list whose TotalCount never converges.
	MaxPages = 200
)

// NoDesiredNumber is the DesireInstanceNumber of a group created without one.
const NoDesiredNumber = -1

// ScalingGroup is the part of a scaling group the provider uses.
type ScalingGroup struct {
	ID   string
	Name string
	// Min and Max are the group's bounds; HasMin/HasMax say whether the API sent them.
	Min, Max       int
	HasMin, HasMax bool
	// Desired is DesireInstanceNumber, NoDesiredNumber when the group has none.
	Desired               int
	TotalInstances        int
	LifecycleState        string
	ActiveConfigID        string
	LaunchTemplateID      string
	LaunchTemplateVersion string
	// LaunchTemplateTypes are the instance types of LaunchTemplateOverrides.
	LaunchTemplateTypes []string
	SubnetIDs           []string
	Tags                map[string]string
}

// ScalingInstance is one instance of a scaling group.
type ScalingInstance struct {
	ID       string
	GroupID  string
	Status   string
	ZoneID   string
	ConfigID string
}

// ScalingConfiguration is the part of a scaling configuration the template uses.
type ScalingConfiguration struct {
	ID            string
	GroupID       string
	InstanceTypes []string
	ImageID       string
	ZoneID        string
}

// Activity is a scaling activity: the service's record of one scale-out or
// scale-in, with the instances it touched.
type Activity struct {
	ID         string
	StatusCode string
	ResultMsg  string
	CreatedAt  time.Time
	// Failed is set for the Error, PartialSuccess, Exception and Rejected codes.
	Failed  bool
	Related []RelatedInstance
}

// RelatedInstance is an instance an activity touched, with its own outcome.
type RelatedInstance struct {
	InstanceID string
	Status     string
	Message    string
}

// InstanceFailed reports whether the activity failed for this instance.
func (r RelatedInstance) InstanceFailed() bool {
	return r.Status != "" && r.Status != "Success" && r.Status != "Succeeded"
}

// ListScalingGroups lists scaling groups, all pages. With ids it asks for
// those only, but the API may still answer with other groups (its docs say
// unknown ids "query other scaling groups"), so callers match ids
// themselves.
//
// More than MaxFilterIDs ids are asked for in batches of MaxFilterIDs, each
// paged; a group returned by two batches is kept once.
func (c *Client) ListScalingGroups(ctx context.Context, ids []string) ([]ScalingGroup, error) {
	if len(ids) == 0 {
		return c.listScalingGroups(ctx, nil)
	}
	var out []ScalingGroup
	seen := map[string]bool{}
	for _, batch := range batches(ids, MaxFilterIDs) {
		got, err := c.listScalingGroups(ctx, batch)
		if err != nil {
			return nil, err
		}
		for _, g := range got {
			if !seen[g.ID] {
				seen[g.ID] = true
				out = append(out, g)
			}
		}
	}
	return out, nil
}

// batches splits ids into slices of at most n, dropping repeats.
func batches(ids []string, n int) [][]string {
	var uniq []string
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	var out [][]string
	for start := 0; start < len(uniq); start += n {
		out = append(out, uniq[start:min(start+n, len(uniq))])
	}
	return out
}

func (c *Client) listScalingGroups(ctx context.Context, ids []string) ([]ScalingGroup, error) {
	var out []ScalingGroup
	for page := 1; page <= MaxPages; page++ {
		got, err := c.scalingGroupsPage(ctx, ids, page)
		if err != nil {
			return nil, err
		}
		out = append(out, got.Groups...)
		if got.Last {
			return out, nil
		}
	}
	return nil, fmt.Errorf("volcengine %s: more than %d pages", ActionDescribeScalingGroups, MaxPages)
}

// GroupPage is one page of the unfiltered group list.
type GroupPage struct {
	Groups []ScalingGroup
	// TotalCount is the number of groups the API reports in the whole list.
	TotalCount int
	// Last is set when no page follows (a short page, or TotalCount reached).
	Last bool
}

// ScalingGroupsPage reads page number page (from 1) of the unfiltered group
// list, PageSize groups to a page, so a caller can read a long list a page
// at a time. Pages shift when groups are created or deleted between reads.
func (c *Client) ScalingGroupsPage(ctx context.Context, page int) (GroupPage, error) {
	if page < 1 || page > MaxPages {
		return GroupPage{}, fmt.Errorf("volcengine %s: page %d, want 1 to %d", ActionDescribeScalingGroups, page, MaxPages)
	}
	return c.scalingGroupsPage(ctx, nil, page)
}

func (c *Client) scalingGroupsPage(ctx context.Context, ids []string, page int) (GroupPage, error) {
	in := &autoscaling.DescribeScalingGroupsInput{PageNumber: int32Ptr(page), PageSize: int32Ptr(PageSize)}
	if len(ids) > 0 {
		in.ScalingGroupIds = strs(ids)
	}
	actx, ans := cloudhttp.RecordAnswer(ctx)
	resp, err := c.as.DescribeScalingGroupsWithContext(actx, in)
	if err != nil {
		return GroupPage{}, c.fail(ctx, ActionDescribeScalingGroups, ans, err)
	}
	var out GroupPage
	for _, g := range resp.ScalingGroups {
		if g == nil || str(g.ScalingGroupId) == "" {
			continue
		}
		out.Groups = append(out.Groups, convertGroup(g))
	}
	out.TotalCount = i32(resp.TotalCount)
	out.Last = lastPage(len(resp.ScalingGroups), page*PageSize, out.TotalCount)
	return out, nil
}

// lastPage reports whether paging stops: after a short page (so a wrong
// TotalCount cannot make us loop), or once TotalCount is reached.
func lastPage(pageLen, seen, total int) bool {
	return pageLen < PageSize || seen >= total
}

func convertGroup(g *autoscaling.ScalingGroupForDescribeScalingGroupsOutput) ScalingGroup {
	sg := ScalingGroup{
		ID:                    str(g.ScalingGroupId),
		Name:                  str(g.ScalingGroupName),
		Min:                   i32(g.MinInstanceNumber),
		Max:                   i32(g.MaxInstanceNumber),
		HasMin:                g.MinInstanceNumber != nil,
		HasMax:                g.MaxInstanceNumber != nil,
		Desired:               NoDesiredNumber,
		TotalInstances:        i32(g.TotalInstanceCount),
		LifecycleState:        str(g.LifecycleState),
		ActiveConfigID:        str(g.ActiveScalingConfigurationId),
		LaunchTemplateID:      str(g.LaunchTemplateId),
		LaunchTemplateVersion: str(g.LaunchTemplateVersion),
		Tags:                  map[string]string{},
	}
	if g.DesireInstanceNumber != nil && *g.DesireInstanceNumber >= 0 {
		sg.Desired = int(*g.DesireInstanceNumber)
	}
	for _, o := range g.LaunchTemplateOverrides {
		if o != nil && str(o.InstanceType) != "" {
			sg.LaunchTemplateTypes = append(sg.LaunchTemplateTypes, str(o.InstanceType))
		}
	}
	for _, s := range g.SubnetIds {
		if str(s) != "" {
			sg.SubnetIDs = append(sg.SubnetIDs, str(s))
		}
	}
	for _, t := range g.Tags {
		if t != nil && str(t.Key) != "" {
			sg.Tags[str(t.Key)] = str(t.Value)
		}
	}
	return sg
}

// ListScalingInstances lists every instance of a group, all pages.
func (c *Client) ListScalingInstances(ctx context.Context, groupID string) ([]ScalingInstance, error) {
	var out []ScalingInstance
	seen := map[string]bool{}
	for page := 1; page <= MaxPages; page++ {
		actx, ans := cloudhttp.RecordAnswer(ctx)
		resp, err := c.as.DescribeScalingInstancesWithContext(actx, &autoscaling.DescribeScalingInstancesInput{
			ScalingGroupId: sp(groupID),
			PageNumber:     int32Ptr(page),
			PageSize:       int32Ptr(PageSize),
		})
		if err != nil {
			return nil, c.fail(ctx, ActionDescribeScalingInstances, ans, err)
		}
		n := 0
		for _, si := range resp.ScalingInstances {
			if si == nil || str(si.InstanceId) == "" {
				continue
			}
			n++
			id := str(si.InstanceId)
			// Instances can shift between pages while we list; keep the first sighting.
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, ScalingInstance{
				ID:       id,
				GroupID:  str(si.ScalingGroupId),
				Status:   str(si.Status),
				ZoneID:   str(si.ZoneId),
				ConfigID: str(si.ScalingConfigurationId),
			})
		}
		if lastPage(len(resp.ScalingInstances), page*PageSize, i32(resp.TotalCount)) {
			return out, nil
		}
	}
	return nil, fmt.Errorf("volcengine %s: more than %d pages", ActionDescribeScalingInstances, MaxPages)
}

// SetDesiredInstances sets the group's DesireInstanceNumber. The service then
// launches or removes instances on its own; the call returns at once.
func (c *Client) SetDesiredInstances(ctx context.Context, groupID string, desired int) error {
	// An absolute number: repeating it after a lost answer changes nothing more.
	ctx = cloudhttp.WithCallKind(ctx, cloudhttp.CallIdempotent)
	actx, ans := cloudhttp.RecordAnswer(ctx)
	_, err := c.as.ModifyScalingGroupWithContext(actx, &autoscaling.ModifyScalingGroupInput{
		ScalingGroupId:       sp(groupID),
		DesireInstanceNumber: int32Ptr(desired),
	})
	if err != nil {
		return c.fail(ctx, ActionModifyScalingGroup, ans, err)
	}
	return nil
}

// RemoveInstances releases up to MaxRemoveBatch instances of a group. With
// decreaseDesired the desired number drops by len(ids); without it the group
// keeps its desired number and replaces the instances. forceDelete lets the
// removal go below the group's min.
func (c *Client) RemoveInstances(ctx context.Context, groupID string, ids []string, decreaseDesired bool) (string, error) {
	if len(ids) == 0 || len(ids) > MaxRemoveBatch {
		return "", fmt.Errorf("volcengine %s: %d instance ids, want 1 to %d", ActionRemoveInstances, len(ids), MaxRemoveBatch)
	}
	in := &autoscaling.RemoveInstancesInput{
		ScalingGroupId:          sp(groupID),
		InstanceIds:             strs(ids),
		DecreaseDesiredCapacity: &decreaseDesired,
	}
	if !decreaseDesired {
		force := true
		in.ForceDelete = &force
	}
	actx, ans := cloudhttp.RecordAnswer(ctx)
	// A repeat after a lost answer would be refused because some instances
	// are already leaving, and read as a refusal of the whole batch.
	actx = cloudhttp.WithCallKind(actx, cloudhttp.CallOnce)
	resp, err := c.as.RemoveInstancesWithContext(actx, in)
	if err != nil {
		return "", c.fail(ctx, ActionRemoveInstances, ans, err)
	}
	return str(resp.ScalingActivityId), nil
}

// ListScalingConfigurations fetches configurations by id, in batches of
// MaxFilterIDs ids, all pages of each.
func (c *Client) ListScalingConfigurations(ctx context.Context, ids []string) ([]ScalingConfiguration, error) {
	var out []ScalingConfiguration
	seen := map[string]bool{}
	for _, batch := range batches(ids, MaxFilterIDs) {
		got, err := c.listScalingConfigurations(ctx, batch)
		if err != nil {
			return nil, err
		}
		for _, sc := range got {
			if !seen[sc.ID] {
				seen[sc.ID] = true
				out = append(out, sc)
			}
		}
	}
	return out, nil
}

func (c *Client) listScalingConfigurations(ctx context.Context, ids []string) ([]ScalingConfiguration, error) {
	var out []ScalingConfiguration
	for page := 1; page <= MaxPages; page++ {
		actx, ans := cloudhttp.RecordAnswer(ctx)
		resp, err := c.as.DescribeScalingConfigurationsWithContext(actx, &autoscaling.DescribeScalingConfigurationsInput{
			ScalingConfigurationIds: strs(ids),
			PageNumber:              int32Ptr(page),
			PageSize:                int32Ptr(PageSize),
		})
		if err != nil {
			return nil, c.fail(ctx, ActionDescribeScalingConfigurations, ans, err)
		}
		for _, sc := range resp.ScalingConfigurations {
			if sc == nil || str(sc.ScalingConfigurationId) == "" {
				continue
			}
			cfg := ScalingConfiguration{
				ID:      str(sc.ScalingConfigurationId),
				GroupID: str(sc.ScalingGroupId),
				ImageID: str(sc.ImageId),
				ZoneID:  str(sc.ZoneId),
			}
			for _, t := range sc.InstanceTypes {
				if str(t) != "" {
					cfg.InstanceTypes = append(cfg.InstanceTypes, str(t))
				}
			}
			out = append(out, cfg)
		}
		if lastPage(len(resp.ScalingConfigurations), page*PageSize, i32(resp.TotalCount)) {
			return out, nil
		}
	}
	return nil, fmt.Errorf("volcengine %s: more than %d pages", ActionDescribeScalingConfigurations, MaxPages)
}

// ActivitiesSince returns the group's scaling activities created at or after
// since, newest first. The API does not document its listing order, so
// every page is read and sorted here. Older activities are left out: they
// cannot explain a change made after them.
func (c *Client) ActivitiesSince(ctx context.Context, groupID string, since time.Time) ([]Activity, error) {
	var out []Activity
	for page := 1; page <= MaxPages; page++ {
		actx, ans := cloudhttp.RecordAnswer(ctx)
		resp, err := c.as.DescribeScalingActivitiesWithContext(actx, &autoscaling.DescribeScalingActivitiesInput{
			ScalingGroupId: sp(groupID),
			PageNumber:     int32Ptr(page),
			PageSize:       int32Ptr(PageSize),
		})
		if err != nil {
			return nil, c.fail(ctx, ActionDescribeScalingActivities, ans, err)
		}
		for _, a := range resp.ScalingActivities {
			if a == nil {
				continue
			}
			act := convertActivity(a)
			if act.CreatedAt.Before(since) {
				continue
			}
			out = append(out, act)
		}
		if lastPage(len(resp.ScalingActivities), page*PageSize, i32(resp.TotalCount)) {
			sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
			return out, nil
		}
	}
	return nil, fmt.Errorf("volcengine %s: more than %d pages", ActionDescribeScalingActivities, MaxPages)
}

func convertActivity(a *autoscaling.ScalingActivityForDescribeScalingActivitiesOutput) Activity {
	act := Activity{
		ID:         str(a.ScalingActivityId),
		StatusCode: str(a.StatusCode),
		ResultMsg:  str(a.ResultMsg),
		CreatedAt:  parseTime(str(a.CreatedAt)),
	}
	switch act.StatusCode {
	case "Error", "PartialSuccess", "Exception", "Rejected":
		act.Failed = true
	}
	for _, r := range a.RelatedInstances {
		if r == nil || str(r.InstanceId) == "" {
			continue
		}
		act.Related = append(act.Related, RelatedInstance{InstanceID: str(r.InstanceId), Status: str(r.Status), Message: str(r.Message)})
	}
	return act
}

func parseTime(s string) time.Time {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
