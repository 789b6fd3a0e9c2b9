package cloudprovidertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// The operations of the in-memory cloud's mutating requests, as a
// fakecloud.Fault selects them (Operation).
const (
	InMemoryOpResize = "resize"
	InMemoryOpDelete = "delete"
	// InMemoryOpList selects the listing a Refresh reads (not mutating).
	InMemoryOpList = "list"
)

type cloudInstance struct {
	id    string
	state cloudprovider.InstanceState
	// failed marks an instance that failed to start: it stays in the group,
	// counted in its desired size, until it is deleted.
	failed bool
	// removed marks an instance whose removal the cloud took while its
	// listing still shows it as it was (HoldRemoval), until Settle.
	removed bool
	// unlisted marks an instance the cloud holds and does not list yet
	// (ListScaleUpLate), until Settle.
	unlisted bool
}

type cloudGroup struct {
	spec      CloudGroup
	desired   int
	instances []cloudInstance
	// failedSlots is how many of desired the cloud failed to fill (a
	// scale-up it accepted and could not carry out), reported as such.
	failedSlots int
}

// live counts the instances that are not going away.
func (g *cloudGroup) live() int {
	n := 0
	for _, in := range g.instances {
		if in.state != cloudprovider.InstanceDeleting && !in.removed {
			n++
		}
	}
	return n
}

// cancellable reports whether a shrink may cancel the instance: one still
// being created for a request, not one that failed.
func (in cloudInstance) cancellable() bool {
	return in.state == cloudprovider.InstanceCreating && !in.failed && !in.removed
}

// InMemoryCloud is a tiny stateful "cloud" of groups and instances. It counts
// requests and can fail the next n of them, like the providers' HTTP fakes.
// Its size is absolute, as in the three clouds: a resize sets the desired
// number.
type InMemoryCloud struct {
	mu       sync.Mutex
	groups   map[string]*cloudGroup
	order    []string
	calls    int
	failNext int
	nextID   int
	// failScaleUp names the groups whose next scale-up is accepted and then
	// left unfilled.
	failScaleUp map[string]bool
	// noQuota refuses every scale-up for lack of quota.
	noQuota bool
	// holdRemoval names the instances whose removal the listing does not
	// show until Settle (HoldRemoval).
	holdRemoval map[string]bool
	// listLate names the groups whose next scale-up is not listed until
	// Settle (ListScaleUpLate).
	listLate map[string]bool
	// faults answers mutating requests instead of the cloud (AddFault).
	faults fakecloud.FaultQueue
	// Deleted records every instance id removed by a delete request.
	deleted []string
}

// NewInMemoryCloud seeds a cloud with groups.
func NewInMemoryCloud(groups ...CloudGroup) *InMemoryCloud {
	c := &InMemoryCloud{groups: map[string]*cloudGroup{}, failScaleUp: map[string]bool{}, holdRemoval: map[string]bool{}, listLate: map[string]bool{}}
	for _, g := range groups {
		cg := &cloudGroup{spec: g, desired: g.Running}
		for i := 0; i < g.Running; i++ {
			cg.instances = append(cg.instances, cloudInstance{id: c.newID(g.ID), state: cloudprovider.InstanceRunning})
		}
		c.groups[g.ID] = cg
		c.order = append(c.order, g.ID)
	}
	return c
}

func (c *InMemoryCloud) newID(group string) string {
	c.nextID++
	return fmt.Sprintf("%s-%04d", group, c.nextID)
}

// Calls returns the number of requests received.
func (c *InMemoryCloud) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// FailNext makes the next n requests fail with ErrUnavailable.
func (c *InMemoryCloud) FailNext(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failNext = n
}

// SetTags replaces a group's tags, as a user editing the group would.
func (c *InMemoryCloud) SetTags(groupID string, tags map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.groups[groupID]; ok {
		g.spec.Tags = maps.Clone(tags)
	}
}

// Deleted returns the ids of instances deleted so far.
func (c *InMemoryCloud) Deleted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.deleted...)
}

// Settle finishes pending work: creating instances run, deleting ones
// vanish; failed instances stay until deleted.
func (c *InMemoryCloud) Settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.groups {
		kept := g.instances[:0]
		for _, in := range g.instances {
			switch {
			case in.state == cloudprovider.InstanceDeleting, in.removed:
				continue
			case in.state == cloudprovider.InstanceCreating && !in.failed:
				in.state = cloudprovider.InstanceRunning
			}
			in.unlisted = false
			kept = append(kept, in)
		}
		g.instances = kept
	}
}

// LaunchUnseen launches one running instance in the group, as another actor
// or the cloud filling a request would, and returns its id: it fills an
// unfilled slot when the desired number is above the instances, otherwise
// the desired number rises by one.
func (c *InMemoryCloud) LaunchUnseen(groupID string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.group(groupID)
	if err != nil {
		return "", err
	}
	if g.desired <= g.live() {
		g.desired++
	}
	if g.failedSlots > 0 {
		g.failedSlots--
	}
	id := c.newID(groupID)
	g.instances = append(g.instances, cloudInstance{id: id, state: cloudprovider.InstanceRunning})
	return id, nil
}

