// Package reporting logs and counts what happens to a provider's node
// groups, whether the provider is served over externalgrpc or in-tree: a
// decorator (Wrap) that reports after each refresh, mutation and template
// a group cannot give, and the log line of a mutation (LogMutation).
package reporting

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// Provider wraps a served provider and reports on its node groups.
//
// After each successful refresh it logs each group that arrives, leaves, or
// changes its bounds or why it is managed; it counts every group's sizes,
// instances by state and settings problems (logging the problems when they
// change) and the quarantined groups. After each mutation it counts the
// quarantined groups again and, if the change was applied, the group's
// sizes. A failed refresh is counted.
//
// It reads only the NodeGroup contract (sizes, Nodes, Status), so every
// provider is reported alike and no provider holds reporting code. The
// handlers keep what is about requests (a mutation's log line and outcome
// count, per-RPC metrics), since they also see requests refused before
// they reach a group. Every TemplateNodeInfo answered without a template
// is counted, and logged when its cause changes.
type Provider struct {
	cloudprovider.CloudProvider
	metrics *metrics.Metrics

	// settingsLogged holds each group's settings as last logged, so they
	// are logged when they change, not after every refresh.
	settingsMu     sync.Mutex
	settingsLogged map[string]string

	// members holds each group as last logged; nil until the first refresh.
	membersMu sync.Mutex
	members   map[string]member

	// templateReasons holds why each group last had no template, so the
	// reason is logged when it changes, not on every CA loop.
	templateMu      sync.Mutex
	templateReasons map[string]string
}

// member is the part of a group that reportMembers logs.
type member struct {
	min, max int
	why      cloudprovider.Management
}

// Wrap decorates p; m may be nil (the settings are still logged).
// Wrap a provider once, or everything is reported twice.
func Wrap(p cloudprovider.CloudProvider, m *metrics.Metrics) *Provider {
	return &Provider{CloudProvider: p, metrics: m}
}

// Refresh refreshes the provider, then reports every group from the new
// snapshot. After a failed refresh the figures of the last good one stay.
func (r *Provider) Refresh(ctx context.Context) error {
	if err := r.CloudProvider.Refresh(ctx); err != nil {
		r.metrics.RefreshFailed()
		return err
	}
	groups, err := r.CloudProvider.NodeGroups(ctx)
	if err != nil {
		// The refresh itself succeeded; the last figures stay.
		return nil
	}
	statuses := groupStatuses(ctx, groups)
	r.reportMembers(ctx, groups, statuses)
	r.reportSizes(ctx, groups)
	r.reportQuarantined(statuses)
	r.reportSettings(ctx, groups, statuses)
	return nil
}

// NodeGroups returns the provider's groups, decorated so their mutations
// are reported.
func (r *Provider) NodeGroups(ctx context.Context) ([]cloudprovider.NodeGroup, error) {
	groups, err := r.CloudProvider.NodeGroups(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]cloudprovider.NodeGroup, len(groups))
	for i, g := range groups {
		out[i] = reportedGroup{NodeGroup: g, r: r}
	}
	return out, nil
}

// NodeGroup returns the group with id, decorated, or ErrNodeGroupNotFound.
func (r *Provider) NodeGroup(ctx context.Context, id string) (cloudprovider.NodeGroup, error) {
	g, err := r.CloudProvider.NodeGroup(ctx, id)
	if err != nil {
		return nil, err
	}
	return reportedGroup{NodeGroup: g, r: r}, nil
}

// NodeGroupForNode returns the provider's answer, its group decorated.
func (r *Provider) NodeGroupForNode(ctx context.Context, node *corev1.Node) (cloudprovider.NodeGroup, error) {
	g, err := r.CloudProvider.NodeGroupForNode(ctx, node)
	if g == nil || err != nil {
		// Returned as is: a decorated nil would not compare equal to nil.
		return g, err
	}
	return reportedGroup{NodeGroup: g, r: r}, nil
}

// reportedGroup is a group of a Provider; each mutation is reported when it
// returns.
type reportedGroup struct {
	cloudprovider.NodeGroup
	r *Provider
}

// IncreaseSize implements cloudprovider.NodeGroup.
func (g reportedGroup) IncreaseSize(ctx context.Context, delta int) error {
	return g.r.mutated(ctx, g.NodeGroup, g.NodeGroup.IncreaseSize(ctx, delta))
}

// DeleteNodes implements cloudprovider.NodeGroup.
func (g reportedGroup) DeleteNodes(ctx context.Context, nodes []*corev1.Node) error {
	return g.r.mutated(ctx, g.NodeGroup, g.NodeGroup.DeleteNodes(ctx, nodes))
}

