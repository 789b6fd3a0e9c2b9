package cloudprovider

import (
	"context"
	"testing"
)

// namedGroup is a NodeGroup that only knows its id.
type namedGroup struct {
	NodeGroup
	id string
}

func (g *namedGroup) Id(context.Context) string { return g.id }

func TestAsNodeGroupsKeepsEveryGroupInOrder(t *testing.T) {
	t.Parallel()
	groups := []*namedGroup{{id: "b"}, {id: "a"}, {id: "c"}}
	got := AsNodeGroups(groups)
	if len(got) != len(groups) {
		t.Fatalf("%d groups, want %d", len(got), len(groups))
	}
	for i, g := range got {
		if g != groups[i] || g.Id(context.Background()) != groups[i].id {
			t.Errorf("group %d is %v, want %s", i, g, groups[i].id)
		}
	}
	if got := AsNodeGroups([]*namedGroup(nil)); got == nil || len(got) != 0 {
		t.Errorf("no groups: %#v, want an empty, non-nil list", got)
	}
}
