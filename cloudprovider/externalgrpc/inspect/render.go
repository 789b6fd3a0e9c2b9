package inspect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Result is one inspect run: a report, or before/after reports around the
// mutations asked for.
type Result struct {
	// Report is set when no mutation was asked for.
	Report *Report `json:"report,omitempty"`
	// Before, Actions and After are set when --scale-up or --delete was given.
	Before  *Report  `json:"before,omitempty"`
	Actions []Action `json:"actions,omitempty"`
	After   *Report  `json:"after,omitempty"`
}

// WriteJSON prints r as indented JSON.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable prints r for humans.
func WriteTable(w io.Writer, r *Result) error {
	if r.Report != nil {
		return writeReport(w, r.Report)
	}
	if allRefused(r.Actions) {
		// Nothing changed: the tables before and after would be the same,
		// and the refusal is what the operator needs to read.
		fmt.Fprintln(w, "== actions (all refused; nothing changed)")
		for _, a := range r.Actions {
			fmt.Fprintln(w, describeAction(a))
		}
		return nil
	}
	fmt.Fprintln(w, "== before")
	if err := writeReport(w, r.Before); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n== actions")
	for _, a := range r.Actions {
		fmt.Fprintln(w, describeAction(a))
	}
	if r.After != nil {
		fmt.Fprintln(w, "\n== after")
		return writeReport(w, r.After)
	}
	return nil
}

// allRefused reports whether every action was refused (and there was one).
func allRefused(actions []Action) bool {
	for _, a := range actions {
		if a.Error == "" {
			return false
		}
	}
	return len(actions) > 0
}

func describeAction(a Action) string {
	what := fmt.Sprintf("%s %s delta=%d", a.Call, a.Group, a.Delta)
	if a.Call == "NodeGroupDeleteNodes" {
		what = fmt.Sprintf("%s %s nodes=%s", a.Call, a.Group, strings.Join(a.Nodes, ","))
	}
	if a.Error != "" {
		return what + ": REFUSED: " + a.Error
	}
	return what + ": OK"
}

