package cloudprovidertest

import (
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// The budget of cloud calls per CA loop, with each provider's numbers
// from its harness (Env.Budget), and the bound on how old served data may be
// (--max-staleness).

// kitMaxStaleness is the --max-staleness the staleness check builds
// providers with; not the default, so a provider that ignores the flag fails.
const kitMaxStaleness = 45 * time.Second

// refreshCost refreshes once and returns the cloud calls it made.
func (k *kit) refreshCost() int {
	k.t.Helper()
	before := k.env.CloudCalls()
	k.refresh()
	return k.env.CloudCalls() - before
}

// checkUnchangedRefreshBudget: once the first snapshot is taken, a Refresh
// that finds nothing changed costs at most Budget.Unchanged calls, however
// many groups and instances there are.
func checkUnchangedRefreshBudget(t *testing.T, k *kit) {
	k.require(HookBudget)
	b := k.env.Budget
	costs := make([]int, 3)
	for i := range costs {
		costs[i] = k.refreshCost()
		if costs[i] > b.Unchanged {
			t.Fatalf("Refresh %d with nothing changed made %d cloud calls, budget %d", i+1, costs[i], b.Unchanged)
		}
	}
	t.Logf("Refreshes with nothing changed made %v cloud calls (budget %d)", costs, b.Unchanged)
}

// checkAfterScaleUpRefreshBudget: the Refresh right after an IncreaseSize(1)
// of one group costs at most the unchanged budget + 1 + that group's pages:
// the change re-reads that group only.
func checkAfterScaleUpRefreshBudget(t *testing.T, k *kit) {
	k.require(HookBudget)
	b := k.env.Budget
	g := k.mainGroup()
	id := g.Id(k.ctx())
	k.refresh()
	k.must(g.IncreaseSize(k.ctx(), 1), "IncreaseSize(1)")
	pages := 0
	if b.GroupPages != nil {
		pages = b.GroupPages(id)
	}
	goal := b.Unchanged + 1 + pages
	n := k.refreshCost()
	if n > goal+b.AfterScaleUpExcess {
		t.Fatalf("Refresh right after IncreaseSize(1) of %s made %d cloud calls, budget %d (%d unchanged + 1 + %d pages) + %d known excess",
			id, n, goal+b.AfterScaleUpExcess, b.Unchanged, pages, b.AfterScaleUpExcess)
	}
	t.Logf("Refresh right after IncreaseSize(1) made %d cloud calls (budget %d = %d unchanged + 1 + %d pages, + %d known excess)",
		n, goal+b.AfterScaleUpExcess, b.Unchanged, pages, b.AfterScaleUpExcess)
	if b.AfterScaleUpExcess > 0 {
		if n <= goal {
			t.Fatalf("Refresh right after IncreaseSize(1) made %d cloud calls, within the budget of %d: lower Budget.AfterScaleUpExcess (%d) to 0",
				n, goal, b.AfterScaleUpExcess)
		}
		t.Logf("KNOWN GAP: Refresh right after IncreaseSize(1) of %s made %d cloud calls, %d above the budget of %d",
			id, n, n-goal, goal)
	}
}

// checkServedWithinStalenessBound: a change made in the cloud behind the
// provider's back, one its cheapest read does not reveal, shows in Nodes
// after the first Refresh once --max-staleness has passed: the snapshot is
// never served older than the bound.
func checkServedWithinStalenessBound(t *testing.T, h Harness) {
	requireHooks(t, h, nil, HookNewEnvWithOptions)
	k := kitFor(t, h, registry.BuildOptions{MaxStaleness: kitMaxStaleness})
	env := k.env
	k.require(HookClock, HookChangeUnseen)
	k.refresh()
	id := k.mainGroup().Id(k.ctx())
	k.refresh()
	shows, what := env.ChangeUnseen(id)
	k.refresh()
	if shows(k.nodes(k.group(id))) {
		t.Logf("%s shows at once: the provider's every Refresh reveals it", what)
	}
	// The snapshot's reads are now just older than the bound.
	env.Clock.Advance(kitMaxStaleness + time.Nanosecond)
	k.refresh()
	if !shows(k.nodes(k.group(id))) {
		t.Fatalf("%s does not show after a Refresh %s after the provider's reads (--max-staleness %s): the snapshot is served older than the bound",
			what, kitMaxStaleness+time.Nanosecond, kitMaxStaleness)
	}
}
