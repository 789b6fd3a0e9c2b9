// Package fakeapi is an in-process fake of the Exoscale v2 API, as far as the
// Cluster Autoscaler provider uses it: SKS clusters and nodepools, instance
// pools, instances, instance types, quotas and asynchronous operations. It
// speaks the real paths, kebab-case JSON, ":scale"/":evict" action suffixes,
// {"message"} error bodies and EXO2-HMAC-SHA256 request signatures, so it is
// driven through the real egoscale v3 SDK. Provisioning follows an injected
// clock; tests advance it or call Settle, --simulate uses real time. Faults,
// the request log and the loopback server come from fakecloud.API.
package fakeapi

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// BasePath is the API version prefix the fake serves under.
const BasePath = "/v2"

// Instance, pool, nodepool and operation states the fake uses.
const (
	InstanceStarting   = "starting"
	InstanceRunning    = "running"
	InstanceDestroying = "destroying"
	InstanceError      = "error"
	PoolRunning        = "running"
	PoolScalingUp      = "scaling-up"
	PoolScalingDown    = "scaling-down"
	NodepoolRunning    = "running"
	NodepoolScaling    = "scaling"
)

// Options configure the fake.
type Options struct {
	// Now is the clock driving provisioning; default: the wall clock.
	Now func() time.Time
	// Zone is the zone name reported by the fake (default "ch-gva-2").
	Zone string
	// APIKey and APISecret, when set, make the fake verify every request's
	// EXO2-HMAC-SHA256 signature and answer 401 otherwise.
	APIKey    string
	APISecret string
	// ProvisionDelay is how long a new member stays "starting".
	ProvisionDelay time.Duration
	// RemovalDelay is how long an evicted member stays "destroying".
	RemovalDelay time.Duration
	// OperationDelay is how long a scale/evict operation stays "pending".
	OperationDelay time.Duration
	// Busy is what :scale and :evict do while the pool is not "running". The
	// Exoscale API documents no answer for it; BusyAccept (the default)
	// applies the change at once, BusyQueue accepts it and applies it when
	// the pool is running again (the operation stays pending until then),
	// BusyRefuse answers 409 Conflict.
	Busy BusyPolicy
	// ScaleDownOldestFirst makes a :scale that shrinks a pool remove its
	// oldest members; by default the newest go. Which ones the real API
	// removes is undocumented.
	ScaleDownOldestFirst bool
	// QuotaAsFailedOperation makes a :scale past the instance quota be
	// accepted and its operation end in "failure" (reason "forbidden"),
	// instead of the default synchronous 400. The API documents neither.
	QuotaAsFailedOperation bool
	// QuotaLimit is the instance quota (-1 = unlimited, 0 = default 50).
	QuotaLimit int64
	// Policy, when set, is the API key's role policy (ParseRolePolicy): a
	// signed request for an operation it does not allow is answered 403.
	Policy *fakecloud.Permissions
}

// Server is the fake API.
type Server struct {
	*fakecloud.API
	opts Options

	mu        sync.Mutex
	seq       int
	clusters  []*cluster
	pools     map[string]*pool
	poolOrder []string
	instances map[string]*instance
	types     map[string]*exoapi.InstanceType
	ops       map[string]*operation
	opFaults  []opFault
	// heldRemovals are the instances whose removal HoldRemoval delays.
	heldRemovals map[string]bool
}

type cluster struct {
	id, name  string
	nodepools []*nodepool
}

type nodepool struct {
	id, clusterID, name string
	poolID              string
	labels              map[string]string
	taints              []exoapi.Taint
}

type pool struct {
	id, name      string
	nodepoolID    string
	typeID        string
	diskSize      int
	size          int
	members       []string
	stateOverride string
	// listLate leaves the members of the next scale-up unlisted.
	listLate bool
	// labels are the instance pool's own (Exoscale resource labels); a
	// nodepool's pool has none of its own in this fake.
	labels map[string]string
}

type instance struct {
	id, name, poolID, typeID, state string
	createdAt, readyAt, goneAt      time.Time
	// lagging is an evicted member the lists still show with state
	// listedAs, its state before the eviction, until Settle
	// (Server.HoldRemoval).
	lagging  bool
	listedAs string
	// unlisted is a member the pool counts and the lists do not show yet,
	// until Settle (Server.ListScaleUpLate).
	unlisted bool
}