// DecreaseTargetSize implements cloudprovider.NodeGroup.
func (g reportedGroup) DecreaseTargetSize(ctx context.Context, delta int) error {
	return g.r.mutated(ctx, g.NodeGroup, g.NodeGroup.DecreaseTargetSize(ctx, delta))
}

// TemplateNodeInfo implements cloudprovider.NodeGroup. A group that
// answers no template loses only its scale from zero, so it is reported
// (templateUnavailable) and the answer passes on as it is. An unknown
// group or a caller that gave up is not the group's template's fault.
func (g reportedGroup) TemplateNodeInfo(ctx context.Context) (*corev1.Node, error) {
	node, err := g.NodeGroup.TemplateNodeInfo(ctx)
	if err != nil && !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) && ctx.Err() == nil {
		g.r.templateUnavailable(g.Id(ctx), err)
	}
	return node, err
}

// templateUnavailable counts a group without a template on every answer
// and logs why once per cause.
func (r *Provider) templateUnavailable(groupID string, err error) {
	r.metrics.TemplateUnavailable(groupID)
	r.templateMu.Lock()
	defer r.templateMu.Unlock()
	if r.templateReasons == nil {
		r.templateReasons = map[string]string{}
	}
	if r.templateReasons[groupID] == err.Error() {
		return
	}
	r.templateReasons[groupID] = err.Error()
	klog.ErrorS(err, "No template for node group; it cannot scale up from zero", "nodeGroup", groupID)
}

// mutated reports the state a mutation of g left, and returns its err: the
// quarantined groups whatever the outcome (an unknown outcome starts a
// quarantine, and a refusal may come from one), and g's sizes when the
// change was applied.
func (r *Provider) mutated(ctx context.Context, g cloudprovider.NodeGroup, err error) error {
	if r.metrics == nil {
		return err
	}
	if groups, gerr := r.CloudProvider.NodeGroups(ctx); gerr == nil {
		r.reportQuarantined(groupStatuses(ctx, groups))
	}
	if err == nil {
		r.metrics.SetGroupSize(groupSize(ctx, g))
	}
	return err
}

func groupStatuses(ctx context.Context, groups []cloudprovider.NodeGroup) []cloudprovider.GroupStatus {
	out := make([]cloudprovider.GroupStatus, len(groups))
	for i, g := range groups {
		out[i] = g.Status(ctx)
	}
	return out
}

// reportSizes replaces every group's sizes and instance counts.
func (r *Provider) reportSizes(ctx context.Context, groups []cloudprovider.NodeGroup) {
	if r.metrics == nil {
		return
	}
	sizes := make([]metrics.GroupSize, 0, len(groups))
	instances := make(map[string]metrics.InstanceCounts, len(groups))
	for _, g := range groups {
		sizes = append(sizes, groupSize(ctx, g))
		instances[g.Id(ctx)] = instanceCounts(ctx, g)
	}
	r.metrics.SetGroupSizes(sizes)
	r.metrics.SetGroupInstances(instances)
}

// reportQuarantined counts the groups refusing changes right now.
func (r *Provider) reportQuarantined(statuses []cloudprovider.GroupStatus) {
	n := 0
	for _, st := range statuses {
		// QuarantinedUntil is zero unless the guard's clock is inside the window.
		if !st.QuarantinedUntil.IsZero() {
			n++
		}
	}
	r.metrics.SetQuarantinedGroups(n)
}

// instanceCounts counts a group's listed instances by state, as CA reads
// them: no state is running, and a creating instance with error info failed.
func instanceCounts(ctx context.Context, g cloudprovider.NodeGroup) metrics.InstanceCounts {
	var c metrics.InstanceCounts
	list, err := g.Nodes(ctx)
	if err != nil {
		return c
	}
	for _, in := range list {
		state := cloudprovider.InstanceRunning
		if in.Status != nil && in.Status.State != 0 {
			state = in.Status.State
		}
		switch {
		case state == cloudprovider.InstanceCreating && in.Status.ErrorInfo != nil && in.Status.ErrorInfo.ErrorCode != "":
			c.Failed++
		case state == cloudprovider.InstanceCreating:
			c.Creating++
		case state == cloudprovider.InstanceDeleting:
			c.Deleting++
		default:
			c.Running++
		}
	}
	return c
}

