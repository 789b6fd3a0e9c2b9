package fakecloud

import (
	"fmt"
	"slices"
	"strings"
)

// Permissions decides which of a cloud's permissions (an Exoscale IAM
// operation such as "get-instance-pool", a Volcengine action such as
// "auto_scaling:DescribeScalingGroups") a fake's credentials hold, as the
// cloud's policy evaluation does: the first rule naming the permission
// decides, and a permission no rule names gets Otherwise. Each fake parses its
// cloud's policy document into one and answers a refused request with its
// cloud's own refusal. A nil *Permissions allows everything.
type Permissions struct {
	rules     []PermissionRule
	otherwise bool
}

// PermissionRule allows or denies the permissions it names.
type PermissionRule struct {
	Names []string
	Allow bool
}

// NewPermissions checks rules (no empty or blank name) and returns them in
// evaluation order, with otherwise for a permission none names.
func NewPermissions(otherwise bool, rules ...PermissionRule) (*Permissions, error) {
	rules = slices.Clone(rules)
	for i, r := range rules {
		for _, n := range r.Names {
			if n == "" || strings.TrimSpace(n) != n {
				return nil, fmt.Errorf("rule %d: permission name %q is empty or has spaces around it", i+1, n)
			}
		}
		rules[i].Names = slices.Clone(r.Names)
	}
	return &Permissions{rules: rules, otherwise: otherwise}, nil
}

// AllowOnly returns permissions that allow exactly names.
func AllowOnly(names ...string) (*Permissions, error) {
	return NewPermissions(false, PermissionRule{Names: names, Allow: true})
}

// Allows reports whether the permission name is granted.
func (p *Permissions) Allows(name string) bool {
	if p == nil {
		return true
	}
	for _, r := range p.rules {
		if slices.Contains(r.Names, name) {
			return r.Allow
		}
	}
	return p.otherwise
}

// Granted returns, sorted, every permission a rule names that Allows grants:
// with Otherwise false, the whole allow list.
func (p *Permissions) Granted() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, r := range p.rules {
		for _, n := range r.Names {
			if p.Allows(n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// AllowsOthers reports whether a permission no rule names is granted.
func (p *Permissions) AllowsOthers() bool { return p == nil || p.otherwise }