type operation struct {
	id, refID, command string
	state              string
	doneAt             time.Time
	final, reason, msg string
	// queued is the change of a BusyQueue operation, applied when its pool
	// is running again.
	queued func()
	pool   *pool
}

// BusyPolicy is what the fake does with a change to a pool that is busy.
type BusyPolicy string

// Busy policies (Options.Busy).
const (
	BusyAccept BusyPolicy = ""
	BusyQueue  BusyPolicy = "queue"
	BusyRefuse BusyPolicy = "refuse"
)

type opFault struct {
	state, reason, message string
	// later keeps the operation pending on submission, even with no
	// OperationDelay: it fails when the next request or Settle advances it.
	later bool
}

// New returns a fake with no resources. Start serves it on a loopback port
// and returns its endpoint ("http://127.0.0.1:<port>/v2"); Close stops it.
func New(opts Options) *Server {
	if opts.Zone == "" {
		opts.Zone = "ch-gva-2"
	}
	if opts.QuotaLimit == 0 {
		opts.QuotaLimit = 50
	}
	s := &Server{
		opts:      opts,
		pools:     map[string]*pool{},
		instances: map[string]*instance{},
		types:     map[string]*exoapi.InstanceType{},
		ops:       map[string]*operation{},

		heldRemovals: map[string]bool{},
	}
	s.API = fakecloud.NewAPI(fakecloud.APIConfig{
		Routes:        http.HandlerFunc(s.serve),
		Operation:     func(r *http.Request, _ []byte) string { return exoapi.OperationName(r) },
		WriteError:    writeError,
		MalformedBody: `{"id": "trunc`,
		BasePath:      BasePath,
		Now:           opts.Now,
	})
	// The kit's clock, wall time unless Options.Now is given.
	s.opts.Now = s.API.Now
	return s
}

func (s *Server) newID(kind int) string {
	s.seq++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", kind, s.seq)
}

// AddInstanceType registers an instance type and returns its id (generated
// when t.ID is empty).
func (s *Server) AddInstanceType(t exoapi.InstanceType) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.ID == "" {
		t.ID = s.newID(1)
	}
	s.types[t.ID] = &t
	return t.ID
}

// AddSKSCluster adds an empty SKS cluster and returns its id.
func (s *Server) AddSKSCluster(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &cluster{id: s.newID(2), name: name}
	s.clusters = append(s.clusters, c)
	return c.id
}

// PoolSeed describes a pool (or nodepool) to seed.
type PoolSeed struct {
	Name           string
	Size           int
	InstanceTypeID string
	DiskSizeGiB    int
	// Labels and Taints of a nodepool are its Kubernetes node labels and
	// taints; Labels of a plain pool are the pool's resource labels.
	Labels map[string]string
	Taints []exoapi.Taint
}

// AddNodepool adds a nodepool with its instance pool and Size running members;
// it returns the nodepool id and the instance-pool id.
func (s *Server) AddNodepool(clusterID string, seed PoolSeed) (nodepoolID, poolID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c *cluster
	for _, cl := range s.clusters {
		if cl.id == clusterID {
			c = cl
		}
	}
	if c == nil {
		panic("fakeapi: unknown cluster " + clusterID)
	}
	np := &nodepool{id: s.newID(3), clusterID: clusterID, name: seed.Name, labels: seed.Labels, taints: seed.Taints}
	p := s.addPoolLocked("nodepool-"+seed.Name, seed)
	p.nodepoolID = np.id
	np.poolID = p.id
	c.nodepools = append(c.nodepools, np)
	return np.id, p.id
}

// AddInstancePool adds a plain instance pool with Size running members.
func (s *Server) AddInstancePool(seed PoolSeed) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.addPoolLocked(seed.Name, seed)
	p.labels = maps.Clone(seed.Labels)
	return p.id
}

// RemoveInstancePool deletes a plain instance pool and its members, as a
// user deleting it in the console would.
func (s *Server) RemoveInstancePool(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pools[id]
	if p == nil {
		return
	}
	for _, m := range p.members {
		delete(s.instances, m)
	}
	delete(s.pools, id)
	s.poolOrder = slices.DeleteFunc(s.poolOrder, func(o string) bool { return o == id })
}

