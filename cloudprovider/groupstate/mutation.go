package groupstate

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// DefaultUnknownOutcomeWindow is how long a group's mutations are refused
// after a mutation whose outcome is unknown (see MutationGuard): the HTTP
// client's overall request lifetime (cloudhttp.CallLifetime). A request of ours
// that a gateway still holds after that long is one our own client would
// have abandoned too, and is assumed never to land.
const DefaultUnknownOutcomeWindow = cloudhttp.CallLifetime

// NoUnknownOutcomeWindow, as GuardOptions.UnknownOutcomeWindow, turns the
// quarantine off (--unknown-outcome-window=0), leaving only the fresh read
// before the next mutation.
const NoUnknownOutcomeWindow time.Duration = -1

// GuardOptions are what a MutationGuard measures its quarantine with. The
// zero value is production's: the wall clock and the default window.
// registry.BuildOptions carries them from main to each provider's guards.
type GuardOptions struct {
	// Now is the clock the quarantine is measured with; nil: time.Now.
	// Tests pass a ManualClock's Now; in production it is real time, as the
	// late request the window waits for travels on the real network.
	Now func() time.Time
	// UnknownOutcomeWindow is how long a group's mutations are refused after
	// one whose outcome is unknown (--unknown-outcome-window); zero:
	// DefaultUnknownOutcomeWindow; negative (NoUnknownOutcomeWindow): no
	// quarantine.
	UnknownOutcomeWindow time.Duration
}

// Window returns the quarantine o sets: UnknownOutcomeWindow with its zero
// and negative values resolved.
func (o GuardOptions) Window() time.Duration {
	switch {
	case o.UnknownOutcomeWindow == 0:
		return DefaultUnknownOutcomeWindow
	case o.UnknownOutcomeWindow < 0:
		return 0
	}
	return o.UnknownOutcomeWindow
}

func (o GuardOptions) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// MutationGuard is the one mutation discipline every node group follows:
//
//  1. a lock per group that serialises read-compute-mutate sequences and
//     gives up when the caller's context ends, so a queue behind a slow cloud
//     call answers within CA's deadline; reads never take it;
//  2. the change is planned from the snapshot, refusing bad requests
//     without a cloud call;
//  3. the group is re-read from the cloud first when the previous mutation's
//     outcome is unknown (OutcomeUnknown), and also when the cloud resizes
//     by absolute size and this call shrinks the group (an instance launched
//     since the snapshot would otherwise let the cloud remove one of its own
//     choosing); the change is planned again from the fresh state;
//  4. one cloud call;
//  5. the answer is applied to the snapshot; when the cloud applied the
//     change without stating the resulting size, one read establishes it
//     (finish); when the outcome is unknown (OutcomeOf: no answer, a 5xx),
//     the group is marked so the next mutation re-reads first, and
//     quarantined: until the window (GuardOptions) has passed since the unknown
//     call ended, every mutation of the group is refused with ErrUnavailable
//     (retry later), without a cloud call.
//
// The quarantine exists because all three clouds resize by absolute size: a
// resize the client gave up on can still be applied by the cloud later,
// after a newer one, and the older, smaller size then makes the cloud remove
// instances nobody asked to delete. A fresh read cannot see a request that
// has not landed yet; only waiting until it can no longer land helps.
//
// Only an unknown outcome quarantines: a refusal proves nothing changed, and
// a change applied leaves nothing in flight. A call or transaction that sent
// no request (the HTTP stack marks each one that leaves, cloudhttp.TrackSends)
// is refused whatever its error states: nothing left the process.
//
// Providers reach these steps only through Do (one cloud call) and Transact
// (several calls under one lock: batched removals, a deletion that also
// lowers an absolute size). Both take plans: a function that computes the
// change from the state the group holds at that moment, after any fresh
// read, and returns it as a Plan (whether it shrinks by absolute size, and
// the cloud call). The guard, not the provider, decides when to read.
type MutationGuard struct {
	group     string
	opts      GuardOptions
	lock      chan struct{}
	unknown   atomic.Bool
	unknownAt atomic.Int64 // mutation clock, Unix nanoseconds; 0: none
	attempts  atomic.Uint64
	// ledger, when the guard is a Ledger's, records each cloud call so a
	// listing that races with it keeps its effect.
	ledger *Ledger
	// view is the served state of the group (Group.Guard binds it).
	view atomic.Pointer[Group]
}

