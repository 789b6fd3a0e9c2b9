package groupstate

import (
	"context"
	"errors"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestGroupsReplaceRetiresDroppedGroups(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	a, b := l.Group("a", nil, false), l.Group("b", nil, false)
	old := Groups[*Group]{byID: map[string]*Group{"a": a, "b": b}, order: []string{"a", "b"}}
	next := old.replace(Groups[*Group]{byID: map[string]*Group{"b": b}, order: []string{"b"}}, l)
	if got := next.IDs(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("IDs after Replace = %v, want [b]", got)
	}
	if _, err := a.TargetSize(context.Background()); !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) {
		t.Errorf("a dropped group answers TargetSize with %v, want ErrNodeGroupNotFound", err)
	}
	if _, err := b.TargetSize(context.Background()); err != nil {
		t.Errorf("a kept group answers TargetSize with %v", err)
	}
	if l.Group("a", nil, false) == a {
		t.Error("the ledger kept a dropped group's state: a group managed again must start afresh")
	}
	if g, ok := next.Get("b"); !ok || g != b || len(next.List()) != 1 || next.Len() != 1 {
		t.Error("Get/List/Len disagree with the set")
	}
}
