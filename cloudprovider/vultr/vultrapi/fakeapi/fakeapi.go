// Package fakeapi is an in-process fake of the Vultr API v2 endpoints that the
// cluster-autoscaler provider uses. It powers the provider's tests and
// --simulate, so it reproduces what the real API does on the wire: bearer
// auth, the {"error","status"} error body, the exact application/json content
// type, cursor pagination, 202 on node-pool PATCH and 204 on node DELETE,
// provisioning lag (new nodes show up pending, then active), random node
// removal when a pool shrinks, and injectable 429/5xx/hangs/malformed answers.
//
// Time is read from an injected Clock and node state is evaluated lazily on
// every request, so tests drive provisioning with a cloudprovidertest.ManualClock (or Settle)
// and never sleep, while --simulate uses the real clock.
package fakeapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Clock tells the fake what time it is.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Options configures the fake. Zero values take the documented defaults.
type Options struct {
	// Token is the API key the fake accepts (default "fake-vultr-token").
	Token string
	// Clock drives provisioning (default: real time).
	Clock Clock
	// AppearAfter is how long after a scale-up a new node shows up in nodes[]
	// (as pending). Zero: at once.
	AppearAfter time.Duration
	// ActiveAfter is how long after a scale-up a new node turns active.
	ActiveAfter time.Duration
	// CloseLinger is how long a deleted node stays listed as "closed"; zero
	// removes it from nodes[] at once.
	CloseLinger time.Duration
	// DefaultPerPage is the page size when the client sends no per_page (default 100).
	DefaultPerPage int
	// MaxPerPage caps per_page (default 500). Tests set it to 2 to force paging.
	MaxPerPage int
	// Seed makes ids and random removals reproducible.
	Seed int64
}

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	Status int
}

// Fault makes matching requests fail. Faults are consumed in the order they
// were injected; each matches Times requests (default 1).
type Fault struct {
	// Method and PathContains select requests; empty matches any.
	Method       string
	PathContains string
	// Status is the HTTP status to answer with (e.g. 429, 500, 503, or 200/202
	// together with Body for a malformed success).
	Status int
	// RetryAfter sets the Retry-After header.
	RetryAfter string
	// Body replaces the JSON error body (e.g. "{not json" or "").
	Body *string
	// ContentType replaces application/json on the fault answer.
	ContentType string
	// Hang blocks the request until the client gives up (its context ends).
	Hang bool
	// AfterApply lets the request take effect before the fault answer is
	// sent, like a response lost on the way back.
	AfterApply bool
	// ReportQuantity, when non-zero on a PATCH, applies the request and then
	// reports this node_quantity instead of the real one.
	ReportQuantity int
	// Times is how many matching requests the fault hits (default 1).
	Times int
}

// NodeView is a node as the API currently lists it.
type NodeView struct {
	ID     string
	Label  string
	Status string
}

// PoolView is a node pool as the API currently reports it.
type PoolView struct {
	ID         string
	Label      string
	Plan       string
	Quantity   int
	Min, Max   int
	AutoScaler bool
	Nodes      []NodeView
}

// Taint is a pool taint.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"`
}

// PoolSpec seeds a node pool; Quantity nodes are created active.
type PoolSpec struct {
	ID         string
	Label      string
	Plan       string
	Quantity   int
	Min, Max   int
	AutoScaler bool
	Labels     map[string]string
	Taints     []Taint
}

// ClusterSpec seeds a VKE cluster.
type ClusterSpec struct {
	ID, Label, Region, Version string
}

// Plan is a cloud-compute plan as GET /v2/plans returns it.
type Plan struct {
	ID          string   `json:"id"`
	VCPUCount   int      `json:"vcpu_count"`
	RAM         int      `json:"ram"`
	Disk        int      `json:"disk"`
	DiskCount   int      `json:"disk_count"`
	Bandwidth   int      `json:"bandwidth"`
	MonthlyCost float64  `json:"monthly_cost"`
	Type        string   `json:"type"`
	GPUVRAMGB   int      `json:"gpu_vram_gb,omitempty"`
	GPUType     string   `json:"gpu_type,omitempty"`
	Locations   []string `json:"locations"`
}

