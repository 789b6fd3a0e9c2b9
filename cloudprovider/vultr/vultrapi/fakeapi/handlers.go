package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

const notFound = "Not found"

// serve checks the bearer token and answers from the routes.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+s.Token() {
		writeError(w, http.StatusUnauthorized, "", "Invalid API token.")
		return
	}
	body, _ := io.ReadAll(r.Body)
	status, out := s.route(r, body)
	writeAnswer(w, status, out)
}

// operationName templates the ids out of a path, so faults and counts can
// name an operation: "PATCH /v2/kubernetes/clusters/{id}/node-pools/{id}".
func operationName(r *http.Request, _ []byte) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i := 1; i < len(parts); i++ {
		switch parts[i-1] {
		case "clusters", "node-pools", "nodes":
			parts[i] = "{id}"
		}
	}
	return r.Method + " /" + strings.Join(parts, "/")
}

// route serves one authorised request and returns status plus the JSON value
// (or error message for status >= 400).
func (s *Server) route(r *http.Request, body []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 2 || parts[0] != "v2" {
		return http.StatusNotFound, notFound
	}
	parts = parts[1:]
	switch {
	case len(parts) == 1 && parts[0] == "plans" && r.Method == http.MethodGet:
		plans := s.plans
		if t := r.URL.Query().Get("type"); t != "" && t != "all" {
			plans = nil
			for _, p := range s.plans {
				if p.Type == t {
					plans = append(plans, p)
				}
			}
		}
		lo, hi, meta, ok := s.page(r, len(plans))
		if !ok {
			return http.StatusBadRequest, "Invalid cursor."
		}
		return http.StatusOK, map[string]any{"plans": nonNil(plans[lo:hi]), "meta": meta}
	case len(parts) == 1 && parts[0] == "plans-metal" && r.Method == http.MethodGet:
		lo, hi, meta, ok := s.page(r, len(s.metal))
		if !ok {
			return http.StatusBadRequest, "Invalid cursor."
		}
		return http.StatusOK, map[string]any{"plans_metal": nonNil(s.metal[lo:hi]), "meta": meta}
	case len(parts) >= 3 && parts[0] == "kubernetes" && parts[1] == "clusters":
		return s.routeCluster(r, parts[2:], body, now)
	}
	return http.StatusNotFound, notFound
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (s *Server) routeCluster(r *http.Request, parts []string, body []byte, now time.Time) (int, any) {
	c, ok := s.clusters[parts[0]]
	if !ok {
		return http.StatusNotFound, "Invalid Kubernetes cluster ID."
	}
	rest := parts[1:]
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		pools := []poolJSON{}
		for _, p := range c.pools {
			pools = append(pools, s.poolJSON(p, now))
		}
		return http.StatusOK, map[string]any{"vke_cluster": map[string]any{
			"id": c.id, "label": c.label, "region": c.region, "version": c.version, "status": "active",
			"date_created": c.created.UTC().Format(time.RFC3339), "node_pools": pools,
		}}
	case len(rest) == 1 && rest[0] == "node-pools" && r.Method == http.MethodGet:
		lo, hi, meta, ok := s.page(r, len(c.pools))
		if !ok {
			return http.StatusBadRequest, "Invalid cursor."
		}
		pools := []poolJSON{}
		for _, p := range c.pools[lo:hi] {
			pools = append(pools, s.poolJSON(p, now))
		}
		return http.StatusOK, map[string]any{"node_pools": pools, "meta": meta}
	case len(rest) >= 2 && rest[0] == "node-pools":
		var p *pool
		for _, cand := range c.pools {
			if cand.id == rest[1] {
				p = cand
			}
		}
		if p == nil {
			return http.StatusNotFound, "Invalid node pool ID."
		}
		return s.routePool(r, p, rest[2:], body, now)
	}
	if len(rest) <= 1 {
		return http.StatusMethodNotAllowed, "Method not allowed."
	}
	return http.StatusNotFound, notFound
}

func (s *Server) routePool(r *http.Request, p *pool, rest []string, body []byte, now time.Time) (int, any) {
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		return http.StatusOK, map[string]any{"node_pool": s.poolJSON(p, now)}
	case len(rest) == 0 && r.Method == http.MethodPatch:
		var req struct {
			NodeQuantity *int    `json:"node_quantity"`
			MinNodes     *int    `json:"min_nodes"`
			MaxNodes     *int    `json:"max_nodes"`
			AutoScaler   *bool   `json:"auto_scaler"`
			Tag          *string `json:"tag"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return http.StatusBadRequest, "Invalid JSON body."
		}
		if req.NodeQuantity != nil && *req.NodeQuantity < 1 {
			return http.StatusBadRequest, "`node_quantity` must be a positive integer."
		}
		if req.NodeQuantity != nil && s.opts.Busy == BusyRefuse && s.poolStatus(p, now) != "active" {
			return http.StatusBadRequest, "Node pool is not active; try again once it is."
		}
		if req.NodeQuantity != nil {
			s.resize(p, *req.NodeQuantity, now)
		}
		if req.MinNodes != nil {
			p.min = *req.MinNodes
		}
		if req.MaxNodes != nil {
			p.max = *req.MaxNodes
		}
		if req.AutoScaler != nil {
			p.autoScaler = *req.AutoScaler
		}
		if req.Tag != nil {
			p.tag = *req.Tag
		}
		answer := s.poolJSON(p, now)
		if s.misreportQuantity != 0 {
			answer.NodeQuantity, s.misreportQuantity = s.misreportQuantity, 0
		}
		return http.StatusAccepted, map[string]any{"node_pool": answer}
	case len(rest) == 1 && rest[0] == "nodes" && r.Method == http.MethodGet:
		listed := s.poolJSON(p, now)
		lo, hi, meta, ok := s.page(r, len(listed.Nodes))
		if !ok {
			return http.StatusBadRequest, "Invalid cursor."
		}
		return http.StatusOK, map[string]any{"worker_nodes": listed.Nodes[lo:hi], "meta": meta}
	case len(rest) == 2 && rest[0] == "nodes" && r.Method == http.MethodDelete:
		s.advance(p, now)
		for _, n := range p.nodes {
			if _, visible := nodeStatus(n, now); n.id == rest[1] && visible && !n.closed {
				s.removeNode(p, n, now)
				p.quantity--
				return http.StatusNoContent, nil
			}
		}
		return http.StatusNotFound, "Invalid node ID."
	case len(rest) == 1 && rest[0] == "labels" && r.Method == http.MethodGet:
		keys := make([]string, 0, len(p.labels))
		for k := range p.labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := []map[string]string{}
		for i, k := range keys {
			out = append(out, map[string]string{"id": fmt.Sprintf("label-%d", i), "key": k, "value": p.labels[k]})
		}
		return http.StatusOK, map[string]any{"labels": out}
	case len(rest) == 1 && rest[0] == "taints" && r.Method == http.MethodGet:
		out := []map[string]string{}
		for i, t := range p.taints {
			out = append(out, map[string]string{"id": fmt.Sprintf("taint-%d", i), "key": t.Key, "value": t.Value, "effect": t.Effect})
		}
		return http.StatusOK, map[string]any{"taints": out}
	}
	return http.StatusNotFound, notFound
}
