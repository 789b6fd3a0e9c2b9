package cloudprovider

import (
	"fmt"
	"strconv"
	"strings"
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
	min, err := strconv.Atoi(parts[0])
	if err != nil || min < 0 {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: min %q is not a non-negative integer", value, parts[0])
	}
	max, err := strconv.Atoi(parts[1])
	if err != nil || max < 0 {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: max %q is not a non-negative integer", value, parts[1])
	}
	if max < min {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: max %d is below min %d", value, max, min)
	}
	if max == 0 {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: max must be at least 1", value)
	}
	name := strings.TrimSpace(parts[2])
	if name == "" {
		return NodeGroupSpec{}, fmt.Errorf("--nodes %q: name is empty", value)
	}
	return NodeGroupSpec{MinSize: min, MaxSize: max, Name: name}, nil
}

// ParseNodeGroupSpecs parses every value and reports all bad ones together.
func ParseNodeGroupSpecs(values []string) ([]NodeGroupSpec, error) {
	var specs []NodeGroupSpec
	var errs []string
	seen := map[string]bool{}
	for _, v := range values {
		s, err := ParseNodeGroupSpec(v)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Sprintf("--nodes %q: group %q given twice", v, s.Name))
			continue
		}
		seen[s.Name] = true
		specs = append(specs, s)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return specs, nil
}
