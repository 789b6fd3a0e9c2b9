package fakeapi

import (
	"fmt"
	"time"
)

type node struct {
	id, label string
	created   time.Time
	appearAt  time.Time
	activeAt  time.Time
	closed    bool
	removeAt  time.Time
	// lagging is a deleted node the listing still shows as it was, until
	// Settle (Server.HoldRemoval).
	lagging bool
	// unlisted is a node VKE holds but does not list yet, until Settle
	// (Server.ListScaleUpLate).
	unlisted bool
}

type pool struct {
	id, label, plan, status, tag string
	created                      time.Time
	quantity, min, max           int
	autoScaler                   bool
	labels                       map[string]string
	taints                       []Taint
	nodes                        []*node
	// listLate leaves the nodes of the next scale-up unlisted.
	listLate bool
}

type cluster struct {
	id, label, region, version string
	created                    time.Time
	pools                      []*pool
}

// Settle finishes all pending work at once: every requested node is listed
// and active, and closed nodes are gone.
func (s *Server) Settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clusters {
		for _, p := range c.pools {
			kept := p.nodes[:0]
			for _, n := range p.nodes {
				if n.closed {
					continue
				}
				n.appearAt, n.activeAt, n.unlisted = time.Time{}, time.Time{}, false
				kept = append(kept, n)
			}
			p.nodes = kept
		}
	}
}

func (s *Server) newID() string {
	b := make([]byte, 16)
	s.rnd.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *Server) newNode(p *pool, appearAt, activeAt time.Time) *node {
	b := make([]byte, 7)
	s.rnd.Read(b)
	return &node{
		id: s.newID(), label: fmt.Sprintf("%s-%x", p.label, b)[:len(p.label)+14],
		created: s.opts.Now(), appearAt: appearAt, activeAt: activeAt,
	}
}

func (s *Server) findPool(clusterID, poolID string) *pool {
	c, ok := s.clusters[clusterID]
	if !ok {
		return nil
	}
	for _, p := range c.pools {
		if p.id == poolID {
			return p
		}
	}
	return nil
}

// advance drops closed nodes whose linger time is over.
func (s *Server) advance(p *pool, now time.Time) {
	kept := p.nodes[:0]
	for _, n := range p.nodes {
		if n.closed && !n.lagging && !now.Before(n.removeAt) {
			continue
		}
		kept = append(kept, n)
	}
	p.nodes = kept
}

func nodeStatus(n *node, now time.Time) (string, bool) {
	switch {
	case n.closed && !n.lagging:
		return "closed", true
	case n.unlisted, now.Before(n.appearAt):
		return "", false
	case now.Before(n.activeAt):
		return "pending", true
	default:
		return "active", true
	}
}

func (s *Server) view(p *pool, now time.Time) PoolView {
	v := PoolView{ID: p.id, Label: p.label, Plan: p.plan, Quantity: p.quantity, Min: p.min, Max: p.max, AutoScaler: p.autoScaler}
	for _, n := range p.nodes {
		if st, ok := nodeStatus(n, now); ok {
			v.Nodes = append(v.Nodes, NodeView{ID: n.id, Label: n.label, Status: st})
		}
	}
	return v
}

// removeNode marks n closed (or drops it); a node HoldRemoval named stays
// listed as it was until Settle.
func (s *Server) removeNode(p *pool, n *node, now time.Time) {
	if s.heldRemovals[n.id] {
		delete(s.heldRemovals, n.id)
		n.closed, n.lagging = true, true
		return
	}
	if s.opts.CloseLinger > 0 {
		n.closed, n.removeAt = true, now.Add(s.opts.CloseLinger)
	} else {
		for i, m := range p.nodes {
			if m == n {
				p.nodes = append(p.nodes[:i], p.nodes[i+1:]...)
				break
			}
		}
	}
}

// resize applies a new node_quantity: growth schedules nodes with the
// provisioning lag; shrinking removes random live nodes, as VKE does.
func (s *Server) resize(p *pool, quantity int, now time.Time) {
	var live []*node
	for _, n := range p.nodes {
		if !n.closed {
			live = append(live, n)
		}
	}
	for i := len(live); i < quantity; i++ {
		n := s.newNode(p, now.Add(s.opts.AppearAfter), now.Add(s.opts.ActiveAfter))
		n.unlisted = p.listLate
		p.nodes = append(p.nodes, n)
	}
	if quantity > len(live) {
		p.listLate = false
	}
	if excess := len(live) - quantity; excess > 0 {
		s.rnd.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		for _, n := range live[:excess] {
			s.removeNode(p, n, now)
		}
	}
	p.quantity = quantity
}

// LaunchInstance adds an active node to a pool behind the client's back: it
// fills an unfulfilled request when node_quantity is above the live node
// count, otherwise node_quantity rises by one, as when someone scales the
// pool in the console.
func (s *Server) LaunchInstance(clusterID, poolID string) (NodeView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findPool(clusterID, poolID)
	if p == nil {
		return NodeView{}, fmt.Errorf("fakeapi: no pool %q in cluster %q", poolID, clusterID)
	}
	now := s.opts.Now()
	s.advance(p, now)
	live := 0
	for _, n := range p.nodes {
		if !n.closed {
			live++
		}
	}
	n := s.newNode(p, now, now)
	p.nodes = append(p.nodes, n)
	p.quantity = max(p.quantity, live+1)
	return NodeView{ID: n.id, Label: n.label, Status: "active"}, nil
}

// ListScaleUpLate makes the pool's next scale-up create nodes that no
// listing shows until Settle, as when VKE's nodes[] lags node_quantity
// (slow provisioning, bare metal). VKE holds them meanwhile: a smaller
// node_quantity may remove them or any listed node.
func (s *Server) ListScaleUpLate(clusterID, poolID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findPool(clusterID, poolID)
	if p == nil {
		return fmt.Errorf("fakeapi: no pool %q in cluster %q", poolID, clusterID)
	}
	p.listLate = true
	return nil
}

// HoldRemoval makes the deletion of node id, once accepted, leave the node
// listed as it was (pending or active) until Settle: a removal VKE took
// while its listing has not caught up. The node no longer counts toward
// the pool's nodes meanwhile.
func (s *Server) HoldRemoval(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heldRemovals[id] = true
}