// AddFailed adds one instance to the group that failed to start, counted in
// its desired number, and returns its id.
func (c *InMemoryCloud) AddFailed(groupID string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.group(groupID)
	if err != nil {
		return "", err
	}
	id := c.newID(groupID)
	g.instances = append(g.instances, cloudInstance{id: id, state: cloudprovider.InstanceCreating, failed: true})
	g.desired++
	return id, nil
}

// FailNextScaleUp makes the cloud accept the group's next scale-up and leave
// the new slots unfilled, reporting them as failed.
func (c *InMemoryCloud) FailNextScaleUp(groupID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failScaleUp[groupID] = true
}

// ListScaleUpLate makes the cloud list the instances of the group's next
// scale-up only after Settle. A shrink meanwhile cancels them first, as it
// does every instance still being created.
func (c *InMemoryCloud) ListScaleUpLate(groupID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listLate[groupID] = true
}

// HoldRemoval makes the cloud, once it takes the removal of instance id,
// keep listing the instance as it was until Settle: a removal its listing
// has not caught up with.
func (c *InMemoryCloud) HoldRemoval(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holdRemoval[id] = true
}

// RefuseForQuota makes the cloud refuse every scale-up for lack of quota.
func (c *InMemoryCloud) RefuseForQuota() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noQuota = true
}

// request accounts for one API request and returns the injected failure,
// if any. It marks ctx's records as the HTTP stack does for a request that
// leaves (cloudhttp.MarkSent): this cloud is reached in-process.
func (c *InMemoryCloud) request(ctx context.Context) error {
	cloudhttp.MarkSent(ctx)
	c.calls++
	if c.failNext > 0 {
		c.failNext--
		// A failed cloud call, not a refusal of ours: no answer, outcome unknown.
		return cloudhttp.NoAnswer(InMemoryProviderName, "request", errors.New("injected failure"))
	}
	return nil
}

// groupRequest accounts for one API request about group id and returns the
// group; c.mu is held.
func (c *InMemoryCloud) groupRequest(ctx context.Context, id string) (*cloudGroup, error) {
	if err := c.request(ctx); err != nil {
		return nil, err
	}
	return c.group(id)
}

// group returns group id; c.mu is held.
func (c *InMemoryCloud) group(id string) (*cloudGroup, error) {
	g, ok := c.groups[id]
	if !ok {
		return nil, cloudprovider.Errorf(cloudprovider.ErrNotFound, "group %s", id)
	}
	return g, nil
}

// clone copies the group as a listing shows it.
func (g *cloudGroup) clone() cloudGroup {
	cp := *g
	cp.instances = nil
	for _, in := range g.instances {
		if !in.unlisted {
			cp.instances = append(cp.instances, in)
		}
	}
	return cp
}

// list reads every group. A queued fault for InMemoryOpList holds the
// answer until its Release, answered with the groups as they were when the
// request arrived (AnswerOnArrival) or when it is released, or answers
// with its status instead.
func (c *InMemoryCloud) list(ctx context.Context) ([]cloudGroup, error) {
	c.mu.Lock()
	if err := c.request(ctx); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	out := c.snapshot()
	f, hit := c.faults.Take(fakecloud.FaultRequest{Operation: InMemoryOpList})
	c.mu.Unlock()
	if !hit {
		return out, nil
	}
	if f.Arrived != nil {
		close(f.Arrived)
	}
	if f.Release != nil {
		select {
		case <-f.Release:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: no answer before the caller gave up: %w", InMemoryOpList, ctx.Err())
		}
	}
	if f.Status != 0 {
		return nil, cloudhttp.AnswerError(InMemoryProviderName, InMemoryOpList, cloudhttp.ErrorAnswer{Status: f.Status,
			Message: http.StatusText(f.Status), Cause: errors.New(http.StatusText(f.Status))})
	}
	if !f.AnswerOnArrival {
		c.mu.Lock()
		out = c.snapshot()
		c.mu.Unlock()
	}
	return out, nil
}

// snapshot copies every group, in order; c.mu is held.
func (c *InMemoryCloud) snapshot() []cloudGroup {
	out := make([]cloudGroup, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, c.groups[id].clone())
	}
	return out
}

// get reads one group.
func (c *InMemoryCloud) get(ctx context.Context, id string) (cloudGroup, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.groupRequest(ctx, id)
	if err != nil {
		return cloudGroup{}, err
	}
	return g.clone(), nil
}

// resize sets the desired size, an absolute number as in the three clouds:
// growing adds creating instances (or, after FailNextScaleUp, leaves the new
// slots unfilled); shrinking gives up unfilled slots, then cancels creating
// instances, then removes instances of its own choosing (the newest), as a
// cloud does with a size below what it runs.
func (c *InMemoryCloud) resize(ctx context.Context, id string, desired int) error {
	return c.mutate(ctx, InMemoryOpResize, func() error { return c.applyResize(id, desired) })
}