// NewMutationGuard returns the guard of the group with id group, measuring
// its quarantine as opts says.
func NewMutationGuard(group string, opts GuardOptions) *MutationGuard {
	return &MutationGuard{group: group, opts: opts, lock: make(chan struct{}, 1)}
}

// Lock takes the group's mutation lock, or gives up when ctx ends.
func (g *MutationGuard) Lock(ctx context.Context) (unlock func(), err error) {
	select {
	case g.lock <- struct{}{}:
		// Counted when taken and when released, so a reader that sampled
		// the count while the mutation ran sees it change afterwards.
		g.attempts.Add(1)
		return func() { g.attempts.Add(1); <-g.lock }, nil
	case <-ctx.Done():
		return nil, cloudprovider.Refusal(fmt.Errorf("node group %s: waiting for another change of the group: %w", g.group, ctx.Err()))
	}
}

// beginMutation takes the group's mutation lock like Lock, then refuses
// while the group is quarantined after an outcome-unknown mutation (see
// MutationGuard); the error wraps ErrUnavailable, which CA receives as
// Unavailable and retries in a later loop.
func (g *MutationGuard) beginMutation(ctx context.Context) (unlock func(), err error) {
	unlock, err = g.Lock(ctx)
	if err != nil {
		return nil, err
	}
	if err := g.quarantined(); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

func (g *MutationGuard) quarantined() error {
	at := g.unknownAt.Load()
	if at == 0 {
		return nil
	}
	until := time.Unix(0, at).Add(g.opts.Window())
	if !g.opts.now().Before(until) {
		return nil
	}
	return cloudprovider.Refusal(fmt.Errorf("node group %s: an earlier change's outcome is unknown and the cloud may still apply it until %s; no change is sent before then: %w",
		g.group, until.UTC().Format(time.RFC3339), cloudprovider.ErrUnavailable))
}

// QuarantinedUntil returns when the group's quarantine after an
// outcome-unknown mutation ends, or the zero time when its mutations are not
// being refused.
func (g *MutationGuard) QuarantinedUntil() time.Time {
	at := g.unknownAt.Load()
	if at == 0 {
		return time.Time{}
	}
	until := time.Unix(0, at).Add(g.opts.Window())
	if !g.opts.now().Before(until) {
		return time.Time{}
	}
	return until
}

// Status is NodeGroup.Status of the group whose mutations g runs and whose
// snapshot holds settings: the guard reports the quarantine it enforces, so
// no provider reads it on its own.
func (g *MutationGuard) Status(settings groupconfig.GroupSettings) cloudprovider.GroupStatus {
	st := settings.Status()
	st.QuarantinedUntil = g.QuarantinedUntil()
	return st
}

// Attempts counts the mutations that took the lock, whatever their outcome:
// a refresh that reuses earlier reads compares it to tell that the group
// may have changed, even when the answer was lost.
func (g *MutationGuard) Attempts() uint64 { return g.attempts.Load() }

// served returns the group whose state the guard's mutations change, or
// nil for a guard outside a ledger.
func (g *MutationGuard) served() *Group {
	return g.view.Load()
}

// needsRead reports whether the previous mutation's outcome is unknown, so
// the next one must re-read the group first.
func (g *MutationGuard) needsRead() bool { return g.unknown.Load() }

// record notes the outcome of a mutating cloud call (OutcomeOf) and returns
// err: an unknown outcome quarantines the group and makes the next mutation
// re-read first; a change applied without its resulting size (SizeUnstated)
// makes the next mutation re-read first, without a quarantine (nothing is
// left in flight); a refusal and a plain success leave the marks alone (a
// fresh read clears them, see confirmed). finish also makes that read at
// once.
//
// A mutation answered NotFound also makes the next one re-read first, without
// a quarantine: nothing is left in flight, but the snapshot was wrong about
// the group. The common case is a retried delete whose first answer was lost:
// the retry finds the instance gone, the cloud has already lowered its
// target, and a later delete checked against the old target would take the
// group below min.
func (g *MutationGuard) record(err error) error {
	switch {
	case err == nil:
	case cloudprovider.OutcomeOf(err) == cloudprovider.MutationUnknown:
		g.unknown.Store(true)
		g.unknownAt.Store(g.opts.now().UnixNano())
	case cloudprovider.OutcomeOf(err) == cloudprovider.MutationApplied, errors.Is(err, cloudprovider.ErrNotFound):
		g.unknown.Store(true)
	}
	return err
}

// finish records err like record. When the cloud applied the change but its
// answer does not state the resulting size (SizeUnstated: an empty or
// unusable success body, a size other than asked, an Exoscale operation that
// timed out or finished partly), read re-reads the group at once, so the
// snapshot (TargetSize) holds what the cloud did instead of a guess. A
// success whose only fault was its body (ErrMalformedResponse) then
// returns nil; any other error is returned, the group already re-read. If
// the read fails, the next mutation re-reads first.
func (g *MutationGuard) finish(ctx context.Context, err error, read func(ctx context.Context) error) error {
	err = g.record(err)
	if !cloudprovider.SizeUnstated(err) {
		return err
	}
	if rerr := read(ctx); rerr != nil {
		return cloudprovider.WithOutcome(fmt.Errorf("node group %s: %w; reading the group after the change failed, the next change re-reads it first: %v", g.group, err, rerr), cloudprovider.MutationApplied)
	}
	g.confirmed()
	if errors.Is(err, cloudprovider.ErrMalformedResponse) {
		klog.InfoS("Cloud applied a change without stating the resulting size; read the group", "nodeGroup", g.group, "err", err)
		return nil
	}
	return err
}

// confirmed clears the outcome-unknown mark after a successful fresh read.
func (g *MutationGuard) confirmed() { g.unknown.Store(false) }

// Plan is one change of a group, as a plan function computes it from the
// group's snapshot at the moment the guard asks.
type Plan struct {
	// Shrinks marks a change the cloud applies as an absolute size smaller
	// than the cloud's current one: the guard re-reads the group first and
	// asks for the plan again, so it is computed from the fresh state.
	Shrinks bool
	// Call makes the one cloud call and, when the cloud applied the change,
	// applies it to the snapshot. Its error states the outcome (OutcomeOf:
	// applied, refused or unknown), which the guard records; nil is a
	// change applied; an error of a call that sent no request is refused.
	// A cloud reached without the HTTP stack marks its requests with
	// cloudhttp.MarkSent. A nil Call means there is nothing to send.
	Call func(ctx context.Context) error
	// Send makes the one cloud call and returns what it did to the group
	// (Effect); the guard applies the effect when the call's outcome is
	// applied. Its error states the outcome as Call's does. Send is used
	// when set, in place of Call.
	Send func(ctx context.Context) (Effect, error)
	// Apply is the Effect of a change that needs no cloud call (Call and
	// Send nil), applied at once under the group's lock.
	Apply Effect
}

// PlanFunc computes a change from the group's snapshot as it is when the
// guard calls it: before any cloud call, and again after a fresh read. An
// error refuses the change (bad input, a rule such as min), without a
// cloud call.
type PlanFunc func() (Plan, error)

// Mutation is one change of a group run by MutationGuard.Do.
type Mutation struct {
	// Plan computes the change; see PlanFunc.
	Plan PlanFunc
	// Read re-reads the group from the cloud into the snapshot.
	Read func(ctx context.Context) error
}

// Do runs a change of one cloud call under the discipline described on
// MutationGuard.
func (g *MutationGuard) Do(ctx context.Context, m Mutation) error {
	return g.Transact(ctx, m.Read, func(tx *Txn) error { return tx.Step(m.Plan) })
}

// Txn is a mutation of several cloud calls under one lock, run by
// MutationGuard.Transact. Each call is a step with its own plan, so each is
// computed from the state the previous steps left.
type Txn struct {
	g    *MutationGuard
	ctx  context.Context
	read func(ctx context.Context) error
	// fresh says the snapshot was read from the cloud and no call was
	// sent since, so an absolute-size step needs no second read.
	fresh bool
}

// Transact runs body as one mutation of the group: it takes the lock (or
// refuses while the group is quarantined) and gives body a Txn whose steps
// plan and make the cloud calls, reading the group with read where the
// discipline asks for it. A failed read refuses the step: no change was
// sent.
//
// An error of a transaction that sent no request (cloudhttp.TrackSends)
// is refused whatever it states: nothing left the process, so nothing can
// change in the cloud.
func (g *MutationGuard) Transact(ctx context.Context, read func(ctx context.Context) error, body func(tx *Txn) error) error {
	unlock, err := g.beginMutation(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if g := g.served(); g != nil {
		if err := g.CheckManaged(); err != nil {
			return cloudprovider.Refusal(err)
		}
	}
	ctx, sends := cloudhttp.TrackSends(ctx)
	return unsentRefused(body(&Txn{g: g, ctx: ctx, read: read}), sends)
}

// unsentRefused states err as refused when no request was sent.
func unsentRefused(err error, sends *cloudhttp.Sends) error {
	if err == nil || sends.Sent() || cloudprovider.OutcomeOf(err) == cloudprovider.MutationRefused {
		return err
	}
	return cloudprovider.Refusal(err)
}

func (tx *Txn) reread() (err error) {
	if l := tx.g.ledger; l != nil {
		l.sending(tx.g.group)
		defer func() { l.read(tx.g.group, err) }()
	}
	if err := tx.read(tx.ctx); err != nil {
		return cloudprovider.Refusal(fmt.Errorf("node group %s: re-read before the change: %w", tx.g.group, err))
	}
	tx.g.confirmed()
	tx.fresh = true
	return nil
}

// Step plans one change and sends it. The plan is made from the snapshot
// first, so a bad request is refused without any cloud call; when it
// shrinks by absolute size, or the previous change's outcome is unknown,
// and the snapshot is not fresh, the group is re-read and the plan computed
// again. The call's outcome is recorded (see MutationGuard); the returned
// error states it.
func (tx *Txn) Step(plan PlanFunc) error {
	p, err := plan()
	if err != nil {
		return cloudprovider.Refusal(err)
	}
	if (p.Shrinks || tx.g.needsRead()) && !tx.fresh {
		if err := tx.reread(); err != nil {
			return err
		}
		if p, err = plan(); err != nil {
			return cloudprovider.Refusal(err)
		}
	}
	return tx.send(p)
}

// Shrink is Step for a change the cloud applies as an absolute size (a
// deletion that lowers the desired number): the group is always re-read
// first, unless no call was sent since the last read, and the plan is
// computed only from that fresh state.
func (tx *Txn) Shrink(plan PlanFunc) error {
	if !tx.fresh {
		if err := tx.reread(); err != nil {
			return err
		}
	}
	p, err := plan()
	if err != nil {
		return cloudprovider.Refusal(err)
	}
	return tx.send(p)
}

func (tx *Txn) send(p Plan) error {
	if p.Call == nil && p.Send == nil {
		tx.applyLocal(p.Apply)
		return nil
	}
	tx.fresh = false
	return tx.g.finish(tx.ctx, tx.call(p), tx.read)
}

// call makes p's cloud call, recorded in the guard's ledger (if any) from
// before it starts until after it ends. A call that failed without sending
// a request (a check in the client, our rate limit) is refused: its
// outcome is known by construction, never unknown by omission.
func (tx *Txn) call(p Plan) (err error) {
	ctx, sends := cloudhttp.TrackSends(tx.ctx)
	if l := tx.g.ledger; l != nil {
		l.sending(tx.g.group)
		defer func() { l.sent(tx.g.group, err, sends.Sent()) }()
	}
	if p.Send == nil {
		return unsentRefused(p.Call(ctx), sends)
	}
	effect, err := p.Send(ctx)
	err = unsentRefused(err, sends)
	if err == nil || cloudprovider.OutcomeOf(err) == cloudprovider.MutationApplied {
		if g := tx.g.served(); g != nil {
			g.apply(effect)
		}
	}
	return err
}

// Prepare checks a multi-call request against the snapshot and returns what
// plan derives from it (the instances to remove, sorted by how), for the
// transaction's steps to send. Like Step, it plans from the snapshot first,
// so a bad request is refused without a cloud call, and plans again from a
// fresh read when the previous change's outcome is unknown.
func Prepare[T any](tx *Txn, plan func() (T, error)) (T, error) {
	v, err := plan()
	if err != nil {
		return v, cloudprovider.Refusal(err)
	}
	if tx.g.needsRead() && !tx.fresh {
		if err := tx.reread(); err != nil {
			return v, err
		}
		if v, err = plan(); err != nil {
			return v, cloudprovider.Refusal(err)
		}
	}
	return v, nil
}