func writeReport(w io.Writer, r *Report) error {
	gpu := r.GPULabel
	if gpu == "" {
		gpu = "(none)"
	}
	types := strings.Join(r.GPUTypes, ",")
	if types == "" {
		types = "(none)"
	}
	fmt.Fprintf(w, "Server %s   GPU label %s   GPU types %s\n", r.Server, gpu, types)
	if r.MaxStaleness != "" {
		fmt.Fprintf(w, "Data served is at most %s old (--max-staleness)\n", r.MaxStaleness)
	}
	fmt.Fprintln(w)
	if r.RefreshError != "" {
		fmt.Fprintf(w, "WARNING Refresh failed: %s\n  CA would abort its loop on this; below is the server's last good snapshot.\n\n", r.RefreshError)
	}
	if len(r.Groups) == 0 {
		if r.RefreshError != "" {
			// The selection may be right: the server has no good snapshot yet.
			fmt.Fprintln(w, "No node groups in the server's last good snapshot (it may have none yet); fix the Refresh failure above first.")
			return nil
		}
		fmt.Fprintln(w, "No node groups: CA would do nothing. Check the provider's node group selection (--nodes, auto-discovery).")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE GROUP\tMANAGED\tMIN\tMAX\tTARGET\tINSTANCES\tTEMPLATE\tOPTIONS")
	for _, g := range r.Groups {
		managed := g.Managed
		if managed == "" {
			managed = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", g.ID, managed, g.Min, g.Max, g.Target, stateCounts(g.Instances), templateSummary(g), optionsSummary(g))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range r.Groups {
		fmt.Fprintf(w, "\n%s\n", groupHeading(g))
		for _, e := range g.Errors {
			fmt.Fprintf(w, "  ERROR %s\n", e)
		}
		for _, c := range g.Compatibility {
			fmt.Fprintf(w, "  WARNING %s\n", c)
		}
		if len(g.Instances) == 0 {
			fmt.Fprintln(w, "  no instances")
		} else {
			tw := newTrimmedTable(w)
			fmt.Fprintln(tw, "  INSTANCE\tSTATE\tERROR")
			for _, in := range g.Instances {
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", in.ProviderID, in.State, instanceError(in))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if n := notListedYet(g); n > 0 {
			fmt.Fprintf(w, "  +%d requested, not listed by the cloud yet (CA counts them as upcoming)\n", n)
		}
		if t := g.Template; t != nil {
			fmt.Fprintf(w, "  template capacity    %s\n", resources(t.Capacity))
			fmt.Fprintf(w, "  template allocatable %s\n", resources(t.Allocatable))
			fmt.Fprintf(w, "  template labels      %s\n", pairs(t.Labels))
			taints := strings.Join(t.Taints, ", ")
			if taints == "" {
				taints = "(none)"
			}
			fmt.Fprintf(w, "  template taints      %s\n", taints)
			if t.Hints != "" {
				fmt.Fprintf(w, "  template hints       %s\n", t.Hints)
			}
		} else {
			fmt.Fprintf(w, "  template             %s\n", g.TemplateNote)
		}
		if g.PricePerHour != nil {
			fmt.Fprintf(w, "  price                %.4g per hour (PricingNodePrice of the template; only ratios matter to CA)\n", *g.PricePerHour)
		} else {
			fmt.Fprintf(w, "  price                %s\n", g.PriceNote)
		}
		if o := g.Options; o != nil {
			fmt.Fprintf(w, "  options              utilization %g, gpu utilization %g, unneeded %s, unready %s, max provision %s, zero-or-max %t, ignore daemonsets %t\n",
				o.ScaleDownUtilizationThreshold, o.ScaleDownGpuUtilizationThreshold, o.ScaleDownUnneededTime, o.ScaleDownUnreadyTime,
				o.MaxNodeProvisionTime, o.ZeroOrMaxNodeScaling, o.IgnoreDaemonSetsUtilization)
			overrides := strings.Join(o.Overrides, ", ")
			if overrides == "" {
				overrides = "(all equal to CA's defaults)"
			}
			fmt.Fprintf(w, "  overrides            %s\n", overrides)
		} else {
			fmt.Fprintf(w, "  options              %s\n", g.OptionsNote)
		}
	}
	return nil
}

func stateCounts(ins []Instance) string {
	if len(ins) == 0 {
		return "0"
	}
	counts := map[string]int{}
	failed := 0
	for _, in := range ins {
		counts[in.State]++
		if in.ErrorCode != "" {
			failed++
		}
	}
	var parts []string
	for _, s := range []string{"running", "creating", "deleting", "unspecified"} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			delete(counts, s)
		}
	}
	rest := make([]string, 0, len(counts))
	for s := range counts {
		rest = append(rest, s)
	}
	sort.Strings(rest)
	for _, s := range rest {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", failed))
	}
	return strings.Join(parts, ", ")
}

func templateSummary(g Group) string {
	t := g.Template
	if t == nil {
		if strings.HasPrefix(g.TemplateNote, "none") {
			return "none"
		}
		return "ERROR"
	}
	s := fmt.Sprintf("cpu %s mem %s", orDash(t.Capacity["cpu"]), orDash(t.Capacity["memory"]))
	keys := make([]string, 0, len(t.Capacity))
	for k := range t.Capacity {
		if strings.Contains(k, "gpu") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		s += fmt.Sprintf(" %s %s", k, t.Capacity[k])
	}
	if it := t.Labels["node.kubernetes.io/instance-type"]; it != "" {
		s = it + ": " + s
	}
	return s
}

func optionsSummary(g Group) string {
	switch {
	case g.Options != nil:
		return "overridden"
	case strings.HasPrefix(g.OptionsNote, "error"):
		return "ERROR"
	default:
		return "defaults"
	}
}

func instanceError(in Instance) string {
	if in.ErrorCode == "" {
		return ""
	}
	return fmt.Sprintf("%s (class %d): %s", in.ErrorCode, in.ErrorClass, in.ErrorMessage)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func resources(m map[string]string) string {
	if len(m) == 0 {
		return "(none)"
	}
	return pairs(m)
}

// pairs prints a map sorted by key, so output is stable and diffable.
func pairs(m map[string]string) string {
	if len(m) == 0 {
		return "(none)"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + m[k]
	}
	return strings.Join(out, " ")
}

// trimmedTable buffers a tabwriter so the padding it leaves after an empty
// last cell can be cut: tabwriter writes cell by cell, not line by line.
type trimmedTable struct {
	buf bytes.Buffer
	tw  *tabwriter.Writer
	out io.Writer
}

func newTrimmedTable(out io.Writer) *trimmedTable {
	t := &trimmedTable{out: out}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 4, 2, ' ', 0)
	return t
}

func (t *trimmedTable) Write(p []byte) (int, error) { return t.tw.Write(p) }

// Flush writes the table with trailing spaces removed from every line.
func (t *trimmedTable) Flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	for _, l := range strings.SplitAfter(t.buf.String(), "\n") {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(t.out, strings.TrimRight(strings.TrimSuffix(l, "\n"), " ")+"\n"); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}

// groupHeading names a group once. Providers' Debug strings (what CA logs)
// usually contain the id already, so then the Debug text is the heading.
func groupHeading(g Group) string {
	switch {
	case g.Debug == "":
		return g.ID
	case strings.Contains(g.Debug, g.ID):
		return g.Debug
	}
	return g.ID + "  (" + g.Debug + ")"
}

// notListedYet is how many of the target's instances the cloud does not list
// yet. Some clouds (Vultr) list new nodes only a few seconds after a resize
// is accepted; CA counts the gap as upcoming nodes, so inspect shows it too
// rather than leaving a scale-up invisible until the cloud catches up.
func notListedYet(g Group) int {
	live := 0
	for _, in := range g.Instances {
		if in.State != "deleting" {
			live++
		}
	}
	return g.Target - live
}