// MetalPlan is a bare-metal plan as GET /v2/plans-metal returns it.
type MetalPlan struct {
	ID          string   `json:"id"`
	CPUCount    int      `json:"cpu_count"`
	CPUModel    string   `json:"cpu_model"`
	CPUThreads  int      `json:"cpu_threads"`
	RAM         int      `json:"ram"`
	Disk        int      `json:"disk"`
	DiskCount   int      `json:"disk_count"`
	Bandwidth   int      `json:"bandwidth"`
	MonthlyCost float64  `json:"monthly_cost"`
	Type        string   `json:"type"`
	Locations   []string `json:"locations"`
}

type node struct {
	id, label string
	created   time.Time
	appearAt  time.Time
	activeAt  time.Time
	closed    bool
	removeAt  time.Time
}

type pool struct {
	id, label, plan, status, tag string
	created                      time.Time
	quantity, min, max           int
	autoScaler                   bool
	labels                       map[string]string
	taints                       []Taint
	nodes                        []*node
}

type cluster struct {
	id, label, region, version string
	created                    time.Time
	pools                      []*pool
}

// Server is a running fake Vultr API.
type Server struct {
	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	token    string
	clusters map[string]*cluster
	plans    []Plan
	metal    []MetalPlan
	log      []Request
	faults   []*Fault
	failNext int
	rnd      *rand.Rand
}

// New starts a fake on a loopback port (127.0.0.1:0). Close it when done.
func New(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = "fake-vultr-token"
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.DefaultPerPage <= 0 {
		opts.DefaultPerPage = 100
	}
	if opts.MaxPerPage <= 0 {
		opts.MaxPerPage = 500
	}
	s := &Server{
		opts:     opts,
		token:    opts.Token,
		clusters: map[string]*cluster{},
		rnd:      rand.New(rand.NewSource(opts.Seed)),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the base URL to give the client (paths start with /v2).
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Token returns the API key the fake currently accepts.
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// SetToken rotates the accepted API key.
func (s *Server) SetToken(t string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = t
}

// AddCluster seeds a cluster.
func (s *Server) AddCluster(c ClusterSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ID == "" {
		c.ID = s.newID()
	}
	s.clusters[c.ID] = &cluster{id: c.ID, label: c.Label, region: c.Region, version: c.Version, created: s.opts.Clock.Now()}
}

// AddPool seeds a node pool with Quantity active nodes and returns its view.
func (s *Server) AddPool(clusterID string, p PoolSpec) (PoolView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clusters[clusterID]
	if !ok {
		return PoolView{}, fmt.Errorf("fakeapi: no cluster %q", clusterID)
	}
	if p.ID == "" {
		p.ID = s.newID()
	}
	now := s.opts.Clock.Now()
	np := &pool{
		id: p.ID, label: p.Label, plan: p.Plan, status: "active", created: now,
		quantity: p.Quantity, min: p.Min, max: p.Max, autoScaler: p.AutoScaler,
		labels: p.Labels, taints: p.Taints,
	}
	for i := 0; i < p.Quantity; i++ {
		np.nodes = append(np.nodes, s.newNode(np, now, now))
	}
	c.pools = append(c.pools, np)
	return s.view(np, now), nil
}

// AddPlans seeds cloud-compute plans.
func (s *Server) AddPlans(p ...Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plans = append(s.plans, p...)
}

// AddMetalPlans seeds bare-metal plans.
func (s *Server) AddMetalPlans(p ...MetalPlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metal = append(s.metal, p...)
}

// Pool returns the pool as the API would list it now.
func (s *Server) Pool(clusterID, poolID string) (PoolView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findPool(clusterID, poolID)
	if p == nil {
		return PoolView{}, false
	}
	now := s.opts.Clock.Now()
	s.advance(p, now)
	return s.view(p, now), true
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
				n.appearAt, n.activeAt = time.Time{}, time.Time{}
				kept = append(kept, n)
			}
			p.nodes = kept
		}
	}
}

// Inject queues a fault.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times <= 0 {
		f.Times = 1
	}
	s.faults = append(s.faults, &f)
}

