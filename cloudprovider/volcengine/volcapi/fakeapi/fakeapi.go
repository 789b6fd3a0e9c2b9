// Package fakeapi is an in-process fake of the parts of the Volcengine OpenAPI
// (Auto Scaling 2020-01-01, ECS 2020-04-01, VPC 2020-04-01) that the provider
// uses. It speaks the real wire format: GET / with every parameter in the query
// string, routed on Action, answered with the ResponseMetadata/Result envelope,
// errors carried in ResponseMetadata.Error (in 4xx/5xx bodies and, as the real
// gateway sometimes does, in HTTP 200 bodies), PageNumber/PageSize and
// NextToken paging, and instance lifecycle progression driven by an injected clock
// (Options.Now). Faults, the request log and the loopback server come from
// fakecloud.API.
//
// Tests drive it through the real volcengine-go-sdk; --simulate serves it on a
// loopback port.
package fakeapi

import (
	"fmt"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// Instance status values of the Auto Scaling API.
const (
	StatusInit        = "Init"
	StatusPending     = "Pending"
	StatusPendingWait = "Pending:Wait"
	StatusInService   = "InService"
	StatusError       = "Error"
	StatusRemoving    = "Removing"
	StatusRemoveWait  = "Removing:Wait"
	StatusStopped     = "Stopped"
	StatusProtected   = "Protected"
	StatusStandby     = "Standby"
)

// Group is a scaling group as the fake stores it.
type Group struct {
	ID   string
	Name string
	Min  int
	Max  int
	// Desired is DesireInstanceNumber; -1 means the group was created without one.
	Desired               int
	ActiveConfigID        string
	LaunchTemplateID      string
	LaunchTemplateVersion string
	// LaunchTemplateTypes are the LaunchTemplateOverrides' instance types.
	LaunchTemplateTypes []string
	SubnetIDs           []string
	Tags                map[string]string
	LifecycleState      string
}

// Configuration is a scaling configuration.
type Configuration struct {
	ID            string
	GroupID       string
	InstanceTypes []string
	ImageID       string
	ZoneID        string
}

// InstanceType is an ECS instance type.
type InstanceType struct {
	ID        string
	Family    string
	CPUs      int
	MemoryMiB int
	GPUCount  int
	GPUModel  string
}

// Subnet is a VPC subnet.
type Subnet struct {
	ID     string
	ZoneID string
}

// Image is an ECS image.
type Image struct {
	ID           string
	Architecture string
	OSType       string
}

// Instance is a scaling instance.
type Instance struct {
	ID      string
	GroupID string
	Status  string
	ZoneID  string
	Created time.Time
	// readyAt is when a Pending instance leaves Pending; goneAt when a
	// Removing instance disappears.
	readyAt time.Time
	goneAt  time.Time
	failing bool
	// errorSince is when the instance went to Error.
	errorSince time.Time
	// lagging is a removed instance the listing still shows with status
	// listedAs, its status before the removal, until Settle
	// (Server.HoldRemoval).
	lagging  bool
	listedAs string
}

// RelatedInstance is an instance touched by a scaling activity.
type RelatedInstance struct {
	InstanceID string
	Status     string
	Message    string
}

// Activity is a scaling activity.
type Activity struct {
	ID         string
	GroupID    string
	StatusCode string
	ResultMsg  string
	Related    []RelatedInstance
	Created    time.Time
}

// CreateFailure makes new instances of a group fail: they go from Pending to
// Error and a failed scaling activity records Code and Message.
type CreateFailure struct {
	Code    string
	Message string
	// NoInstances makes the activity fail before any instance exists (a
	// stock-out at launch): the desired number stays above the instance count.
	NoInstances bool
}

// Options configures a Server.
type Options struct {
	// Now is the clock driving provisioning (default time.Now); tests pass a
	// fakecloud.ManualClock's Now.
	Now func() time.Time
	// ProvisionDelay is how long a new instance stays Pending (default 0: it is
	// InService at the next request after creation).
	ProvisionDelay time.Duration
	// RemoveDelay is how long a removed instance stays Removing.
	RemoveDelay time.Duration
	// Region is echoed in ResponseMetadata (default cn-beijing).
	Region string
	// LenientMinOnRemove lets RemoveInstances with DecreaseDesiredCapacity
	// take the desired number below the group's min. By default the fake is
	// strict and refuses, as the desired number must stay within min..max
	// (BytePlus Auto Scaling API reference, ModifyScalingGroup and
	// RemoveInstances parameters).
	LenientMinOnRemove bool
	// CheckInterval is the period of the service's own check, which brings
	// each group's instances to its desired number and removes Error
	// instances (BytePlus Auto Scaling docs, "health check": the service
	// reconciles actual and desired numbers periodically; the period is not
	// documented). A change of the desired number is acted on at the next
	// check, never inside ModifyScalingGroup. Zero runs the check at every
	// request after the one that made the change.
	CheckInterval time.Duration
	// ErrorGrace is how long an instance stays Error before the check
	// removes it (and, if the desired number still wants it, replaces it).
	// Undocumented; default one minute.
	ErrorGrace time.Duration
	// ActivitiesOldestFirst lists scaling activities oldest first. The API
	// does not document its order; the default is newest first.
	ActivitiesOldestFirst bool
	// UnrelatedForUnknownIDs makes a DescribeScalingGroups query that
	// matches no group answer with every group instead of an empty list:
	// the API may answer unknown ids with unrelated groups
	// (docs/providers/volcengine.md).
	UnrelatedForUnknownIDs bool
	// TotalCountSkew is added to every TotalCount the fake reports, for a
	// client that must page by what it receives, not by the count.
	TotalCountSkew int
	// AccessKey, when set, is the only access key the fake accepts: a
	// request signed with another gets the gateway's 401 InvalidAccessKey.
	// Empty accepts any key.
	AccessKey string
	// Regions are the regions the fake serves, matched against the region
	// of the request's signing scope (the only place a Volcengine request
	// names its region: one gateway host serves them all). Empty serves
	// every region, so a test signing for any region sees the fake's store.
	Regions []string
	// OtherRegion is what the fake does with a request signed for a region
	// outside Regions. The gateway's answer is undocumented, so each
	// plausible one is offered; the default refuses.
	OtherRegion RegionPolicy
	// Policy, when set, is the access key's IAM policy (ParsePolicy, or a
	// plain list of "service:Action" names with fakecloud.AllowOnly): an
	// action it does not allow is answered 403 AccessDenied (BytePlus
	// common error codes).
	Policy *fakecloud.Permissions
}

// RegionPolicy is what the fake does with a request signed for a region it
// does not serve.
type RegionPolicy int

const (
	// RefuseRegion answers 400 InvalidRegion in the gateway's error
	// envelope (codeInvalidRegion says why this code is our assumption).
	RefuseRegion RegionPolicy = iota
	// EmptyRegion serves the region as one holding nothing: no groups,
	// configurations, instances, activities, instance types, subnets or
	// images, and every mutation refused as for an unknown group.
	EmptyRegion
)

// Server is the fake API. The zero value is not usable; call New.
type Server struct {
	*fakecloud.API
	opts Options

	mu             sync.Mutex
	groups         map[string]*Group
	configs        map[string]*Configuration
	types          map[string]*InstanceType
	subnets        map[string]*Subnet
	images         map[string]*Image
	instances      map[string]*Instance
	activities     []*Activity
	createFailures map[string]CreateFailure
	seq            int
	// nextCheck is when the service's periodic check runs next.
	nextCheck time.Time
	// heldRemovals are the instances whose removal HoldRemoval delays.
	heldRemovals map[string]bool
	// launchLate are the groups whose launches LaunchLate defers.
	launchLate map[string]bool
}

// New returns an empty fake.
func New(opts Options) *Server {
	if opts.Region == "" {
		opts.Region = "cn-beijing"
	}
	if opts.ErrorGrace == 0 {
		opts.ErrorGrace = time.Minute
	}
	s := newStore(opts)
	s.API = fakecloud.NewAPI(fakecloud.APIConfig{
		Routes:        http.HandlerFunc(s.serve),
		Operation:     actionOf,
		WriteError:    s.writeError,
		MalformedBody: `{"ResponseMetadata": {"RequestId": "broken`,
		ContentType:   contentType,
		Now:           opts.Now,
		// Every action arrives as GET; these are the ones that change the cloud.
		Mutating: func(_ *http.Request, action string) bool {
			return action == ActionModifyScalingGroup || action == ActionRemoveInstances
		},
	})
	// The kit's clock, wall time unless Options.Now is given.
	s.opts.Now = s.API.Now
	return s
}

// newStore returns a Server with an empty store and no gateway: New wraps
// it in one, and a region the fake serves as empty is one of its own.
func newStore(opts Options) *Server {
	return &Server{
		opts:           opts,
		groups:         map[string]*Group{},
		configs:        map[string]*Configuration{},
		types:          map[string]*InstanceType{},
		subnets:        map[string]*Subnet{},
		images:         map[string]*Image{},
		instances:      map[string]*Instance{},
		createFailures: map[string]CreateFailure{},
		heldRemovals:   map[string]bool{},
		launchLate:     map[string]bool{},
	}
}

// AddGroup stores g (copied). A group with Desired >= 0 gets its missing
// instances at the service's next check (at once with Reconcile or Settle).
func (s *Server) AddGroup(g Group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := g
	c.SubnetIDs = append([]string(nil), g.SubnetIDs...)
	c.LaunchTemplateTypes = append([]string(nil), g.LaunchTemplateTypes...)
	c.Tags = map[string]string{}
	for k, v := range g.Tags {
		c.Tags[k] = v
	}
	if c.LifecycleState == "" {
		c.LifecycleState = "Active"
	}
	s.groups[c.ID] = &c
}

// AddConfiguration stores a scaling configuration.
func (s *Server) AddConfiguration(c Configuration) {
	c.InstanceTypes = append([]string(nil), c.InstanceTypes...)
	store(s, s.configs, c.ID, c)
}

// AddInstanceType stores an ECS instance type.
func (s *Server) AddInstanceType(t InstanceType) { store(s, s.types, t.ID, t) }

// AddSubnet stores a VPC subnet.
func (s *Server) AddSubnet(sn Subnet) { store(s, s.subnets, sn.ID, sn) }

// AddImage stores an ECS image.
func (s *Server) AddImage(im Image) { store(s, s.images, im.ID, im) }

// store puts v, a copy the caller no longer shares, under id. The stores
// are made once in New, so reading the field needs no lock.
func store[T any](s *Server, to map[string]*T, id string, v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	to[id] = &v
}

// AddInstance puts an instance with the given status into a group and returns
// its id. It does not change the group's desired number.
func (s *Server) AddInstance(groupID, status string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst := s.newInstanceLocked(groupID, status)
	if status == StatusError {
		inst.errorSince = inst.Created
	}
	return inst.ID
}

// SetLifecycleState sets a group's LifecycleState ("Active", "InActive", ...).
func (s *Server) SetLifecycleState(groupID, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[groupID]; ok {
		g.LifecycleState = state
	}
}

// Reconcile makes every group's instances match its desired number now, as
// the real service's health check eventually does.
func (s *Server) Reconcile() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reconcileAllLocked()
}

