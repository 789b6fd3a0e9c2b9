package groupstate

// Groups is the set of node groups a provider's snapshot serves, in a
// stable order. A refresh builds the next set (Next) and swaps it in; a
// set never changes once built, so a reader may keep one meanwhile.
type Groups[G retirable] struct {
	byID  map[string]G
	order []string
}

// retirable is a provider's node group: it embeds a *Group.
type retirable interface{ retire() }

// With returns the set with g added as group id, last: a group a node
// lookup found between two refreshes.
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

// replace retires and forgets the groups next drops, and returns next.
func (s Groups[G]) replace(next Groups[G], ledger *Ledger) Groups[G] {
	for id, g := range s.byID {
		if !next.Holds(id) {
			g.retire()
		}
	}
	if ledger != nil {
		ledger.forget(next.Holds)
	}
	return next
}

// Next is the set a refresh serves next: ids in order, each the group s
// holds or one create makes, passed to install. Groups left out are
// retired (CA may still hold them: they answer NotFound) and forgotten.
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
	return s.replace(Groups[G]{byID: byID, order: order}, ledger)
}
