package groupconfig

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// Per-group settings read from a group's cloud metadata (tags or labels).
//
// Two spellings are read. The AWS spelling is the one CA's AWS provider reads
// from Auto Scaling group tags, so users' habits carry over; it is for
// metadata that stays in the cloud (Volcengine scaling-group tags, Exoscale
// plain instance-pool labels). Its keys have several slashes, so they are not
// valid Kubernetes label keys. Metadata that the cloud also copies to the
// nodes as labels (Vultr node-pool labels, Exoscale SKS nodepool labels) uses
// the node-label spelling instead: valid label keys under our own domain,
// with valid label values. Label and taint hints have no node-label
// spelling: such pools carry their own labels and taints, which the template
// already shows.
const (
	// SettingsKeyPrefix starts every key of the AWS spelling.
	SettingsKeyPrefix = "k8s.io/cluster-autoscaler/node-template/"
	// OptionKeyPrefix + option name overrides one autoscaling option.
	OptionKeyPrefix = SettingsKeyPrefix + "autoscaling-options/"
	// LabelHintKeyPrefix + label key adds a label to the group's template.
	LabelHintKeyPrefix = SettingsKeyPrefix + "label/"
	// TaintHintKeyPrefix + taint key adds a taint ("value:Effect") to the template.
	TaintHintKeyPrefix = SettingsKeyPrefix + "taint/"
	// ResourceHintKeyPrefix + resource name adds a resource quantity to the template.
	ResourceHintKeyPrefix = SettingsKeyPrefix + "resources/"

	// NodeLabelOptionPrefix + option name is the node-label spelling of an option
	// override, e.g. autoscaling-options.autoscaler.ca-providers.io/scaledownunneededtime=5m.
	NodeLabelOptionPrefix = "autoscaling-options.autoscaler.ca-providers.io/"
	// NodeLabelResourceDomain is the key prefix of the node-label spelling of a
	// resource hint: resources.autoscaler.ca-providers.io/<name> for a resource
	// without a domain, and <domain>.resources.autoscaler.ca-providers.io/<name>
	// for <domain>/<name> (a label key has a single slash), e.g.
	// nvidia.com.resources.autoscaler.ca-providers.io/gpu=1.
	NodeLabelResourceDomain = "resources.autoscaler.ca-providers.io"
)

// The option names of the AWS spelling (CA's own lower-case option keys).
const (
	OptionScaleDownUtilizationThreshold    = "scaledownutilizationthreshold"
	OptionScaleDownGpuUtilizationThreshold = "scaledowngpuutilizationthreshold"
	OptionScaleDownUnneededTime            = "scaledownunneededtime"
	OptionScaleDownUnreadyTime             = "scaledownunreadytime"
	OptionMaxNodeProvisionTime             = "maxnodeprovisiontime"
	OptionIgnoreDaemonSetsUtilization      = "ignoredaemonsetsutilization"
)

// OptionNames lists the option names a group can override, in display order.
var OptionNames = []string{
	OptionScaleDownUtilizationThreshold, OptionScaleDownGpuUtilizationThreshold,
	OptionScaleDownUnneededTime, OptionScaleDownUnreadyTime, OptionMaxNodeProvisionTime,
	OptionIgnoreDaemonSetsUtilization,
}

// OptionKey returns the AWS-spelling key of option.
func OptionKey(option string) string { return OptionKeyPrefix + option }

// NodeLabelOptionKey returns the node-label-spelling key of option.
func NodeLabelOptionKey(option string) string { return NodeLabelOptionPrefix + option }

// ResourceHintKey returns the AWS-spelling key of a resource hint.
func ResourceHintKey(name corev1.ResourceName) string { return ResourceHintKeyPrefix + string(name) }

// NodeLabelResourceKey returns the node-label-spelling key of a resource hint.
func NodeLabelResourceKey(name corev1.ResourceName) string {
	if domain, short, ok := strings.Cut(string(name), "/"); ok {
		return domain + "." + NodeLabelResourceDomain + "/" + short
	}
	return NodeLabelResourceDomain + "/" + string(name)
}

// LabelHintKey returns the key of a label hint.
func LabelHintKey(label string) string { return LabelHintKeyPrefix + label }

// TaintHintKey returns the key of a taint hint; TaintHintValue its value.
func TaintHintKey(taintKey string) string { return TaintHintKeyPrefix + taintKey }

// TaintHintValue returns the "value:Effect" value of a taint hint.
func TaintHintValue(t corev1.Taint) string { return t.Value + ":" + string(t.Effect) }

// OptionOverrides are the options a group overrides; nil fields keep CA's value.
type OptionOverrides struct {
	ScaleDownUtilizationThreshold    *float64
	ScaleDownGpuUtilizationThreshold *float64
	ScaleDownUnneededTime            *time.Duration
	ScaleDownUnreadyTime             *time.Duration
	MaxNodeProvisionTime             *time.Duration
	IgnoreDaemonSetsUtilization      *bool
}