// AddLabels adds labels to a plain instance pool, or to the nodepool
// managing it together with taints, as a user editing them would (per-group
// settings live there).
func (s *Server) AddLabels(poolID string, labels map[string]string, taints []exoapi.Taint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pools[poolID]
	if !ok {
		panic("fakeapi: unknown pool " + poolID)
	}
	merge := func(dst map[string]string) map[string]string {
		out := maps.Clone(dst)
		if out == nil {
			out = map[string]string{}
		}
		maps.Copy(out, labels)
		return out
	}
	if p.nodepoolID == "" {
		p.labels = merge(p.labels)
		return
	}
	for _, c := range s.clusters {
		for _, np := range c.nodepools {
			if np.id == p.nodepoolID {
				np.labels = merge(np.labels)
				np.taints = append(slices.Clone(np.taints), taints...)
			}
		}
	}
}

func (s *Server) addPoolLocked(name string, seed PoolSeed) *pool {
	p := &pool{id: s.newID(4), name: name, typeID: seed.InstanceTypeID, diskSize: seed.DiskSizeGiB}
	s.pools[p.id] = p
	s.poolOrder = append(s.poolOrder, p.id)
	now := s.opts.Now()
	for i := 0; i < seed.Size; i++ {
		in := s.newInstanceLocked(p, now)
		in.state = InstanceRunning
	}
	p.size = seed.Size
	return p
}

// AddInstance adds an instance that no pool manages (e.g. a control plane).
func (s *Server) AddInstance(name, typeID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := &instance{id: s.newID(5), name: name, typeID: typeID, state: InstanceRunning, createdAt: s.opts.Now()}
	s.instances[in.id] = in
	return in.id
}

func (s *Server) newInstanceLocked(p *pool, now time.Time) *instance {
	in := &instance{id: s.newID(6), poolID: p.id, typeID: p.typeID, state: InstanceStarting, createdAt: now, readyAt: now.Add(s.opts.ProvisionDelay)}
	in.name = fmt.Sprintf("%s-%s", p.name, in.id[len(in.id)-5:])
	s.instances[in.id] = in
	p.members = append(p.members, in.id)
	return in
}

// SetInstanceState forces an instance's state (e.g. "error", "stopped").
func (s *Server) SetInstanceState(id, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.instances[id]; in != nil {
		in.state = state
	}
}

// SetPoolState forces a pool's reported state ("" returns to the computed one).
func (s *Server) SetPoolState(id, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pools[id]; p != nil {
		p.stateOverride = state
	}
}

// SetQuotaLimit changes the instance quota (-1 = unlimited).
func (s *Server) SetQuotaLimit(limit int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.QuotaLimit = limit
}

// FailNextOperation makes the next accepted scale/evict end in state
// ("failure" or "timeout") with reason and message, without changing the pool.
func (s *Server) FailNextOperation(state, reason, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opFaults = append(s.opFaults, opFault{state: state, reason: reason, message: message})
}

// FailNextOperationLater is FailNextOperation with the operation pending
// when submitted: it ends in state at the next request or Settle, as a
// scale that the cloud accepts and then fails to carry out.
func (s *Server) FailNextOperationLater(state, reason, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opFaults = append(s.opFaults, opFault{state: state, reason: reason, message: message, later: true})
}

// Settle completes all pending provisioning, removals and operations now.
func (s *Server) Settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(time.Time{}, true)
}

// advanceLocked applies every transition due by now (all of them if force).
func (s *Server) advanceLocked(now time.Time, force bool) {
	if now.IsZero() {
		now = s.opts.Now()
	}
	for id, in := range s.instances {
		if force {
			in.unlisted = false
		}
		switch in.state {
		case InstanceStarting:
			if force || !now.Before(in.readyAt) {
				in.state = InstanceRunning
			}
		case InstanceDestroying:
			if force || (!in.lagging && !now.Before(in.goneAt)) {
				delete(s.instances, id)
				if p := s.pools[in.poolID]; p != nil {
					p.members = remove(p.members, id)
				}
			}
		}
	}
	for _, op := range s.ops {
		if op.queued != nil && (force || s.poolStateLocked(op.pool) == PoolRunning) {
			op.queued()
			op.queued = nil
			op.doneAt = now.Add(s.opts.OperationDelay)
		}
		if op.state == exoapi.OperationPending && op.queued == nil && (force || !now.Before(op.doneAt)) {
			op.state = op.final
		}
	}
}

