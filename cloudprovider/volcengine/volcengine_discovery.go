package volcengine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

// tagSelector is one --node-group-auto-discovery value: a group matches when it
// carries every listed tag (with the given value, or any value when none is
// given). Several selectors are ORed.
type tagSelector struct {
	raw  string
	tags []tagMatch
}

type tagMatch struct {
	key      string
	value    string
	anyValue bool
}

func (s tagSelector) matches(tags map[string]string) bool {
	for _, m := range s.tags {
		v, ok := tags[m.key]
		if !ok || (!m.anyValue && v != m.value) {
			return false
		}
	}
	return true
}

// parseDiscoverySpecs parses asg:tag=<key>[=<value>][,<key>[=<value>]...]
// values and reports every bad one.
func parseDiscoverySpecs(values []string) ([]tagSelector, error) {
	var out []tagSelector
	var errs []error
	for _, raw := range values {
		sel, err := parseDiscoverySpec(raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sel)
	}
	return out, errors.Join(errs...)
}

func parseDiscoverySpec(raw string) (tagSelector, error) {
	bad := func(why string) (tagSelector, error) {
		return tagSelector{}, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument,
			"--node-group-auto-discovery %q: %s (want asg:tag=<key>[=<value>][,<key>[=<value>]...])", raw, why)
	}
	if !strings.HasPrefix(raw, discoveryPrefix) {
		return bad("unknown discoverer, only asg: is supported")
	}
	body := strings.TrimPrefix(raw, discoveryPrefix)
	if !strings.HasPrefix(body, discoveryTag) {
		return bad("missing tag=")
	}
	body = strings.TrimPrefix(body, discoveryTag)
	sel := tagSelector{raw: raw}
	seen := map[string]bool{}
	for _, part := range strings.Split(body, ",") {
		part = strings.TrimSpace(part)
		part = strings.TrimPrefix(part, discoveryTag)
		if part == "" {
			return bad("empty tag")
		}
		key, value, hasValue := strings.Cut(part, "=")
		key = strings.TrimSpace(key)
		if key == "" {
			return bad("empty tag key")
		}
		if seen[key] {
			return bad(fmt.Sprintf("tag key %q given twice", key))
		}
		seen[key] = true
		sel.tags = append(sel.tags, tagMatch{key: key, value: strings.TrimSpace(value), anyValue: !hasValue})
	}
	return sel, nil
}

// selectGroups picks the groups CA manages: those --nodes names (by id,
// through groupconfig.ResolveSpecs), then those an auto-discovery selector
// matches. The resolution says which specs matched nothing.
func selectGroups(all []volcapi.ScalingGroup, static []groupconfig.NodeGroupSpec, selectors []tagSelector) ([]managedGroup, groupconfig.SpecResolution) {
	candidates := make([]groupconfig.SpecCandidate, 0, len(all))
	for _, g := range all {
		candidates = append(candidates, groupconfig.SpecCandidate{ID: g.ID})
	}
	resolved := groupconfig.ResolveSpecs(static, candidates)
	var picked []managedGroup
	taken := map[string]bool{}
	for _, g := range all {
		if spec, ok := resolved.ByGroup[g.ID]; ok && !taken[g.ID] {
			taken[g.ID] = true
			picked = append(picked, managedGroup{cloud: g, spec: &spec})
		}
	}
	for _, g := range all {
		if taken[g.ID] {
			continue
		}
		for _, sel := range selectors {
			if sel.matches(g.Tags) {
				taken[g.ID] = true
				picked = append(picked, managedGroup{cloud: g, discoveredBy: sel.raw})
				break
			}
		}
	}
	return picked, resolved
}

// managedGroup is a scaling group CA manages, with how it was chosen.
type managedGroup struct {
	cloud        volcapi.ScalingGroup
	spec         *groupconfig.NodeGroupSpec
	discoveredBy string
}

// bounds returns min and max: the group's own, the spec's only when the group
// does not report them.
func (m managedGroup) bounds() (minSize, maxSize int) {
	minSize, maxSize = m.cloud.Min, m.cloud.Max
	if !m.cloud.HasMin && m.spec != nil {
		minSize = m.spec.MinSize
	}
	if !m.cloud.HasMax && m.spec != nil {
		maxSize = m.spec.MaxSize
	}
	return minSize, maxSize
}