// Empty reports whether no option is overridden.
func (o OptionOverrides) Empty() bool { return len(o.pairs()) == 0 }

// Apply returns defaults with the overridden options replaced. The two options
// the protocol carries but no key sets (ZeroOrMaxNodeScaling) keep the defaults.
func (o OptionOverrides) Apply(defaults cloudprovider.NodeGroupAutoscalingOptions) cloudprovider.NodeGroupAutoscalingOptions {
	out := defaults
	if o.ScaleDownUtilizationThreshold != nil {
		out.ScaleDownUtilizationThreshold = *o.ScaleDownUtilizationThreshold
	}
	if o.ScaleDownGpuUtilizationThreshold != nil {
		out.ScaleDownGpuUtilizationThreshold = *o.ScaleDownGpuUtilizationThreshold
	}
	if o.ScaleDownUnneededTime != nil {
		out.ScaleDownUnneededTime = *o.ScaleDownUnneededTime
	}
	if o.ScaleDownUnreadyTime != nil {
		out.ScaleDownUnreadyTime = *o.ScaleDownUnreadyTime
	}
	if o.MaxNodeProvisionTime != nil {
		out.MaxNodeProvisionTime = *o.MaxNodeProvisionTime
	}
	if o.IgnoreDaemonSetsUtilization != nil {
		out.IgnoreDaemonSetsUtilization = *o.IgnoreDaemonSetsUtilization
	}
	return out
}

