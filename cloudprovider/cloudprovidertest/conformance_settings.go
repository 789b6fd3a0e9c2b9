package cloudprovidertest

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest/legacyca"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// SettingsSeed is what the settings check asks a harness to store on a group
// in the cloud (docs/group-settings.md): option overrides (name -> raw value,
// possibly malformed), template labels, taints and resources.
type SettingsSeed struct {
	Options   map[string]string
	Labels    map[string]string
	Taints    []corev1.Taint
	Resources map[corev1.ResourceName]string
}

// AWSKeys is the seed in the AWS spelling, for metadata that stays in the
// cloud (Volcengine tags, Exoscale plain instance-pool labels).
func (s SettingsSeed) AWSKeys() map[string]string {
	out := map[string]string{}
	for name, v := range s.Options {
		out[groupconfig.OptionKey(name)] = v
	}
	for k, v := range s.Labels {
		out[groupconfig.LabelHintKey(k)] = v
	}
	for _, t := range s.Taints {
		out[groupconfig.TaintHintKey(t.Key)] = groupconfig.TaintHintValue(t)
	}
	for name, v := range s.Resources {
		out[groupconfig.ResourceHintKey(name)] = v
	}
	return out
}

// NodeLabels is the seed as the labels of a pool whose labels land on its
// nodes (Vultr, SKS nodepools): options and resources in the node-label
// spelling, plus Labels as plain pool labels. Taints go to the pool's own
// taints.
func (s SettingsSeed) NodeLabels() map[string]string {
	out := maps.Clone(s.Labels)
	if out == nil {
		out = map[string]string{}
	}
	for name, v := range s.Options {
		out[groupconfig.NodeLabelOptionKey(name)] = v
	}
	for name, v := range s.Resources {
		out[groupconfig.NodeLabelResourceKey(name)] = v
	}
	return out
}

// kitSeed overrides three options, sets one option to a malformed value, and
// hints a label, a taint and a resource, plus a well-known label the template
// must not take.
func kitSeed() SettingsSeed {
	return SettingsSeed{
		Options: map[string]string{
			groupconfig.OptionScaleDownUnneededTime:         "7m",
			groupconfig.OptionScaleDownUtilizationThreshold: "0.3",
			groupconfig.OptionIgnoreDaemonSetsUtilization:   "true",
			groupconfig.OptionMaxNodeProvisionTime:          "soon",
		},
		Labels:    map[string]string{"conformance.example.com/team": "kit", corev1.LabelArchStable: "plan9"},
		Taints:    []corev1.Taint{{Key: "conformance.example.com/dedicated", Value: "kit", Effect: corev1.TaintEffectNoSchedule}},
		Resources: map[corev1.ResourceName]string{"example.com/dongle": "3"},
	}
}

// kitDefaults are the defaults the check sends, different from every override.
func kitDefaults() cloudprovider.NodeGroupAutoscalingOptions {
	return cloudprovider.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold: 0.5, ScaleDownGpuUtilizationThreshold: 0.6,
		ScaleDownUnneededTime: 10 * time.Minute, ScaleDownUnreadyTime: 20 * time.Minute,
		MaxNodeProvisionTime: 15 * time.Minute, ZeroOrMaxNodeScaling: true,
	}
}

