package cloudprovidertest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// checkLeastPrivilege: the fake cloud enforces a policy that grants only the
// permissions it names (the example's least-privilege policy, under which
// every other check runs too), and the provider's whole cycle works under
// it: a snapshot, a scale-up, a deletion and every template.
func checkLeastPrivilege(t *testing.T, k *kit) {
	k.require(HookPermissions)
	p := k.env.Permissions
	if p.AllowsOthers() || len(p.Granted()) == 0 {
		t.Fatalf("Env.Permissions grants %q and allows unnamed permissions: %v; want the example's least-privilege policy", p.Granted(), p.AllowsOthers())
	}
	g := k.mainGroup()
	id := g.Id(k.ctx())
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize by 1 under the example policy")
	k.settle()
	k.refresh()
	g = k.group(id)
	victim := k.nodes(g)[0]
	k.must(g.DeleteNodes(k.ctx(), []*corev1.Node{k.env.Node(victim)}), "DeleteNodes of one node under the example policy")
	k.refresh()
	for _, g := range k.groups() {
		if _, err := g.TemplateNodeInfo(k.ctx()); err != nil && k.declared(k.env.TemplateGroups, HookTemplateGroups)[g.Id(k.ctx())] {
			t.Fatalf("TemplateNodeInfo of %s under the example policy: %v", g.Id(k.ctx()), err)
		}
	}
}
