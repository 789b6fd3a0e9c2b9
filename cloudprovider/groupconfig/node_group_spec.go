package groupconfig

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// NodeGroupSpec is one parsed --nodes value.
type NodeGroupSpec struct {
	MinSize int
	MaxSize int
	// Name is the group id or name; it may itself contain colons.
	Name string
}

// String renders the spec back in min:max:name form.
func (s NodeGroupSpec) String() string { return fmt.Sprintf("%d:%d:%s", s.MinSize, s.MaxSize, s.Name) }

// ParseNodeGroupSpec parses "min:max:name". Errors name the bad part.
func ParseNodeGroupSpec(value string) (NodeGroupSpec, error) {
	parts := strings.SplitN(value, ":", 3)
	if len(parts) != 3 {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: want min:max:name", value)
	}
	minSize, err := strconv.Atoi(parts[0])
	if err != nil || minSize < 0 {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: min %q is not a non-negative integer", value, parts[0])
	}
	maxSize, err := strconv.Atoi(parts[1])
	if err != nil || maxSize < 0 {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: max %q is not a non-negative integer", value, parts[1])
	}
	if maxSize < minSize {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: max %d is below min %d", value, maxSize, minSize)
	}
	if maxSize == 0 {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: max must be at least 1", value)
	}
	name := strings.TrimSpace(parts[2])
	if name == "" {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: name is empty", value)
	}
	return NodeGroupSpec{MinSize: minSize, MaxSize: maxSize, Name: name}, nil
}

// ParseNodeGroupSpecs parses every value and reports all bad ones together.
// The error wraps ErrConfig (exit 2).
func ParseNodeGroupSpecs(values []string) ([]NodeGroupSpec, error) {
	var specs []NodeGroupSpec
	var errs []string
	seen := map[string]string{}
	for _, v := range values {
		s, err := ParseNodeGroupSpec(v)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if first, dup := seen[s.Name]; dup {
			errs = append(errs, fmt.Sprintf("--nodes %q and --nodes %q: group %q given twice; keep one", first, v, s.Name))
			continue
		}
		seen[s.Name] = v
		specs = append(specs, s)
	}
	if len(errs) > 0 {
		return nil, specError(strings.Join(errs, "; "))
	}
	return specs, nil
}

// specError is a --nodes problem. Its text names the specs, and it wraps
// ErrConfig so the process exits 2 wherever it is returned.
type specError string

func (e specError) Error() string { return string(e) }
func (e specError) Unwrap() error { return cloudprovider.ErrConfig }

// SpecCandidate is a cloud group a --nodes spec may name.
type SpecCandidate struct {
	// ID is the group's id; a spec naming it always matches.
	ID string
	// Names are the other names a spec may use for the group (a pool label,
	// an instance-pool or nodepool name, a nodepool id).
	Names []string
	// Preferred breaks a tie between groups sharing a name: the preferred
	// candidate wins (Exoscale: the nodepool of the configured SKS cluster).
	Preferred bool
}

// SpecResolution is the group each --nodes spec matched in one listing.
type SpecResolution struct {
	// ByGroup maps a group id to the spec that names it.
	ByGroup map[string]NodeGroupSpec
	// Unmatched are specs that name no group.
	Unmatched []NodeGroupSpec
	// Ambiguous maps a spec that names several groups (by name, none by id)
	// to their ids.
	Ambiguous map[string][]string
	// Duplicates are specs that name a group another spec names too (one by
	// id, one by name, or by two of its names).
	Duplicates []SpecDuplicate
}

// SpecDuplicate is a second spec for one group. The spec naming the group by
// id is kept (ids survive a rename, names do not), else the earlier one; the
// other is ignored.
type SpecDuplicate struct {
	Group   string
	Kept    NodeGroupSpec
	Ignored NodeGroupSpec
}