// FailNext answers the next n requests with 500; n = 0 stops failing.
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = n
}

// ClearFaults drops every queued fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults, s.failNext = nil, 0
}

// Requests returns a copy of the request log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// RequestCount returns how many requests the fake has received.
func (s *Server) RequestCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.log)
}

// ResetRequests clears the request log.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
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
		created: s.opts.Clock.Now(), appearAt: appearAt, activeAt: activeAt,
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
		if n.closed && !now.Before(n.removeAt) {
			continue
		}
		kept = append(kept, n)
	}
	p.nodes = kept
}

func nodeStatus(n *node, now time.Time) (string, bool) {
	switch {
	case n.closed:
		return "closed", true
	case now.Before(n.appearAt):
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

// removeNode marks n closed (or drops it) and lowers the quantity.
func (s *Server) removeNode(p *pool, n *node, now time.Time) {
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
func (s *Server) resize(p *pool, q int, now time.Time) {
	var live []*node
	for _, n := range p.nodes {
		if !n.closed {
			live = append(live, n)
		}
	}
	for i := len(live); i < q; i++ {
		p.nodes = append(p.nodes, s.newNode(p, now.Add(s.opts.AppearAfter), now.Add(s.opts.ActiveAfter)))
	}
	if excess := len(live) - q; excess > 0 {
		s.rnd.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		for _, n := range live[:excess] {
			s.removeNode(p, n, now)
		}
	}
	p.quantity = q
}

// ---- HTTP ----

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	s.mu.Lock()
	idx := len(s.log)
	s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	fault := s.takeFault(r)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if idx < len(s.log) {
			s.log[idx].Status = rec.status
		}
		s.mu.Unlock()
	}()

	if r.Header.Get("Authorization") != "Bearer "+s.Token() {
		writeError(rec, http.StatusUnauthorized, "Invalid API token.")
		return
	}
	if fault != nil && fault.Hang {
		<-r.Context().Done()
		return
	}
	if fault != nil && !fault.AfterApply && fault.ReportQuantity == 0 {
		writeFault(rec, fault)
		return
	}
	status, out := s.route(r, body)
	if fault != nil {
		if fault.ReportQuantity != 0 && status < 300 {
			if env, ok := out.(map[string]any); ok {
				if np, ok := env["node_pool"].(poolJSON); ok {
					np.NodeQuantity = fault.ReportQuantity
					env["node_pool"] = np
				}
			}
			writeJSON(rec, status, out)
			return
		}
		writeFault(rec, fault)
		return
	}
	writeJSON(rec, status, out)
}

func (s *Server) takeFault(r *http.Request) *Fault {
	if s.failNext > 0 {
		s.failNext--
		return &Fault{Status: http.StatusInternalServerError}
	}
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == r.Method) && strings.Contains(r.URL.Path, f.PathContains) {
			f.Times--
			if f.Times <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return f
		}
	}
	return nil
}

func writeFault(w http.ResponseWriter, f *Fault) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.Body == nil {
		writeError(w, f.Status, http.StatusText(f.Status))
		return
	}
	ct := f.ContentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(f.Status)
	_, _ = io.WriteString(w, *f.Body)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": msg, "status": status})
}

func writeJSON(w http.ResponseWriter, status int, out any) {
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	if status >= 400 {
		writeError(w, status, fmt.Sprint(out))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
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
		Label: p.label, Plan: p.plan, Status: p.status, NodeQuantity: p.quantity, MinNodes: p.min,
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

const notFound = "Not found"

// route serves one authorised request and returns status plus the JSON value
// (or error message for status >= 400).
func (s *Server) route(r *http.Request, body []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Clock.Now()
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
		return http.StatusAccepted, map[string]any{"node_pool": s.poolJSON(p, now)}
	case len(rest) == 1 && rest[0] == "nodes" && r.Method == http.MethodGet:
		pj := s.poolJSON(p, now)
		lo, hi, meta, ok := s.page(r, len(pj.Nodes))
		if !ok {
			return http.StatusBadRequest, "Invalid cursor."
		}
		return http.StatusOK, map[string]any{"worker_nodes": pj.Nodes[lo:hi], "meta": meta}
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
