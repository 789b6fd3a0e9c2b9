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
)

// DefaultUnknownOutcomeWindow is how long a group's changes are refused
// after one whose outcome is unknown: the HTTP client's request lifetime,
// after which a request still held somewhere is assumed never to land.
const DefaultUnknownOutcomeWindow = cloudhttp.CallLifetime

// NoUnknownOutcomeWindow turns the quarantine off
// (--unknown-outcome-window=0); the fresh read before the next change stays.
const NoUnknownOutcomeWindow time.Duration = -1

// GuardOptions set the quarantine's clock (nil: time.Now) and length
// (zero: DefaultUnknownOutcomeWindow; negative: none).
type GuardOptions struct {
	Now                  func() time.Time
	UnknownOutcomeWindow time.Duration
}

func (o GuardOptions) window() time.Duration {
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

// mutationGuard runs every change of one group: it takes the group's lock
// (giving up when the caller's context ends), plans from the served state
// so bad input costs no call, re-reads first after an unknown outcome or
// before shrinking an absolute size, makes the call and applies its
// Effect. After an unknown outcome it refuses the group's changes until
// the window has passed: all three clouds resize by absolute size, so a
// lost resize that lands after a newer one removes instances nobody asked
// to delete, and no read can see a request that has not landed yet.
type mutationGuard struct {
	group     string
	opts      GuardOptions
	sem       chan struct{}
	unknown   atomic.Bool
	unknownAt atomic.Int64 // Unix nanoseconds on opts' clock; 0: none
	attempts  atomic.Uint64
	ledger    *Ledger
	view      atomic.Pointer[Group] // nil outside a ledger
}

func newMutationGuard(group string, opts GuardOptions) *mutationGuard {
	return &mutationGuard{group: group, opts: opts, sem: make(chan struct{}, 1)}
}

// Lock takes the group's lock, or gives up when ctx ends.
func (g *mutationGuard) Lock(ctx context.Context) (unlock func(), err error) {
	select {
	case g.sem <- struct{}{}:
		// Counted on release too, so a count sampled mid-change moves.
		g.attempts.Add(1)
		return func() { g.attempts.Add(1); <-g.sem }, nil
	case <-ctx.Done():
		return nil, cloudprovider.Refusal(fmt.Errorf("node group %s: waiting for another change of the group: %w", g.group, ctx.Err()))
	}
}

// begin takes the lock and refuses while the group is quarantined.
func (g *mutationGuard) begin(ctx context.Context) (unlock func(), err error) {
	unlock, err = g.Lock(ctx)
	if err != nil {
		return nil, err
	}
	if until := g.QuarantinedUntil(); !until.IsZero() {
		unlock()
		return nil, cloudprovider.Refusal(fmt.Errorf("node group %s: an earlier change's outcome is unknown and the cloud may still apply it until %s; no change is sent before then: %w",
			g.group, until.UTC().Format(time.RFC3339), cloudprovider.ErrUnavailable))
	}
	return unlock, nil
}

// QuarantinedUntil returns when the quarantine ends; zero when none.
func (g *mutationGuard) QuarantinedUntil() time.Time {
	at := g.unknownAt.Load()
	if at == 0 {
		return time.Time{}
	}
	until := time.Unix(0, at).Add(g.opts.window())
	if !g.opts.now().Before(until) {
		return time.Time{}
	}
	return until
}

// record notes a call's outcome. An unknown one quarantines the group. An
// applied one without its size, or NotFound, only makes the next change
// re-read: a retried delete whose first answer was lost finds the
// instance gone and the target already lower.
func (g *mutationGuard) record(err error) error {
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

// finish records err and, when the cloud applied the change without
// stating the size, re-reads the group at once; a bad answer body is then
// no error.
func (g *mutationGuard) finish(ctx context.Context, err error, read func(ctx context.Context) error) error {
	err = g.record(err)
	if !cloudprovider.SizeUnstated(err) {
		return err
	}
	if rerr := read(ctx); rerr != nil {
		return cloudprovider.WithOutcome(fmt.Errorf("node group %s: %w; reading the group after the change failed, the next change re-reads it first: %v", g.group, err, rerr), cloudprovider.MutationApplied)
	}
	g.unknown.Store(false)
	if errors.Is(err, cloudprovider.ErrMalformedResponse) {
		klog.InfoS("Cloud applied a change without stating the resulting size; read the group", "nodeGroup", g.group, "err", err)
		return nil
	}
	return err
}

// Plan is one change, computed from the served state when the guard asks.
type Plan struct {
	// Shrinks marks an absolute size below the cloud's: the guard re-reads
	// the group first and plans again.
	Shrinks bool
	// Send makes the one cloud call; its error states the outcome
	// (cloudprovider.OutcomeOf). A call that sent no request is refused;
	// a cloud reached without the HTTP stack uses cloudhttp.MarkSent.
	Send func(ctx context.Context) (Effect, error)
	// Apply is the effect of a change with no cloud call (Send nil).
	Apply Effect
}

// Do runs a change of one cloud call.
func (g *mutationGuard) Do(ctx context.Context, read func(ctx context.Context) error, plan func() (Plan, error)) error {
	return g.Transact(ctx, read, func(tx *Txn) error { return tx.Step(plan) })
}

// Txn is a change of several cloud calls under one lock.
type Txn struct {
	g     *mutationGuard
	ctx   context.Context
	read  func(ctx context.Context) error
	fresh bool // read, and nothing sent since
}

// Transact runs body under the lock. An error when no request was sent is
// refused: nothing left the process.
func (g *mutationGuard) Transact(ctx context.Context, read func(ctx context.Context) error, body func(tx *Txn) error) error {
	unlock, err := g.begin(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if v := g.view.Load(); v != nil {
		if err := v.CheckManaged(); err != nil {
			return cloudprovider.Refusal(err)
		}
	}
	ctx, sends := cloudhttp.TrackSends(ctx)
	return unsentRefused(body(&Txn{g: g, ctx: ctx, read: read}), sends)
}

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
	tx.g.unknown.Store(false)
	tx.fresh = true
	return nil
}

// Step plans one change and sends it, planning again after a fresh read
// when it shrinks or the last outcome is unknown.
func (tx *Txn) Step(plan func() (Plan, error)) error {
	p, err := planned(tx, plan, func(p Plan) bool { return p.Shrinks })
	if err != nil {
		return err
	}
	return tx.send(p)
}

// Shrink is Step that plans only from a fresh read.
func (tx *Txn) Shrink(plan func() (Plan, error)) error {
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

// Prepare checks a request of several calls like Step plans; its error
// refuses the transaction.
func Prepare[T any](tx *Txn, plan func() (T, error)) (T, error) {
	return planned(tx, plan, func(T) bool { return false })
}

func planned[T any](tx *Txn, plan func() (T, error), shrinks func(T) bool) (T, error) {
	v, err := plan()
	if err != nil {
		return v, cloudprovider.Refusal(err)
	}
	if (shrinks(v) || tx.g.unknown.Load()) && !tx.fresh {
		if err := tx.reread(); err != nil {
			return v, err
		}
		if v, err = plan(); err != nil {
			return v, cloudprovider.Refusal(err)
		}
	}
	return v, nil
}

func (tx *Txn) send(p Plan) error {
	if p.Send == nil {
		if v := tx.g.view.Load(); v != nil {
			v.apply(p.Apply)
		}
		return nil
	}
	tx.fresh = false
	return tx.g.finish(tx.ctx, tx.call(p), tx.read)
}

// call counts p's call in flight until its effect is applied, so a racing
// listing keeps the effect.
func (tx *Txn) call(p Plan) (err error) {
	ctx, sends := cloudhttp.TrackSends(tx.ctx)
	if l := tx.g.ledger; l != nil {
		l.sending(tx.g.group)
		defer func() { l.sent(tx.g.group, err, sends.Sent()) }()
	}
	effect, err := p.Send(ctx)
	err = unsentRefused(err, sends)
	if err == nil || cloudprovider.OutcomeOf(err) == cloudprovider.MutationApplied {
		if v := tx.g.view.Load(); v != nil {
			v.apply(effect)
		}
	}
	return err
}