// SetCreateFailure makes new instances of groupID fail (nil clears it).
func (s *Server) SetCreateFailure(groupID string, f *CreateFailure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		delete(s.createFailures, groupID)
		return
	}
	s.createFailures[groupID] = *f
}

// SetGroupBounds changes a group's min/max/desired directly (as a console user would).
func (s *Server) SetGroupBounds(groupID string, minSize, maxSize, desired int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[groupID]; ok {
		g.Min, g.Max, g.Desired = minSize, maxSize, desired
	}
}

// SetGroupTags replaces a group's tags (as a console user would); per-group
// settings live there.
func (s *Server) SetGroupTags(groupID string, tags map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[groupID]; ok {
		g.Tags = maps.Clone(tags)
	}
}

// DeleteGroup removes a group and its instances.
func (s *Server) DeleteGroup(groupID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.groups, groupID)
	for id, inst := range s.instances {
		if inst.GroupID == groupID {
			delete(s.instances, id)
		}
	}
}

// Settle finishes all pending work at once: Pending instances become InService
// (or Error for failing groups) and Removing instances disappear.
func (s *Server) Settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.launchLate)
	s.reconcileAllLocked()
	for id, inst := range s.instances {
		switch inst.Status {
		case StatusInit, StatusPending, StatusPendingWait:
			s.finishProvisionLocked(inst)
		case StatusRemoving, StatusRemoveWait:
			delete(s.instances, id)
		}
	}
}