// reportMembers logs, at the default level, each group that arrived since
// the last refresh, left, or changed its bounds or why it is managed, so the
// log shows which groups CA may scale, within which bounds, and why.
func (r *Provider) reportMembers(ctx context.Context, groups []cloudprovider.NodeGroup, statuses []cloudprovider.GroupStatus) {
	r.membersMu.Lock()
	defer r.membersMu.Unlock()
	last := r.members
	r.members = make(map[string]member, len(groups))
	provider := r.Name()
	for i, g := range groups {
		id := g.Id(ctx)
		now := member{min: g.MinSize(ctx), max: g.MaxSize(ctx), why: statuses[i].Managed}
		r.members[id] = now
		before, known := last[id]
		switch {
		case !known:
			klog.InfoS("Managing node group", "provider", provider, "nodeGroup", id, "min", now.min, "max", now.max, "managed", now.why.String())
		case before != now:
			klog.InfoS("Node group changed", "provider", provider, "nodeGroup", id, "min", now.min, "max", now.max, "managed", now.why.String(),
				"previousMin", before.min, "previousMax", before.max, "previouslyManaged", before.why.String())
		}
	}
	gone := make([]string, 0, len(last))
	for id := range last {
		if _, ok := r.members[id]; !ok {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		klog.InfoS("Node group no longer managed", "provider", provider, "nodeGroup", id, "wasManaged", last[id].why.String())
	}
}

// reportSettings logs and counts, per group, the settings in the cloud's
// metadata that the provider ignored as malformed. Providers only list the
// problems (GroupStatus.SettingProblems).
func (r *Provider) reportSettings(ctx context.Context, groups []cloudprovider.NodeGroup, statuses []cloudprovider.GroupStatus) {
	counts := make(map[string]int, len(groups))
	r.settingsMu.Lock()
	defer r.settingsMu.Unlock()
	last := r.settingsLogged
	r.settingsLogged = make(map[string]string, len(groups))
	for i, g := range groups {
		id, st := g.Id(ctx), statuses[i]
		counts[id] = len(st.SettingProblems)
		text := []string{st.Settings}
		for _, p := range st.SettingProblems {
			text = append(text, p.String())
		}
		joined := strings.Join(text, "\n")
		r.settingsLogged[id] = joined
		if joined == last[id] {
			continue
		}
		for _, p := range st.SettingProblems {
			klog.InfoS("Ignoring a malformed per-group setting", "nodeGroup", id, "source", st.SettingsSource, "key", p.Key, "value", p.Value, "reason", p.Reason)
		}
		if st.Settings != "" {
			klog.InfoS("Per-group settings", "nodeGroup", id, "settings", st.Settings)
		}
	}
	r.metrics.SetSettingErrors(counts)
}

func groupSize(ctx context.Context, g cloudprovider.NodeGroup) metrics.GroupSize {
	target, _ := g.TargetSize(ctx)
	return metrics.GroupSize{ID: g.Id(ctx), Min: g.MinSize(ctx), Max: g.MaxSize(ctx), Target: target}
}

// MaxLoggedInstances bounds the instances one mutation's log line names.
const MaxLoggedInstances = 20

// Change is one mutation CA asked for, as logged and counted.
type Change struct {
	// Operation is metrics.OperationIncrease, OperationDecrease or OperationDelete.
	Operation string
	// Delta is the requested change of the target (negative for decrease
	// and delete).
	Delta int
	// Nodes names the nodes to delete.
	Nodes []string
}

// LogMutation logs a mutation in one line at the default level: group,
// target from -> to (the target asked for), the instances named, the
// outcome and the client (CA's address, or "in-tree"). from is -1 when the
// group is unknown.
func LogMutation(id string, c Change, from int, outcome cloudprovider.MutationOutcome, err error, client string) {
	kv := []any{"nodeGroup", id, "operation", c.Operation}
	if from >= 0 {
		kv = append(kv, "from", from, "to", from+c.Delta)
	} else {
		kv = append(kv, "delta", c.Delta)
	}
	if n := len(c.Nodes); n > MaxLoggedInstances {
		kv = append(kv, "instances", append(c.Nodes[:MaxLoggedInstances:MaxLoggedInstances], fmt.Sprintf("and %d more", n-MaxLoggedInstances)))
	} else if n > 0 {
		kv = append(kv, "instances", c.Nodes)
	}
	kv = append(kv, "outcome", outcome.String(), "client", client)
	if err == nil {
		klog.InfoS("Node group changed", kv...)
		return
	}
	klog.ErrorS(err, "Node group change not applied", kv...)
}

// Mutate runs apply, a mutation of g the caller has checked, and reports it:
// one log line (LogMutation) and one count by outcome. g is a group of r, so
// its decoration reports the sizes and quarantine the change leaves.
func (r *Provider) Mutate(ctx context.Context, g cloudprovider.NodeGroup, c Change, client string, apply func() error) error {
	id := g.Id(ctx)
	from, _ := g.TargetSize(ctx)
	err := apply()
	outcome := cloudprovider.OutcomeOf(err)
	LogMutation(id, c, from, outcome, err, client)
	r.metrics.ObserveMutation(id, c.Operation, outcome.String())
	return err
}