func remove(list []string, id string) []string {
	out := list[:0]
	for _, x := range list {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

func (s *Server) poolStateLocked(p *pool) string {
	if p.stateOverride != "" {
		return p.stateOverride
	}
	state := PoolRunning
	for _, id := range p.members {
		switch s.instances[id].listedState() {
		case InstanceStarting:
			return PoolScalingUp
		case InstanceDestroying:
			state = PoolScalingDown
		}
	}
	return state
}

// InstanceView is a snapshot of one instance for assertions.
type InstanceView struct {
	ID, Name, State, PoolID string
}

// PoolView is a snapshot of one pool for assertions.
type PoolView struct {
	ID, Name, State string
	Size            int
	NodepoolID      string
	Members         []InstanceView
}

// Pool returns the current state of pool id (after due transitions).
func (s *Server) Pool(id string) (PoolView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(time.Time{}, false)
	p := s.pools[id]
	if p == nil {
		return PoolView{}, false
	}
	v := PoolView{ID: p.id, Name: p.name, State: s.poolStateLocked(p), Size: p.size, NodepoolID: p.nodepoolID}
	for _, m := range p.members {
		in := s.instances[m]
		v.Members = append(v.Members, InstanceView{ID: in.id, Name: in.name, State: in.state, PoolID: in.poolID})
	}
	return v, true
}

// PoolIDs returns every pool id in creation order.
func (s *Server) PoolIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.poolOrder...)
}

// Instance returns one instance.
func (s *Server) Instance(id string) (InstanceView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.instances[id]
	if in == nil {
		return InstanceView{}, false
	}
	return InstanceView{ID: in.id, Name: in.name, State: in.state, PoolID: in.poolID}, true
}

// OperationStates counts operations by state.
func (s *Server) OperationStates() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, op := range s.ops {
		out[op.state]++
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func trimBase(path string) (string, bool) {
	if !strings.HasPrefix(path, BasePath+"/") {
		return "", false
	}
	return strings.TrimPrefix(path, BasePath), true
}

// LaunchInstance adds a running member to an instance pool behind the
// client's back: it fills an unfulfilled request when the pool's size is
// above its member count, otherwise the size rises by one, as when someone
// scales the pool in the console.
func (s *Server) LaunchInstance(poolID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pools[poolID]
	if p == nil {
		return "", fmt.Errorf("fakeapi: no instance pool %q", poolID)
	}
	now := s.opts.Now()
	s.advanceLocked(now, false)
	live := 0
	for _, id := range p.members {
		if in := s.instances[id]; in != nil && in.state != InstanceDestroying {
			live++
		}
	}
	in := s.newInstanceLocked(p, now)
	in.state = InstanceRunning
	p.size = max(p.size, live+1)
	return in.id, nil
}

// ListScaleUpLate makes the pool's next growing :scale add members that
// neither the pool nor the instance list shows until Settle, while the
// pool's size counts them: members appear after the operation started
// (when is undocumented). A smaller size meanwhile removes members as
// ScaleDownOldestFirst says, unlisted ones included.
func (s *Server) ListScaleUpLate(poolID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pools[poolID]
	if p == nil {
		return fmt.Errorf("fakeapi: no instance pool %q", poolID)
	}
	p.listLate = true
	return nil
}

// HoldRemoval makes the removal of instance id (an eviction or a shrinking
// scale), once accepted, leave the instance listed as it was until Settle:
// a removal the cloud took while its lists have not caught up. The instance
// no longer counts toward the pool meanwhile.
func (s *Server) HoldRemoval(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heldRemovals[id] = true
}

// destroyLocked starts removing in, or holds its removal (HoldRemoval).
func (s *Server) destroyLocked(in *instance, now time.Time) {
	if s.heldRemovals[in.id] {
		delete(s.heldRemovals, in.id)
		in.lagging, in.listedAs = true, in.state
	}
	in.state, in.goneAt = InstanceDestroying, now.Add(s.opts.RemovalDelay)
}

// listedState is the state the lists show for in.
func (in *instance) listedState() string {
	if in.lagging {
		return in.listedAs
	}
	return in.state
}
