// Package fakeapi is an in-process fake of the Vultr API v2 endpoints that the
// cluster-autoscaler provider uses. It powers the provider's tests and
// --simulate, so it reproduces what the real API does on the wire: bearer
// auth, the {"error","status"} error body, the exact application/json content
// type, cursor pagination, 202 on node-pool PATCH and 204 on node DELETE,
// provisioning lag (new nodes show up pending, then active), random node
// removal when a pool shrinks, and injectable 429/5xx/hangs/malformed answers.
//
// Time is read from an injected clock (Options.Now) and node state is
// evaluated lazily on every request, so tests drive provisioning with a
// fakecloud.ManualClock (or Settle) and never sleep, while --simulate
// uses the real clock. Faults, the request log and the loopback server come
// from fakecloud.API.
//
// Files: fakeapi.go (options, seeding, views), state.go (pools and nodes over
// time), handlers.go (routes), json.go (wire shapes, pagination, errors).
package fakeapi

import (
	"fmt"
	"maps"
	"math/rand"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// Options configures the fake. Zero values take the documented defaults.
type Options struct {
	// Token is the API key the fake accepts (default "fake-vultr-token").
	Token string
	// Now is the clock driving provisioning (default time.Now); tests pass a
	// fakecloud.ManualClock's Now.
	Now func() time.Time
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
	// Busy chooses what the pool reports and does while nodes are still
	// being created. Vultr documents pool statuses ("pending", "active")
	// but not when a pool leaves "active" nor whether a resize is refused
	// meanwhile: BusyNever (default) keeps the pool "active"; BusyPending
	// reports "pending" and accepts resizes; BusyRefuse reports "pending"
	// and refuses a node_quantity change with a 400.
	Busy BusyPolicy
}

// BusyPolicy is what a pool does while its nodes are being created.
type BusyPolicy string

// Busy policies (Options.Busy).
const (
	BusyNever   BusyPolicy = ""
	BusyPending BusyPolicy = "pending"
	BusyRefuse  BusyPolicy = "refuse"
)

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

// Server is a fake Vultr API. Its fault queue, request log and loopback
// server come from the embedded fakecloud.API.
type Server struct {
	*fakecloud.API
	opts Options

	mu       sync.Mutex
	token    string
	clusters map[string]*cluster
	plans    []Plan
	metal    []MetalPlan
	rnd      *rand.Rand
	// misreportQuantity, when non-zero, is the node_quantity the next
	// accepted PATCH answers with instead of the real one.
	misreportQuantity int
	// heldRemovals are the nodes whose deletion HoldRemoval delays.
	heldRemovals map[string]bool
}

// New returns a fake with no clusters. Start serves it on a loopback port and
// returns the base URL to give the client (paths start with /v2); Close stops it.
func New(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = "fake-vultr-token"
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

		heldRemovals: map[string]bool{},
	}
	s.API = fakecloud.NewAPI(fakecloud.APIConfig{
		Routes:     http.HandlerFunc(s.serve),
		Operation:  operationName,
		WriteError: writeError,
		Now:        opts.Now,
	})
	// The kit's clock, wall time unless Options.Now is given.
	s.opts.Now = s.API.Now
	return s
}

// MisreportNextQuantity makes the next accepted node-pool PATCH answer with
// node_quantity n while the pool really takes the requested size, as an
// answer raced by another change would.
func (s *Server) MisreportNextQuantity(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.misreportQuantity = n
}

// Token returns the API key the fake currently accepts.
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// SetToken rotates the accepted API key.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// AddCluster seeds a cluster.
func (s *Server) AddCluster(c ClusterSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ID == "" {
		c.ID = s.newID()
	}
	s.clusters[c.ID] = &cluster{id: c.ID, label: c.Label, region: c.Region, version: c.Version, created: s.opts.Now()}
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
	now := s.opts.Now()
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

// SetPoolLabels replaces a pool's labels and adds taints, as a user editing
// the pool in the console would (per-group settings live in pool labels).
func (s *Server) SetPoolLabels(clusterID, poolID string, labels map[string]string, addTaints []Taint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findPool(clusterID, poolID)
	if p == nil {
		return fmt.Errorf("fakeapi: no pool %q in cluster %q", poolID, clusterID)
	}
	p.labels = maps.Clone(labels)
	p.taints = append(slices.Clone(p.taints), addTaints...)
	return nil
}

// AddPlans seeds cloud-compute plans.
func (s *Server) AddPlans(plans ...Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plans = append(s.plans, plans...)
}

// AddMetalPlans seeds bare-metal plans.
func (s *Server) AddMetalPlans(plans ...MetalPlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metal = append(s.metal, plans...)
}

// Pool returns the pool as the API would list it now.
func (s *Server) Pool(clusterID, poolID string) (PoolView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findPool(clusterID, poolID)
	if p == nil {
		return PoolView{}, false
	}
	now := s.opts.Now()
	s.advance(p, now)
	return s.view(p, now), true
}