// checkGroupSettings stores settings on one group in the cloud and checks,
// after a Refresh: GetOptions answers exactly the overrides on top of the
// defaults, a group without settings answers "not implemented", the
// malformed entry is reported and ignored (it is no template label either),
// the template carries the hinted label, taint and resource while
// well-known labels win, and through the real gRPC server both generations
// of CA get the same options (OK for the seeded group, Unimplemented for the
// others). Groups the seed gives options
// (Env.OptionsGroups) are left to the options check.
func checkGroupSettings(t *testing.T, k *kit, h Harness) {
	if k.env.SetGroupSettings == nil {
		t.Fatal("Env.SetGroupSettings is required: every provider reads per-group settings from its cloud (docs/group-settings.md)")
	}
	seeded := k.groupWithTemplate()
	id := seeded.Id(k.ctx())
	hasOptions := map[string]bool{}
	for _, gid := range k.env.OptionsGroups {
		hasOptions[gid] = true
	}
	for _, g := range k.groups() {
		if hasOptions[g.Id(k.ctx())] {
			continue
		}
		if o, err := g.GetOptions(k.ctx(), kitDefaults()); !errors.Is(err, cloudprovider.ErrNotImplemented) {
			t.Fatalf("before any settings, GetOptions of %s = %+v, %v; want ErrNotImplemented", g.Id(k.ctx()), o, err)
		}
	}
	seed := kitSeed()
	k.env.SetGroupSettings(id, seed)
	k.refresh()
	seeded = k.group(id)

	want := kitDefaults()
	want.ScaleDownUnneededTime, want.ScaleDownUtilizationThreshold, want.IgnoreDaemonSetsUtilization = 7*time.Minute, 0.3, true
	got, err := seeded.GetOptions(k.ctx(), kitDefaults())
	k.must(err, "GetOptions of the seeded group "+id)
	if *got != want {
		t.Fatalf("GetOptions of %s = %+v\nwant %+v (the overrides on the defaults; the malformed maxnodeprovisiontime keeps its default)", id, *got, want)
	}
	for _, g := range k.groups() {
		if gid := g.Id(k.ctx()); gid != id && !hasOptions[gid] {
			if o, err := g.GetOptions(k.ctx(), kitDefaults()); !errors.Is(err, cloudprovider.ErrNotImplemented) {
				t.Fatalf("GetOptions of %s without settings = %+v, %v; want ErrNotImplemented", gid, o, err)
			}
		}
	}

	problems := seeded.Status(k.ctx()).SettingProblems
	if len(problems) != 1 || !slices.Contains([]string{groupconfig.OptionKey(groupconfig.OptionMaxNodeProvisionTime), groupconfig.NodeLabelOptionKey(groupconfig.OptionMaxNodeProvisionTime)}, problems[0].Key) {
		t.Fatalf("reported problems %v, want exactly the malformed maxnodeprovisiontime", problems)
	}

	node, err := seeded.TemplateNodeInfo(k.ctx())
	k.must(err, "TemplateNodeInfo of the seeded group "+id)
	if node.Labels["conformance.example.com/team"] != "kit" {
		t.Errorf("template labels %v lack the hinted conformance.example.com/team=kit", node.Labels)
	}
	if node.Labels[corev1.LabelArchStable] == "plan9" {
		t.Errorf("a hinted %s overrode the well-known label", corev1.LabelArchStable)
	}
	if v, ok := node.Labels[problems[0].Key]; ok {
		t.Errorf("template label %s=%q: the malformed entry must be ignored, not copied into the template", problems[0].Key, v)
	}
	if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&seed.Taints[0]) && t.Value == "kit" }) {
		t.Errorf("template taints %v lack the hinted %v", node.Spec.Taints, seed.Taints[0])
	}
	for _, list := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
		if q, ok := list["example.com/dongle"]; !ok || q.Value() != 3 {
			t.Errorf("template resources %v lack the hinted example.com/dongle=3", list)
		}
	}
	if _, err := node.Marshal(); err != nil {
		t.Fatalf("template with hints does not marshal: %v", err)
	}

	if !k.optional(HookServeConn) {
		return
	}
	checkSettingsOverGRPC(t, k, h.ServeConn(t, k.env.Provider), id, want, hasOptions)
}

