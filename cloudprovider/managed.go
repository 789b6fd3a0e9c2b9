package cloudprovider

import "strings"

// ManagedBy says why a provider manages a node group. Every provider uses
// these values in its logs, its Debug text, the banner and inspect.
type ManagedBy string

const (
	// ManagedByCluster: the provider lists the group from the cluster it
	// serves (Vultr pools with auto_scaler, Exoscale nodepools of
	// EXOSCALE_SKS_CLUSTER).
	ManagedByCluster ManagedBy = "cluster"
	// ManagedByNodes: a --nodes spec names the group.
	ManagedByNodes ManagedBy = "--nodes"
	// ManagedByDiscovery: a --node-group-auto-discovery selector matches the
	// group (Volcengine's tags).
	ManagedByDiscovery ManagedBy = "discovery"
	// ManagedByLearnt: a node lookup found one of the group's members (an
	// Exoscale instance pool found through NodeGroupForNode).
	ManagedByLearnt ManagedBy = "learnt"
)

// Management is why a group is managed: By, and Detail naming what chose it
// (the --nodes spec, the discovery selector, the cluster) or "".
type Management struct {
	By     ManagedBy
	Detail string
}

// String is "--nodes (1:5:workers)", "learnt", or "" when By is unset.
func (m Management) String() string {
	if m.By == "" {
		return ""
	}
	if m.Detail == "" {
		return string(m.By)
	}
	return string(m.By) + " (" + m.Detail + ")"
}

// debugManaged starts the part of a group's Debug text that says why it is
// managed.
const debugManaged = "managed: "

// WithManaged returns debug followed by "; managed: <m>", as the server sends
// it in the NodeGroup message's Debug. It returns debug unchanged when m.By is
// empty.
func WithManaged(debug string, m Management) string {
	if m.By == "" {
		return debug
	}
	if debug == "" {
		return debugManaged + m.String()
	}
	return debug + "; " + debugManaged + m.String()
}

// ManagementFromDebug reads back what WithManaged added to a Debug text. It
// returns false when there is none.
func ManagementFromDebug(debug string) (Management, bool) {
	rest, ok := strings.CutPrefix(debug, debugManaged)
	if !ok {
		i := strings.LastIndex(debug, "; "+debugManaged)
		if i < 0 {
			return Management{}, false
		}
		rest = debug[i+len("; "+debugManaged):]
	}
	by, detail, hasDetail := strings.Cut(rest, " (")
	if by == "" || strings.ContainsAny(by, " ;") {
		return Management{}, false
	}
	m := Management{By: ManagedBy(by)}
	if hasDetail {
		m.Detail = strings.TrimSuffix(detail, ")")
	}
	return m, true
}
