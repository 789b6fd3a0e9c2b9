package groupstate

import "sort"

// Groups is the set of node groups a provider's snapshot serves, in a
// stable order: a refresh builds it whole (NewGroups), swaps it in under
// the provider's lock, and retires the groups the new set drops
// (Replace). It is immutable once built, so a reader may keep one while a
// refresh swaps in the next.
type Groups[G Retirable] struct {
	byID  map[string]G
	order []string
}

// Retirable is a provider's node group as Groups keeps it: it embeds a
// *Group, whose Retire answers NotFound once the snapshot drops it.
type Retirable interface{ Retire() }

// NewGroups returns the groups byID in the given order of their ids
// (every id in order is a key of byID).
func NewGroups[G Retirable](order []string, byID map[string]G) Groups[G] {
	return Groups[G]{byID: byID, order: order}
}

// SortedIDs returns the keys of byID in order, for NewGroups of a
// provider that serves its groups by id.
func SortedIDs[G any](byID map[string]G) []string {
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// With returns the set with g added as group id, last (a group a node
// lookup made between two refreshes; the next refresh orders it).
func (s Groups[G]) With(id string, g G) Groups[G] {
	byID := make(map[string]G, len(s.byID)+1)
	for k, v := range s.byID {
		byID[k] = v
	}
	order := s.order
	if _, ok := byID[id]; !ok {
		order = append(append([]string(nil), s.order...), id)
	}
	byID[id] = g
	return Groups[G]{byID: byID, order: order}
}

// Get returns group id.
func (s Groups[G]) Get(id string) (G, bool) {
	g, ok := s.byID[id]
	return g, ok
}

// Holds reports whether the set holds group id.
func (s Groups[G]) Holds(id string) bool {
	_, ok := s.byID[id]
	return ok
}

// List returns the groups in order.
func (s Groups[G]) List() []G {
	out := make([]G, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.byID[id])
	}
	return out
}

// IDs returns the group ids in order.
func (s Groups[G]) IDs() []string { return append([]string(nil), s.order...) }

// Len is the number of groups.
func (s Groups[G]) Len() int { return len(s.order) }

// Replace retires every group of s that next does not hold (CA may still
// hold it until its next Refresh: it answers NotFound), drops them from
// ledger, and returns next for the provider to swap in.
func (s Groups[G]) Replace(next Groups[G], ledger *Ledger) Groups[G] {
	for id, g := range s.byID {
		if !next.Holds(id) {
			g.Retire()
		}
	}
	if ledger != nil {
		ledger.Forget(next.Holds)
	}
	return next
}

// Next is the set a refresh serves next: for each id of ids, in order, the
// group s holds or one made by create, passed to install (which installs
// the listing); the groups s holds that ids leave out are retired and
// forgotten by ledger (Replace).
func (s Groups[G]) Next(ids []string, create func(id string) G, install func(G), ledger *Ledger) Groups[G] {
	byID := make(map[string]G, len(ids))
	order := make([]string, 0, len(ids))
	for _, id := range ids {
		g, ok := s.byID[id]
		if !ok {
			g = create(id)
		}
		install(g)
		if _, dup := byID[id]; !dup {
			order = append(order, id)
		}
		byID[id] = g
	}
	return s.Replace(Groups[G]{byID: byID, order: order}, ledger)
}