// checkSettingsOverGRPC asks NodeGroupGetOptions of every group as a current
// and as a CA 1.34.1 client would, on one connection.
func checkSettingsOverGRPC(t *testing.T, k *kit, conn grpc.ClientConnInterface, seededID string, want cloudprovider.NodeGroupAutoscalingOptions, hasOptions map[string]bool) {
	cur, old := protos.NewCloudProviderClient(conn), legacyca.NewClient(conn)
	d := kitDefaults()
	curDefaults := &protos.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold: d.ScaleDownUtilizationThreshold, ScaleDownGpuUtilizationThreshold: d.ScaleDownGpuUtilizationThreshold,
		ScaleDownUnneededDuration: durationpb.New(d.ScaleDownUnneededTime), ScaleDownUnreadyDuration: durationpb.New(d.ScaleDownUnreadyTime),
		MaxNodeProvisionDuration: durationpb.New(d.MaxNodeProvisionTime), ZeroOrMaxNodeScaling: d.ZeroOrMaxNodeScaling,
	}
	oldDefaults := &legacyca.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold: d.ScaleDownUtilizationThreshold, ScaleDownGpuUtilizationThreshold: d.ScaleDownGpuUtilizationThreshold,
		ScaleDownUnneededTime: legacyca.NewDuration(d.ScaleDownUnneededTime), ScaleDownUnreadyTime: legacyca.NewDuration(d.ScaleDownUnreadyTime),
		MaxNodeProvisionTime: legacyca.NewDuration(d.MaxNodeProvisionTime),
	}
	for _, g := range k.groups() {
		id := g.Id(k.ctx())
		if hasOptions[id] {
			continue
		}
		c, cerr := cur.NodeGroupGetOptions(k.ctx(), &protos.NodeGroupAutoscalingOptionsRequest{Id: id, Defaults: curDefaults})
		o, oerr := old.NodeGroupGetOptions(k.ctx(), &legacyca.NodeGroupAutoscalingOptionsRequest{Id: id, Defaults: oldDefaults})
		if id != seededID {
			if status.Code(cerr) != codes.Unimplemented || status.Code(oerr) != codes.Unimplemented {
				t.Fatalf("GetOptions of %s without settings: current CA %v, CA 1.34.1 %v; want Unimplemented for both", id, cerr, oerr)
			}
			continue
		}
		if cerr != nil || oerr != nil {
			t.Fatalf("GetOptions of %s: current CA %v, CA 1.34.1 %v", id, cerr, oerr)
		}
		co := c.GetNodeGroupAutoscalingOptions()
		gotCur := cloudprovider.NodeGroupAutoscalingOptions{
			ScaleDownUtilizationThreshold: co.GetScaleDownUtilizationThreshold(), ScaleDownGpuUtilizationThreshold: co.GetScaleDownGpuUtilizationThreshold(),
			ScaleDownUnneededTime: co.GetScaleDownUnneededDuration().AsDuration(), ScaleDownUnreadyTime: co.GetScaleDownUnreadyDuration().AsDuration(),
			MaxNodeProvisionTime: co.GetMaxNodeProvisionDuration().AsDuration(), ZeroOrMaxNodeScaling: co.GetZeroOrMaxNodeScaling(),
			IgnoreDaemonSetsUtilization: co.GetIgnoreDaemonSetsUtilization(),
		}
		if gotCur != want {
			t.Fatalf("GetOptions of %s for a current CA = %+v\nwant %+v", id, gotCur, want)
		}
		// CA 1.34.1 reads the thresholds and the legacy durations only.
		oo := o.GetNodeGroupAutoscalingOptions()
		gotOld := [5]float64{oo.GetScaleDownUtilizationThreshold(), oo.GetScaleDownGpuUtilizationThreshold(),
			float64(oo.GetScaleDownUnneededTime().GetDuration()), float64(oo.GetScaleDownUnreadyTime().GetDuration()), float64(oo.GetMaxNodeProvisionTime().GetDuration())}
		wantOld := [5]float64{want.ScaleDownUtilizationThreshold, want.ScaleDownGpuUtilizationThreshold,
			float64(want.ScaleDownUnneededTime), float64(want.ScaleDownUnreadyTime), float64(want.MaxNodeProvisionTime)}
		if gotOld != wantOld {
			t.Fatalf("GetOptions of %s for CA 1.34.1 = %v, want %v", id, gotOld, wantOld)
		}
	}
}

// groupWithTemplate returns the first group whose template builds and
// that has no options of its own (Env.OptionsGroups).
func (k *kit) groupWithTemplate() cloudprovider.NodeGroup {
	k.t.Helper()
	for _, g := range k.groups() {
		if slices.Contains(k.env.OptionsGroups, g.Id(k.ctx())) {
			continue
		}
		if n, err := g.TemplateNodeInfo(k.ctx()); err == nil && n != nil {
			return g
		}
	}
	k.t.Fatal("no node group outside Env.OptionsGroups has a template; the seed must have one")
	return nil
}