// applyResize carries a resize out; c.mu is held.
func (c *InMemoryCloud) applyResize(id string, desired int) error {
	g, err := c.group(id)
	if err != nil {
		return err
	}
	if desired > g.desired && c.noQuota {
		return cloudprovider.Errorf(cloudprovider.ErrQuotaExceeded, "group %s: instance quota exceeded", id)
	}
	if desired < 0 {
		return cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "group %s: size %d", id, desired)
	}
	live := g.live()
	if desired > g.desired && c.failScaleUp[id] {
		delete(c.failScaleUp, id)
		g.failedSlots += desired - max(g.desired, live)
	} else if live < desired {
		for ; live < desired; live++ {
			g.instances = append(g.instances, cloudInstance{id: c.newID(id), state: cloudprovider.InstanceCreating, unlisted: c.listLate[id]})
		}
		delete(c.listLate, id)
	}
	for i := len(g.instances) - 1; i >= 0 && live > desired; i-- {
		if g.instances[i].cancellable() {
			g.instances = append(g.instances[:i], g.instances[i+1:]...)
			live--
		}
	}
	for i := len(g.instances) - 1; i >= 0 && live > desired; i-- {
		if g.instances[i].state != cloudprovider.InstanceDeleting && !g.instances[i].removed {
			g.instances[i].state = cloudprovider.InstanceDeleting
			live--
		}
	}
	g.desired = desired
	g.failedSlots = min(g.failedSlots, max(desired-live, 0))
	return nil
}

func (c *InMemoryCloud) deleteInstance(ctx context.Context, groupID, instanceID string) error {
	return c.mutate(ctx, InMemoryOpDelete, func() error { return c.applyDelete(groupID, instanceID) })
}

// applyDelete carries a deletion out; c.mu is held.
func (c *InMemoryCloud) applyDelete(groupID, instanceID string) error {
	g, err := c.group(groupID)
	if err != nil {
		return err
	}
	for i, in := range g.instances {
		if in.id == instanceID && in.state != cloudprovider.InstanceDeleting && !in.removed {
			if c.holdRemoval[instanceID] {
				g.instances[i].removed = true
			} else {
				g.instances[i].state = cloudprovider.InstanceDeleting
			}
			g.desired--
			c.deleted = append(c.deleted, instanceID)
			return nil
		}
	}
	return cloudprovider.Errorf(cloudprovider.ErrNotFound, "instance %s in group %s", instanceID, groupID)
}

// AddFault queues f for the cloud's mutating requests (selected by
// Operation: InMemoryOpResize, InMemoryOpDelete). The cloud answers it as
// the HTTP fakes do, in-process: a status states the outcome by the shared
// rule (cloudprovider.AnswerOutcome), a 2xx Body or Malformed is a success
// that does not state the resulting size, Hang and Reset are no answer,
// AfterApply carries the request out first, and Delay or Release hold it
// (carried out after the caller gave up only with AfterApply).
func (c *InMemoryCloud) AddFault(f fakecloud.Fault) { c.faults.Add(f) }

// ClearFaults drops every fault still queued.
func (c *InMemoryCloud) ClearFaults() { c.faults.Clear() }

// mutate runs one mutating request: apply carries it out under c.mu and
// returns the cloud's own refusal, if any; a queued fault answers instead.
func (c *InMemoryCloud) mutate(ctx context.Context, op string, apply func() error) error {
	c.mu.Lock()
	if err := c.request(ctx); err != nil {
		c.mu.Unlock()
		return err
	}
	f, hit := c.faults.Take(fakecloud.FaultRequest{Operation: op, Mutating: true})
	if !hit {
		defer c.mu.Unlock()
		return apply()
	}
	c.mu.Unlock()
	locked := func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		return apply()
	}
	if f.Delay > 0 || f.Release != nil {
		held := make(chan error, 1)
		go func() {
			time.Sleep(f.Delay)
			if f.Release != nil {
				<-f.Release
			}
			var err error
			if f.AfterApply || ctx.Err() == nil {
				err = locked()
			}
			if f.Landed != nil {
				close(f.Landed)
			}
			held <- err
		}()
		select {
		case err := <-held:
			if f.PassThrough {
				return err
			}
		case <-ctx.Done():
			return fmt.Errorf("%s: no answer before the caller gave up: %w", op, ctx.Err())
		}
	} else if f.AfterApply {
		_ = locked()
	}
	switch {
	case f.Reset:
		return fmt.Errorf("%s: connection reset", op)
	case f.Hang:
		<-ctx.Done()
		return fmt.Errorf("%s: no answer: %w", op, ctx.Err())
	}
	status := f.AnswerStatus()
	if status >= 200 && status < 300 {
		return cloudhttp.MalformedAnswer(InMemoryProviderName, op, status, "the answer does not state the resulting size")
	}
	msg := f.Message
	if msg == "" {
		msg = http.StatusText(status)
	}
	return cloudhttp.AnswerError(InMemoryProviderName, op, cloudhttp.ErrorAnswer{Status: status, Message: msg, Cause: errors.New(msg)})
}
