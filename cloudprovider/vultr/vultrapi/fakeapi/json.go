package fakeapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// writeError writes Vultr's error body, {"error": message, "status": code};
// Vultr has no separate error code, so code is unused.
func writeError(w http.ResponseWriter, status int, _ string, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": message, "status": status})
}

// writeAnswer writes a route's answer: out is the JSON value, or the error
// message when status >= 400.
func writeAnswer(w http.ResponseWriter, status int, out any) {
	if status >= 400 {
		writeError(w, status, "", fmt.Sprint(out))
		return
	}
	fakecloud.WriteJSON(w, status, out)
}

type nodeJSON struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	DateCreated string `json:"date_created"`
	IP          string `json:"ip"`
	PrivateIP   string `json:"private_ip"`
	Status      string `json:"status"`
}

type poolJSON struct {
	ID           string            `json:"id"`
	DateCreated  string            `json:"date_created"`
	DateUpdated  string            `json:"date_updated"`
	Label        string            `json:"label"`
	Plan         string            `json:"plan"`
	Status       string            `json:"status"`
	NodeQuantity int               `json:"node_quantity"`
	MinNodes     int               `json:"min_nodes"`
	MaxNodes     int               `json:"max_nodes"`
	AutoScaler   bool              `json:"auto_scaler"`
	Tag          string            `json:"tag"`
	UserData     string            `json:"user_data"`
	VPCOnly      bool              `json:"vpc_only"`
	Labels       map[string]string `json:"labels"`
	Taints       []Taint           `json:"taints"`
	Nodes        []nodeJSON        `json:"nodes"`
}

type metaJSON struct {
	Total int `json:"total"`
	Links struct {
		Next string `json:"next"`
		Prev string `json:"prev"`
	} `json:"links"`
}

func (s *Server) poolJSON(p *pool, now time.Time) poolJSON {
	s.advance(p, now)
	out := poolJSON{
		ID: p.id, DateCreated: p.created.UTC().Format(time.RFC3339), DateUpdated: now.UTC().Format(time.RFC3339),
		Label: p.label, Plan: p.plan, Status: s.poolStatus(p, now), NodeQuantity: p.quantity, MinNodes: p.min,
		MaxNodes: p.max, AutoScaler: p.autoScaler, Tag: p.tag, Labels: p.labels, Taints: p.taints,
		Nodes: []nodeJSON{},
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Taints == nil {
		out.Taints = []Taint{}
	}
	for i, n := range p.nodes {
		st, ok := nodeStatus(n, now)
		if !ok {
			continue
		}
		out.Nodes = append(out.Nodes, nodeJSON{
			ID: n.id, Label: n.label, DateCreated: n.created.UTC().Format(time.RFC3339), Status: st,
			IP: fmt.Sprintf("192.0.2.%d", 1+i%250), PrivateIP: fmt.Sprintf("10.1.96.%d", 1+i%250),
		})
	}
	return out
}

func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(offset)))
}

func decodeCursor(c string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), "offset:") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), "offset:"))
	return n, err == nil && n >= 0
}

// page slices n items per the request's per_page/cursor; ok=false on a bad cursor.
func (s *Server) page(r *http.Request, n int) (lo, hi int, meta metaJSON, ok bool) {
	per := s.opts.DefaultPerPage
	if v := r.URL.Query().Get("per_page"); v != "" {
		if p, err := strconv.Atoi(v); err == nil && p > 0 {
			per = p
		}
	}
	if per > s.opts.MaxPerPage {
		per = s.opts.MaxPerPage
	}
	if c := r.URL.Query().Get("cursor"); c != "" {
		if lo, ok = decodeCursor(c); !ok || lo > n {
			return 0, 0, meta, false
		}
	}
	hi = lo + per
	if hi > n {
		hi = n
	}
	meta.Total = n
	if hi < n {
		meta.Links.Next = encodeCursor(hi)
	}
	if lo > 0 {
		prev := lo - per
		if prev < 0 {
			prev = 0
		}
		meta.Links.Prev = encodeCursor(prev)
	}
	return lo, hi, meta, true
}

// poolStatus is "pending" while a busy-reporting pool has nodes not yet
// active (Options.Busy), else the pool's own status.
func (s *Server) poolStatus(p *pool, now time.Time) string {
	if s.opts.Busy == BusyNever {
		return p.status
	}
	for _, n := range p.nodes {
		if st, _ := nodeStatus(n, now); st != "active" && st != "closed" {
			return "pending"
		}
	}
	return p.status
}