// Problems renders the unmatched, ambiguous and duplicate specs, sorted, for
// an error or a log line; empty when every spec matched its own group.
func (r SpecResolution) Problems() []string {
	var out []string
	for _, s := range r.Unmatched {
		out = append(out, fmt.Sprintf("--nodes %s matches no node group", s))
	}
	for name, ids := range r.Ambiguous {
		out = append(out, fmt.Sprintf("--nodes name %q matches several node groups (%s); use an id", name, strings.Join(ids, ", ")))
	}
	for _, d := range r.Duplicates {
		out = append(out, fmt.Sprintf("--nodes %s and --nodes %s both name node group %s; keep one", d.Kept, d.Ignored, d.Group))
	}
	sort.Strings(out)
	return out
}

// ResolveSpecs matches --nodes specs to groups, for every provider. A spec
// matches the group whose id it names; else the only group with that name;
// else, among several with that name, the preferred one. Anything else is
// unmatched or ambiguous, never a silent pick. Two specs matching one group
// are a duplicate, never "last one wins".
func ResolveSpecs(specs []NodeGroupSpec, candidates []SpecCandidate) SpecResolution {
	res := SpecResolution{ByGroup: map[string]NodeGroupSpec{}, Ambiguous: map[string][]string{}}
	namedByID := map[string]bool{}
	assign := func(group string, spec NodeGroupSpec, byID bool) {
		prev, taken := res.ByGroup[group]
		if !taken {
			res.ByGroup[group], namedByID[group] = spec, byID
			return
		}
		kept, ignored := prev, spec
		if byID && !namedByID[group] {
			kept, ignored = spec, prev
			namedByID[group] = true
		}
		res.ByGroup[group] = kept
		res.Duplicates = append(res.Duplicates, SpecDuplicate{Group: group, Kept: kept, Ignored: ignored})
	}
	for _, spec := range specs {
		var byID string
		var byName, preferred []string
		for _, c := range candidates {
			if c.ID == spec.Name {
				byID = c.ID
				break
			}
			if slices.Contains(c.Names, spec.Name) {
				byName = append(byName, c.ID)
				if c.Preferred {
					preferred = append(preferred, c.ID)
				}
			}
		}
		sort.Strings(byName)
		switch {
		case byID != "":
			assign(byID, spec, true)
		case len(byName) == 1:
			assign(byName[0], spec, false)
		case len(byName) > 1 && len(preferred) == 1:
			assign(preferred[0], spec, false)
		case len(byName) > 1:
			res.Ambiguous[spec.Name] = byName
		default:
			res.Unmatched = append(res.Unmatched, spec)
		}
	}
	return res
}

// SpecWatch reports --nodes specs that name no group, several groups, or a
// group another spec names too. Problems in the first successful listing
// are a configuration error: Check returns an error wrapping ErrConfig and
// main exits 2 naming the specs. Later problems (a group deleted, or renamed
// to another spec's name) are logged at error level on every Refresh and
// counted in a metric while the other groups are still served, so a change
// in the cloud never causes a crash loop.
type SpecWatch struct {
	// Provider names the provider in logs.
	Provider string
	// Report receives the number of problem specs after every listing
	// (registry.BuildOptions.ReportUnmatchedSpecs); nil reports nothing.
	Report func(n int)

	mu     sync.Mutex
	listed bool
}

// Check takes one successful listing's resolution.
func (w *SpecWatch) Check(res SpecResolution) error {
	problems := res.Problems()
	w.mu.Lock()
	first := !w.listed
	w.listed = true
	w.mu.Unlock()
	if w.Report != nil {
		w.Report(len(problems))
	}
	if len(problems) == 0 {
		return nil
	}
	if first {
		return fmt.Errorf("%w: %s", cloudprovider.ErrConfig, strings.Join(problems, "; "))
	}
	var applied []string
	for _, d := range res.Duplicates {
		applied = append(applied, d.Kept.String())
	}
	klog.ErrorS(nil, "Node group specs no longer match one node group each", "provider", w.Provider, "problems", problems,
		"appliedOfDuplicates", applied)
	return nil
}