// Group returns a copy of a stored group.
func (s *Server) Group(id string) (Group, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	g, ok := s.groups[id]
	if !ok {
		return Group{}, false
	}
	return *g, true
}

// Instances returns copies of a group's instances, sorted by id.
func (s *Server) Instances(groupID string) []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	return s.instancesOfLocked(groupID)
}

func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%010d", prefix, s.seq)
}

// LaunchInstance adds an InService instance to a group behind the client's
// back: it fills an unfulfilled request when the desired number is above the
// live instance count, otherwise the desired number rises by one, as when
// someone scales the group in the console.
func (s *Server) LaunchInstance(groupID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[groupID]
	if !ok {
		return "", fmt.Errorf("fakeapi: no scaling group %q", groupID)
	}
	s.advanceLocked()
	live := 0
	for _, inst := range s.instances {
		if inst.GroupID == groupID && isLive(inst.Status) {
			live++
		}
	}
	inst := s.newInstanceLocked(groupID, StatusInService)
	g.Desired = max(g.Desired, live+1)
	return inst.ID, nil
}

// ReplaceInstance swaps one InService instance of a group for a new InService
// one in a single step, as the service's health check does when an instance
// fails and its replacement is up before the client looks again. The group's
// desired, total and lifecycle state stay the same, so DescribeScalingGroups
// does not reveal it: only a new instance listing does. It returns the new
// instance's id.
func (s *Server) ReplaceInstance(groupID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[groupID]; !ok {
		return "", fmt.Errorf("fakeapi: no scaling group %q", groupID)
	}
	s.advanceLocked()
	for _, old := range s.instancesOfLocked(groupID) {
		if old.Status == StatusInService {
			delete(s.instances, old.ID)
			return s.newInstanceLocked(groupID, StatusInService).ID, nil
		}
	}
	return "", fmt.Errorf("fakeapi: scaling group %q has no InService instance to replace", groupID)
}

// LaunchLate makes the service launch no instance for the group until
// Settle: its periodic check, which brings the instances to the desired
// number, comes after the change (whether the service acts at once or at
// that check is undocumented). A smaller desired number meanwhile leaves
// nothing to launch.
func (s *Server) LaunchLate(groupID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[groupID]; !ok {
		return fmt.Errorf("fakeapi: no scaling group %q", groupID)
	}
	s.launchLate[groupID] = true
	return nil
}

// HoldRemoval makes the removal of instance id, once accepted, leave the
// instance listed as it was (its status before the removal) until Settle:
// a removal the service took while DescribeScalingInstances has not caught
// up. The instance no longer counts as live meanwhile.
func (s *Server) HoldRemoval(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heldRemovals[id] = true
}

// listedStatus is the status DescribeScalingInstances shows for inst.
func listedStatus(inst Instance) string {
	if inst.lagging {
		return inst.listedAs
	}
	return inst.Status
}
