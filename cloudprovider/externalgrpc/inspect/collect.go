package inspect

import (
	"context"
	"fmt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// Report is what CA would see of the server at one moment.
type Report struct {
	// Server is the address that was asked.
	Server string `json:"server"`
	// RefreshError is set when the Refresh sent first failed. CA would abort
	// its loop on it; the server still answers from its last good snapshot,
	// which is what the rest of the report shows.
	RefreshError string `json:"refreshError,omitempty"`
	// MaxStaleness is the oldest data the server serves (its --max-staleness),
	// "" when the server does not say.
	MaxStaleness string `json:"maxStaleness,omitempty"`
	// GPULabel is the label key marking GPU nodes ("" if the provider has none).
	GPULabel string `json:"gpuLabel"`
	// GPUTypes are the keys of GetAvailableGPUTypes (all CA reads of it).
	GPUTypes []string `json:"gpuTypes"`
	// Groups are the node groups in the order the server listed them.
	Groups []Group `json:"groups"`
}

// Group is one node group with everything CA asks about it.
type Group struct {
	ID     string `json:"id"`
	Min    int    `json:"min"`
	Max    int    `json:"max"`
	Target int    `json:"target"`
	Debug  string `json:"debug,omitempty"`
	// Managed is why the server manages the group (cluster, --nodes,
	// discovery, learnt) and ManagedDetail what chose it, both read from the
	// end of Debug (cloudprovider.WithManaged); empty when the server does
	// not say.
	Managed       string `json:"managed,omitempty"`
	ManagedDetail string `json:"managedDetail,omitempty"`
	// Instances come from NodeGroupNodes.
	Instances []Instance `json:"instances"`
	// Template is the scale-from-zero node, nil when the server has none.
	Template *Template `json:"template,omitempty"`
	// TemplateNote says why there is no template (Unimplemented: CA cannot
	// scale the group from zero).
	TemplateNote string `json:"templateNote,omitempty"`
	// PricePerHour is PricingNodePrice of the template node for one hour, as
	// CA's price expander asks it; nil when not priced (see PriceNote).
	PricePerHour *float64 `json:"pricePerHour,omitempty"`
	PriceNote    string   `json:"priceNote,omitempty"`
	// Options are the group's overrides, nil when CA's defaults apply.
	Options *Options `json:"options,omitempty"`
	// OptionsNote says why there are no overrides or what failed.
	OptionsNote string `json:"optionsNote,omitempty"`
	// Errors lists calls about this group that failed; CA would abort its
	// loop on a failed TargetSize or Nodes.
	Errors []string `json:"errors,omitempty"`
	// Compatibility lists answers that one generation of CA would miss: the
	// server filled only the fields of CA 1.34.1 and older, or only those of
	// CA 1.35 and later (ours fills both).
	Compatibility []string `json:"compatibility,omitempty"`
}

// Instance is one entry of NodeGroupNodes, read the way CA reads it.
type Instance struct {
	// ProviderID is the instance id, which must equal the Node's spec.providerID.
	ProviderID string `json:"providerID"`
	// State is running, creating, deleting or unspecified (CA: no status).
	State string `json:"state"`
	// ErrorCode, ErrorMessage and ErrorClass are set only when CA would see
	// error info: state set and a non-empty code.
	ErrorCode    string `json:"errorCode,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	ErrorClass   int32  `json:"errorClass,omitempty"`
}

// Template is the part of the template node CA's scheduler simulation uses.
type Template struct {
	Name        string            `json:"name,omitempty"`
	Capacity    map[string]string `json:"capacity"`
	Allocatable map[string]string `json:"allocatable"`
	Labels      map[string]string `json:"labels"`
	Taints      []string          `json:"taints"`
	Ready       bool              `json:"ready"`
	// Hints are the labels, taints and resources the provider merged in from
	// the group's per-group settings, and where they came from (our
	// provider's template-hints annotation; empty for other servers).
	Hints string `json:"hints,omitempty"`
}

// Options are per-group overrides as returned by NodeGroupGetOptions.
type Options struct {
	ScaleDownUtilizationThreshold    float64 `json:"scaleDownUtilizationThreshold"`
	ScaleDownGpuUtilizationThreshold float64 `json:"scaleDownGpuUtilizationThreshold"`
	ZeroOrMaxNodeScaling             bool    `json:"zeroOrMaxNodeScaling"`
	IgnoreDaemonSetsUtilization      bool    `json:"ignoreDaemonSetsUtilization"`
	ScaleDownUnneededTime            string  `json:"scaleDownUnneededTime"`
	ScaleDownUnreadyTime             string  `json:"scaleDownUnreadyTime"`
	MaxNodeProvisionTime             string  `json:"maxNodeProvisionTime"`
	// Overrides lists the options that differ from the defaults sent, as
	// "<option>=<value> (default <default>)" with CA's option keys.
	Overrides []string `json:"overrides"`
}

// client issues each call with its own deadline, as CA does.
type client struct {
	api     protos.CloudProviderClient
	timeout time.Duration
}

func (c client) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// refresh asks the server to re-read the cloud. It changes nothing in the
// cloud; CA sends it before every loop.
func (c client) refresh(ctx context.Context) error {
	cctx, cancel := c.call(ctx)
	defer cancel()
	if _, err := c.api.Refresh(cctx, &protos.RefreshRequest{}); err != nil {
		return fmt.Errorf("refresh the server: %w", err)
	}
	return nil
}

// collect reads everything CA reads, in CA's order: the group list and GPU
// label first, then per group its target, instances, template and options.
// Failures of the group list are fatal (CA would see no groups); failures of
// per-group calls are recorded on the group, so one broken group does not
// hide the others.
func (c client) collect(ctx context.Context, server string, only []string) (*Report, error) {
	r := &Report{Server: server, GPUTypes: []string{}, Groups: []Group{}}
	cctx, cancel := c.call(ctx)
	var header metadata.MD
	groups, err := c.api.NodeGroups(cctx, &protos.NodeGroupsRequest{}, grpc.Header(&header))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("NodeGroups: %w", err)
	}
	if v := header.Get(maxStalenessHeader); len(v) > 0 {
		r.MaxStaleness = v[0]
	}
	cctx, cancel = c.call(ctx)
	label, err := c.api.GPULabel(cctx, &protos.GPULabelRequest{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("GPULabel: %w", err)
	}
	r.GPULabel = label.GetLabel()
	cctx, cancel = c.call(ctx)
	types, err := c.api.GetAvailableGPUTypes(cctx, &protos.GetAvailableGPUTypesRequest{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("GetAvailableGPUTypes: %w", err)
	}
	for k := range types.GetGpuTypes() {
		r.GPUTypes = append(r.GPUTypes, k)
	}
	sort.Strings(r.GPUTypes)

	want := map[string]bool{}
	for _, id := range only {
		want[id] = true
	}
	found := map[string]bool{}
	for _, pg := range groups.GetNodeGroups() {
		if len(want) > 0 && !want[pg.GetId()] {
			continue
		}
		found[pg.GetId()] = true
		r.Groups = append(r.Groups, c.group(ctx, pg))
	}
	for _, id := range only {
		if !found[id] {
			return nil, fmt.Errorf("node group %q is not served (NodeGroups lists %s)", id, groupIDs(groups.GetNodeGroups()))
		}
	}
	return r, nil
}

// maxStalenessHeader is externalgrpc.MaxStalenessHeader (inspect does not
// import the server).
const maxStalenessHeader = "x-cap-max-staleness"

func groupIDs(gs []*protos.NodeGroup) string {
	if len(gs) == 0 {
		return "no groups"
	}
	ids := make([]string, len(gs))
	for i, g := range gs {
		ids[i] = g.GetId()
	}
	return strings.Join(ids, ", ")
}

func (c client) group(ctx context.Context, pg *protos.NodeGroup) Group {
	g := Group{ID: pg.GetId(), Min: int(pg.GetMinSize()), Max: int(pg.GetMaxSize()), Debug: pg.GetDebug(), Instances: []Instance{}}
	if m, ok := cloudprovider.ManagementFromDebug(g.Debug); ok {
		g.Managed, g.ManagedDetail = string(m.By), m.Detail
	}
	id := pg.GetId()

	cctx, cancel := c.call(ctx)
	ts, err := c.api.NodeGroupTargetSize(cctx, &protos.NodeGroupTargetSizeRequest{Id: id})
	cancel()
	if err != nil {
		g.Errors = append(g.Errors, "NodeGroupTargetSize: "+describe(err))
	}
	g.Target = int(ts.GetTargetSize())

	cctx, cancel = c.call(ctx)
	nodes, err := c.api.NodeGroupNodes(cctx, &protos.NodeGroupNodesRequest{Id: id})
	cancel()
	if err != nil {
		g.Errors = append(g.Errors, "NodeGroupNodes: "+describe(err))
	}
	for _, in := range nodes.GetInstances() {
		g.Instances = append(g.Instances, instance(in))
	}

	cctx, cancel = c.call(ctx)
	tmpl, err := c.api.NodeGroupTemplateNodeInfo(cctx, &protos.NodeGroupTemplateNodeInfoRequest{Id: id})
	cancel()
	nodeBytes, warnings := templateBytes(tmpl)
	switch {
	case status.Code(err) == codes.Unimplemented:
		g.TemplateNote = "none (Unimplemented): CA cannot scale this group up from zero"
	case err != nil:
		g.TemplateNote = "error: " + describe(err)
		g.Errors = append(g.Errors, "NodeGroupTemplateNodeInfo: "+describe(err))
	case len(nodeBytes) == 0:
		// CA caches an empty answer as "no template" and later dereferences it.
		g.TemplateNote = "empty nodeBytes with OK: CA would crash on this group; the server must answer Unimplemented"
		g.Errors = append(g.Errors, "NodeGroupTemplateNodeInfo: OK with empty nodeBytes")
	default:
		g.Compatibility = append(g.Compatibility, warnings...)
		t, err := template(nodeBytes)
		if err != nil {
			g.TemplateNote = "undecodable: " + err.Error()
			g.Errors = append(g.Errors, "NodeGroupTemplateNodeInfo: "+err.Error())
		}
		g.Template = t
	}
	if g.Template != nil {
		c.price(ctx, &g)
	} else {
		g.PriceNote = "no template to price"
	}

	cctx, cancel = c.call(ctx)
	opts, err := c.api.NodeGroupGetOptions(cctx, &protos.NodeGroupAutoscalingOptionsRequest{Id: id, Defaults: caDefaults()})
	cancel()
	switch {
	case status.Code(err) == codes.Unimplemented, err == nil && opts.GetNodeGroupAutoscalingOptions() == nil:
		g.OptionsNote = "CA defaults (no override)"
	case err != nil:
		// CA treats any other error as a broken group (scale-down aborted).
		g.OptionsNote = "error: " + describe(err)
		g.Errors = append(g.Errors, "NodeGroupGetOptions: "+describe(err))
	default:
		var warnings []string
		g.Options, warnings = options(opts.GetNodeGroupAutoscalingOptions())
		g.Compatibility = append(g.Compatibility, warnings...)
		g.OptionsNote = "overridden (CA also sets max-node-startup-time to 0 for this group)"
	}
	return g
}

// price asks PricingNodePrice for the template node over one hour, the way
// CA's price expander prices a scale-up option: by the template's labels, as
// a template has no providerID.
func (c client) price(ctx context.Context, g *Group) {
	name := g.Template.Name
	if name == "" {
		name = "template-node-for-" + g.ID
	}
	start := time.Now()
	cctx, cancel := c.call(ctx)
	defer cancel()
	resp, err := c.api.PricingNodePrice(cctx, nodePriceRequest(
		&protos.ExternalGrpcNode{Name: name, Labels: g.Template.Labels, Annotations: map[string]string{}},
		start, start.Add(time.Hour)))
	switch {
	case status.Code(err) == codes.Unimplemented:
		g.PriceNote = "not implemented: CA's price expander skips this provider"
	case err != nil:
		// CA skips the option; it is not a broken group.
		g.PriceNote = "error: " + describe(err)
	default:
		p := resp.GetPrice()
		g.PricePerHour = &p
	}
}

// describe prints a gRPC error as "Code: message".
func describe(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	return fmt.Sprintf("%s: %s", st.Code(), st.Message())
}

// instance applies CA's reading rules: no state means no status, and error
// info counts only with a state and a non-empty code.
func instance(in *protos.Instance) Instance {
	out := Instance{ProviderID: in.GetId(), State: "unspecified"}
	st := in.GetStatus()
	if st == nil || st.GetInstanceState() == protos.InstanceStatus_unspecified {
		return out
	}
	switch st.GetInstanceState() {
	case protos.InstanceStatus_instanceRunning:
		out.State = "running"
	case protos.InstanceStatus_instanceCreating:
		out.State = "creating"
	case protos.InstanceStatus_instanceDeleting:
		out.State = "deleting"
	default:
		out.State = fmt.Sprintf("state(%d)", st.GetInstanceState())
	}
	if e := st.GetErrorInfo(); e != nil && e.GetErrorCode() != "" {
		out.ErrorCode, out.ErrorMessage, out.ErrorClass = e.GetErrorCode(), e.GetErrorMessage(), e.GetInstanceErrorClass()
	}
	return out
}

// template decodes nodeBytes exactly as CA does: raw protobuf of a core/v1 Node.
func template(b []byte) (*Template, error) {
	var n corev1.Node
	if err := n.Unmarshal(b); err != nil {
		return nil, fmt.Errorf("nodeBytes is not a protobuf core/v1 Node: %w", err)
	}
	t := &Template{
		Name:        n.Name,
		Capacity:    quantities(n.Status.Capacity),
		Allocatable: quantities(n.Status.Allocatable),
		Labels:      n.Labels,
		Taints:      []string{},
		Hints:       n.Annotations[groupconfig.HintsAnnotation],
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, taint := range n.Spec.Taints {
		s := taint.Key
		if taint.Value != "" {
			s += "=" + taint.Value
		}
		t.Taints = append(t.Taints, s+":"+string(taint.Effect))
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			t.Ready = true
		}
	}
	return t, nil
}

func quantities(l corev1.ResourceList) map[string]string {
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[string(k)] = v.String()
	}
	return out
}

func options(o *protos.NodeGroupAutoscalingOptions) (*Options, []string) {
	unneeded, unready, provision, warnings := optionDurations(o)
	d := caDefaults()
	var overrides []string
	differs := func(name string, got, def any) {
		if got != def {
			overrides = append(overrides, fmt.Sprintf("%s=%v (default %v)", name, got, def))
		}
	}
	differs(groupconfig.OptionScaleDownUtilizationThreshold, o.GetScaleDownUtilizationThreshold(), d.GetScaleDownUtilizationThreshold())
	differs(groupconfig.OptionScaleDownGpuUtilizationThreshold, o.GetScaleDownGpuUtilizationThreshold(), d.GetScaleDownGpuUtilizationThreshold())
	differs(groupconfig.OptionScaleDownUnneededTime, unneeded, d.GetScaleDownUnneededDuration().AsDuration())
	differs(groupconfig.OptionScaleDownUnreadyTime, unready, d.GetScaleDownUnreadyDuration().AsDuration())
	differs(groupconfig.OptionMaxNodeProvisionTime, provision, d.GetMaxNodeProvisionDuration().AsDuration())
	differs(groupconfig.OptionIgnoreDaemonSetsUtilization, o.GetIgnoreDaemonSetsUtilization(), d.GetIgnoreDaemonSetsUtilization())
	differs("zeroormaxnodescaling", o.GetZeroOrMaxNodeScaling(), d.GetZeroOrMaxNodeScaling())
	if overrides == nil {
		overrides = []string{}
	}
	return &Options{
		ScaleDownUtilizationThreshold:    o.GetScaleDownUtilizationThreshold(),
		ScaleDownGpuUtilizationThreshold: o.GetScaleDownGpuUtilizationThreshold(),
		ZeroOrMaxNodeScaling:             o.GetZeroOrMaxNodeScaling(),
		IgnoreDaemonSetsUtilization:      o.GetIgnoreDaemonSetsUtilization(),
		ScaleDownUnneededTime:            unneeded.String(),
		ScaleDownUnreadyTime:             unready.String(),
		MaxNodeProvisionTime:             provision.String(),
		Overrides:                        overrides,
	}, warnings
}