// pairs lists the overridden options as name=value in OptionNames order.
func (o OptionOverrides) pairs() []string {
	var out []string
	add := func(name string, set bool, value func() string) {
		if set {
			out = append(out, name+"="+value())
		}
	}
	add(OptionScaleDownUtilizationThreshold, o.ScaleDownUtilizationThreshold != nil, func() string { return formatFloat(*o.ScaleDownUtilizationThreshold) })
	add(OptionScaleDownGpuUtilizationThreshold, o.ScaleDownGpuUtilizationThreshold != nil, func() string { return formatFloat(*o.ScaleDownGpuUtilizationThreshold) })
	add(OptionScaleDownUnneededTime, o.ScaleDownUnneededTime != nil, func() string { return o.ScaleDownUnneededTime.String() })
	add(OptionScaleDownUnreadyTime, o.ScaleDownUnreadyTime != nil, func() string { return o.ScaleDownUnreadyTime.String() })
	add(OptionMaxNodeProvisionTime, o.MaxNodeProvisionTime != nil, func() string { return o.MaxNodeProvisionTime.String() })
	add(OptionIgnoreDaemonSetsUtilization, o.IgnoreDaemonSetsUtilization != nil, func() string { return strconv.FormatBool(*o.IgnoreDaemonSetsUtilization) })
	return out
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Empty reports whether there is no hint.
func (h TemplateHints) Empty() bool {
	return len(h.Labels) == 0 && len(h.Taints) == 0 && len(h.Resources) == 0
}

// pairs lists the hints as label/k=v, taint/k=v:Effect and resources/name=q, sorted.
func (h TemplateHints) pairs() []string {
	var out []string
	for k, v := range h.Labels {
		out = append(out, "label/"+k+"="+v)
	}
	for _, t := range h.Taints {
		out = append(out, "taint/"+t.Key+"="+TaintHintValue(t))
	}
	for name, q := range h.Resources {
		out = append(out, "resources/"+string(name)+"="+q.String())
	}
	sort.Strings(out)
	return out
}

// GroupSettings are one group's settings as read from its cloud metadata.
// Bad entries never fail the group: they are listed in Problems and ignored.
type GroupSettings struct {
	// Source says where the settings were read, e.g. "scaling-group tags".
	Source   string
	Options  OptionOverrides
	Hints    TemplateHints
	Problems []cloudprovider.SettingProblem
}

// Status is the settings' part of NodeGroup.Status: where they were read,
// their summary and their problems.
func (s GroupSettings) Status() cloudprovider.GroupStatus {
	return cloudprovider.GroupStatus{SettingsSource: s.Source, Settings: s.Summary(), SettingProblems: s.Problems}
}

// GetOptions is NodeGroup.GetOptions for a group with these settings: the
// overrides on top of defaults, or ErrNotImplemented when the group overrides
// nothing (any answer makes CA zero the options the protocol cannot carry).
func (s GroupSettings) GetOptions(defaults cloudprovider.NodeGroupAutoscalingOptions) (*cloudprovider.NodeGroupAutoscalingOptions, error) {
	if s.Options.Empty() {
		return nil, cloudprovider.Errorf(cloudprovider.ErrNotImplemented, "no option overrides in the %s", s.source())
	}
	out := s.Options.Apply(defaults)
	return &out, nil
}

func (s GroupSettings) source() string {
	if s.Source == "" {
		return "group's metadata"
	}
	return s.Source
}

// Summary is a one-line account of the settings and where they came from,
// for a group's Debug string and logs; "" when there is nothing to say.
func (s GroupSettings) Summary() string {
	opts, hints := s.Options.pairs(), s.Hints.pairs()
	if len(opts) == 0 && len(hints) == 0 && len(s.Problems) == 0 {
		return ""
	}
	var parts []string
	if len(opts) > 0 {
		parts = append(parts, "options "+strings.Join(opts, ","))
	}
	if len(hints) > 0 {
		parts = append(parts, "hints "+strings.Join(hints, ","))
	}
	if n := len(s.Problems); n > 0 {
		parts = append(parts, fmt.Sprintf("%d bad %s ignored", n, plural(n, "entry", "entries")))
	}
	return "from " + s.source() + ": " + strings.Join(parts, "; ")
}

// malformed reports whether key is the key of an entry reported in Problems.
func (s GroupSettings) malformed(key string) bool {
	for _, p := range s.Problems {
		if p.Key == key {
			return true
		}
	}
	return false
}

// HintsSummary is a one-line account of the template hints and their source,
// "" without hints. Templates carry it in the HintsAnnotation.
func (s GroupSettings) HintsSummary() string {
	hints := s.Hints.pairs()
	if len(hints) == 0 {
		return ""
	}
	return strings.Join(hints, ",") + " (from " + s.source() + ")"
}

// HintsAnnotation is the template-node annotation that lists the hints merged
// into a template and their source, for inspect and for people reading CA's
// templates. CA ignores annotations of template nodes.
const HintsAnnotation = "autoscaler.ca-providers.io/template-hints"

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ParseGroupSettings reads the settings in metadata (a group's tags or
// labels) and skips entries that are not settings. source names where
// metadata came from, for messages. Entries are read in key order, so the
// result does not depend on map order.
func ParseGroupSettings(source string, metadata map[string]string) GroupSettings {
	s := GroupSettings{Source: source}
	keys := make([]string, 0, len(metadata))
	for k := range metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	// An option given twice (both spellings) with different values is ambiguous;
	// it is reported and ignored rather than picking one.
	type seen struct{ key, value string }
	options := map[string][]seen{}
	resources := resourceSeen{}
	for _, key := range keys {
		value := metadata[key]
		bad := func(reason string, args ...any) {
			s.Problems = append(s.Problems, cloudprovider.SettingProblem{Key: key, Value: value, Reason: fmt.Sprintf(reason, args...)})
		}
		switch {
		case strings.HasPrefix(key, OptionKeyPrefix):
			name := strings.TrimPrefix(key, OptionKeyPrefix)
			options[name] = append(options[name], seen{key, value})
		case strings.HasPrefix(key, NodeLabelOptionPrefix):
			name := strings.TrimPrefix(key, NodeLabelOptionPrefix)
			options[name] = append(options[name], seen{key, value})
		case strings.HasPrefix(key, LabelHintKeyPrefix):
			label := strings.TrimPrefix(key, LabelHintKeyPrefix)
			if errs := validation.IsQualifiedName(label); len(errs) > 0 {
				bad("label key %q is not a valid Kubernetes label key: %s", label, strings.Join(errs, "; "))
				continue
			}
			if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
				bad("not a valid Kubernetes label value: %s", strings.Join(errs, "; "))
				continue
			}
			if s.Hints.Labels == nil {
				s.Hints.Labels = map[string]string{}
			}
			s.Hints.Labels[label] = value
		case strings.HasPrefix(key, TaintHintKeyPrefix):
			t, reason := parseTaintHint(strings.TrimPrefix(key, TaintHintKeyPrefix), value)
			if reason != "" {
				bad("%s", reason)
				continue
			}
			s.Hints.Taints = append(s.Hints.Taints, t)
		case strings.HasPrefix(key, ResourceHintKeyPrefix):
			s.addResource(strings.TrimPrefix(key, ResourceHintKeyPrefix), key, value, resources, bad)
		default:
			if name, ok := nodeLabelResourceName(key); ok {
				s.addResource(name, key, value, resources, bad)
			}
		}
	}

	names := make([]string, 0, len(options))
	for name := range options {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		given := options[name]
		conflict := false
		for _, g := range given[1:] {
			if g.value != given[0].value {
				conflict = true
			}
		}
		if conflict {
			for _, g := range given {
				s.Problems = append(s.Problems, cloudprovider.SettingProblem{Key: g.key, Value: g.value, Reason: "option " + name + " is set more than once with different values; none is used"})
			}
			continue
		}
		if reason := s.Options.set(name, given[0].value); reason != "" {
			s.Problems = append(s.Problems, cloudprovider.SettingProblem{Key: given[0].key, Value: given[0].value, Reason: reason})
		}
	}
	sort.SliceStable(s.Problems, func(i, j int) bool { return s.Problems[i].Key < s.Problems[j].Key })
	return s
}

// nodeLabelResourceName reads a node-label-spelling resource key.
func nodeLabelResourceName(key string) (string, bool) {
	prefix, name, ok := strings.Cut(key, "/")
	if !ok {
		return "", false
	}
	if prefix == NodeLabelResourceDomain {
		return name, true
	}
	if domain, found := strings.CutSuffix(prefix, "."+NodeLabelResourceDomain); found && domain != "" {
		return domain + "/" + name, true
	}
	return "", false
}

// resourceSeen remembers, per resource hint, the entry that set it, so a
// resource given twice with different values can be reported on both
// entries; as for options, neither value is used.
type resourceSeen map[corev1.ResourceName]*cloudprovider.SettingProblem

// addResource adds one resource hint from entry key=value.
func (s *GroupSettings) addResource(name, key, value string, seen resourceSeen, bad func(string, ...any)) {
	if errs := validation.IsQualifiedName(name); len(errs) > 0 {
		bad("resource name %q is not valid: %s", name, strings.Join(errs, "; "))
		return
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(value))
	if err != nil {
		bad("not a quantity (like 2, 500m or 16Gi)")
		return
	}
	if q.Sign() < 0 {
		bad("a resource quantity cannot be negative")
		return
	}
	if s.Hints.Resources == nil {
		s.Hints.Resources = corev1.ResourceList{}
	}
	rn := corev1.ResourceName(name)
	first, dup := seen[rn]
	if !dup {
		seen[rn] = &cloudprovider.SettingProblem{Key: key, Value: value}
		s.Hints.Resources[rn] = q
		return
	}
	if prev, ok := s.Hints.Resources[rn]; ok && prev.Cmp(q) == 0 {
		return
	}
	reason := fmt.Sprintf("resource %s is set more than once with different values; none is used", name)
	if _, ok := s.Hints.Resources[rn]; ok {
		delete(s.Hints.Resources, rn)
		first.Reason = reason
		s.Problems = append(s.Problems, *first)
	}
	bad("%s", reason)
}

// parseTaintHint reads a taint hint: "value:Effect", value possibly empty.
func parseTaintHint(taintKey, value string) (corev1.Taint, string) {
	if errs := validation.IsQualifiedName(taintKey); len(errs) > 0 {
		return corev1.Taint{}, fmt.Sprintf("taint key %q is not valid: %s", taintKey, strings.Join(errs, "; "))
	}
	v, effect, ok := strings.Cut(value, ":")
	if !ok {
		return corev1.Taint{}, "a taint hint is value:Effect (value may be empty), e.g. gpu:NoSchedule"
	}
	switch e := corev1.TaintEffect(effect); e {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return corev1.Taint{}, fmt.Sprintf("taint effect %q is not NoSchedule, PreferNoSchedule or NoExecute", effect)
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return corev1.Taint{}, fmt.Sprintf("taint value %q is not valid: %s", v, strings.Join(errs, "; "))
	}
	return corev1.Taint{Key: taintKey, Value: v, Effect: corev1.TaintEffect(effect)}, ""
}

// set stores one option from its text; it returns why the text is refused.
func (o *OptionOverrides) set(name, value string) string {
	text := strings.TrimSpace(value)
	switch name {
	case OptionScaleDownUtilizationThreshold, OptionScaleDownGpuUtilizationThreshold:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			return "a utilization threshold is a number from 0 to 1, like 0.5"
		}
		if name == OptionScaleDownUtilizationThreshold {
			o.ScaleDownUtilizationThreshold = &f
		} else {
			o.ScaleDownGpuUtilizationThreshold = &f
		}
	case OptionScaleDownUnneededTime, OptionScaleDownUnreadyTime, OptionMaxNodeProvisionTime:
		d, err := time.ParseDuration(text)
		if err != nil || d < 0 {
			return "a duration in Go syntax is expected, like 10m or 1h30m"
		}
		switch name {
		case OptionScaleDownUnneededTime:
			o.ScaleDownUnneededTime = &d
		case OptionScaleDownUnreadyTime:
			o.ScaleDownUnreadyTime = &d
		default:
			o.MaxNodeProvisionTime = &d
		}
	case OptionIgnoreDaemonSetsUtilization:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return "true or false is expected"
		}
		o.IgnoreDaemonSetsUtilization = &b
	default:
		return fmt.Sprintf("unknown option %q: known options are %s", name, strings.Join(OptionNames, ", "))
	}
	return ""
}
