package fakecloud

import (
	"slices"
	"testing"
)

func TestPermissionsFirstRuleDecides(t *testing.T) {
	t.Parallel()
	p, err := NewPermissions(false,
		PermissionRule{Names: []string{"scale"}, Allow: false},
		PermissionRule{Names: []string{"list", "scale"}, Allow: true},
	)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"list": true, "scale": false, "evict": false} {
		if got := p.Allows(name); got != want {
			t.Errorf("Allows(%q) = %v, want %v", name, got, want)
		}
	}
	if got := p.Granted(); !slices.Equal(got, []string{"list"}) {
		t.Errorf("Granted = %q, want [list]", got)
	}
	if p.AllowsOthers() {
		t.Error("AllowsOthers = true, want false")
	}
}

func TestPermissionsOtherwiseAndNil(t *testing.T) {
	t.Parallel()
	all, err := NewPermissions(true)
	if err != nil {
		t.Fatal(err)
	}
	var none *Permissions
	for _, p := range []*Permissions{all, none} {
		if !p.Allows("anything") || !p.AllowsOthers() {
			t.Errorf("%v: want every permission allowed", p)
		}
	}
	only, err := AllowOnly("a", "b")
	if err != nil {
		t.Fatal(err)
	}
	if !only.Allows("b") || only.Allows("c") {
		t.Error("AllowOnly(a, b): want b allowed and c refused")
	}
}

func TestPermissionsRefuseBlankNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", " list", "list "} {
		if _, err := AllowOnly(name); err == nil {
			t.Errorf("AllowOnly(%q): want an error", name)
		}
	}
}
