package cloudprovidertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// The shared client-side budget (cloudhttp.RateLimiter) as each provider
// wires it under its SDK and retries, driven through the provider's own
// HTTP client on a manual clock: no check sleeps or measures time.

// kitRateLimit is the budget the rate-limit checks build providers with: a
// token every 8 s (exact in binary, so refills are whole tokens), longer
// than CA's deadline, so a call that finds the bucket empty cannot get a
// token in time; the burst covers the setup's first snapshot.
var kitRateLimit = cloudhttp.RateLimit{Rate: 0.125, Burst: 100}

// tokenInterval is how long kitRateLimit takes to earn one token.
const tokenInterval = 8 * time.Second

// limiterDriver is the rate limiter's clock and sleep. A call that waits for
// a token parks in sleep until the check releases it, after moving the
// clock on as far as it likes; the check sees every wait and who waits.
type limiterDriver struct {
	clock *fakecloud.ManualClock
	// kick is signalled whenever a call parks or a driven call ends.
	kick chan struct{}

	mu       sync.Mutex
	sleepers []*sleeper
	sleeps   int
	refusals int
}

type sleeper struct {
	mutation bool
	release  chan struct{}
}

func newLimiterDriver() *limiterDriver {
	return &limiterDriver{clock: fakecloud.NewManualClock(time.Now()), kick: make(chan struct{}, 1)}
}

func (d *limiterDriver) signal() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

func (d *limiterDriver) sleep(ctx context.Context, _ time.Duration) error {
	s := &sleeper{mutation: cloudhttp.HasMutationPriority(ctx), release: make(chan struct{})}
	d.mu.Lock()
	d.sleepers = append(d.sleepers, s)
	d.sleeps++
	d.mu.Unlock()
	d.signal()
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		d.mu.Lock()
		for i, o := range d.sleepers {
			if o == s {
				d.sleepers = append(d.sleepers[:i], d.sleepers[i+1:]...)
				break
			}
		}
		d.mu.Unlock()
		return ctx.Err()
	}
}

// parked counts the calls waiting for a token, mutations or reads.
func (d *limiterDriver) parked(mutation bool) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, s := range d.sleepers {
		if s.mutation == mutation {
			n++
		}
	}
	return n
}

// observe is BuildOptions.ObserveRateLimit: it counts local refusals.
func (d *limiterDriver) observe(_ time.Duration, refused bool) {
	if refused {
		d.mu.Lock()
		d.refusals++
		d.mu.Unlock()
	}
}

// refusalCount is how many calls the limiter has refused so far.
func (d *limiterDriver) refusalCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.refusals
}

// sleepCount is how many waits the limiter has asked for so far.
func (d *limiterDriver) sleepCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sleeps
}

// release lets the parked mutations (or reads) look at the bucket again.
func (d *limiterDriver) release(mutation bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	kept := d.sleepers[:0]
	for _, s := range d.sleepers {
		if s.mutation == mutation {
			close(s.release)
			continue
		}
		kept = append(kept, s)
	}
	d.sleepers = kept
}

// await returns once cond holds, re-checking whenever a call parks or ends;
// the wall-clock bound only keeps a broken provider from hanging the test.
func (d *limiterDriver) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !d.awaitOK(cond) {
		t.Fatalf("rate limit: gave up waiting until %s", what)
	}
}

// awaitOK is await reporting instead of failing when it gives up.
func (d *limiterDriver) awaitOK(cond func() bool) bool {
	guard := time.NewTimer(2 * CallDeadline)
	defer guard.Stop()
	for !cond() {
		select {
		case <-d.kick:
		case <-guard.C:
			return false
		}
	}
	return true
}

// The limiter compares a call's deadline, a wall-clock time (CA's gRPC
// deadline, the HTTP client's overall timeout of a minute), with its own
// manual clock, which stands still while the wall clock runs and jumps when
// a check hands out tokens. Its lead over the wall clock must stay within
// what the checks need: above CA's deadline minus a token interval when a
// call must be refused, below the HTTP timeout minus a wait when it must
// wait. sync and the few tokens each check hands out keep it there.

// lead is how far the limiter's clock runs ahead of the wall clock.
func (d *limiterDriver) lead() time.Duration { return time.Until(d.clock.Now()) }

// sync moves the limiter's clock up to the wall clock in whole token
// intervals, so the bucket still holds whole tokens.
func (d *limiterDriver) sync() {
	if lag := -d.lead(); lag > 0 {
		d.clock.Advance((lag/tokenInterval + 1) * tokenInterval)
	}
}

// ctx is a context whose wall-clock deadline lies the given time away.
func (d *limiterDriver) ctx(t *testing.T, deadline time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

// driven is a call the check runs in the background and steps through.
type driven struct {
	done chan struct{}
	err  error
}

func (d *limiterDriver) start(f func() error) *driven {
	c := &driven{done: make(chan struct{})}
	go func() {
		c.err = f()
		close(c.done)
		d.signal()
	}()
	return c
}

// outcome describes how c ended, or that it still runs.
func (c *driven) outcome() string {
	if !c.finished() {
		return "still running"
	}
	return fmt.Sprintf("ended with %v", c.err)
}

func (c *driven) finished() bool {
	select {
	case <-c.done:
		return true
	default:
	}
	return false
}

// pump lets call c finish, giving it one token per wait; it returns how
// many tokens it handed out. Other parked calls stay parked.
func (d *limiterDriver) pump(t *testing.T, c *driven, mutation bool, what string) int {
	t.Helper()
	granted := 0
	for {
		d.await(t, what+" to finish or wait for a token", func() bool { return c.finished() || d.parked(mutation) > 0 })
		if c.finished() {
			return granted
		}
		if granted > kitRateLimit.Burst {
			t.Fatalf("rate limit: %s waited for more than %d tokens", what, kitRateLimit.Burst)
		}
		d.clock.Advance(tokenInterval)
		granted++
		d.release(mutation)
	}
}

// limitedKit is a kit whose provider was built with kitRateLimit on a
// limiterDriver, served through the real gRPC server (the server marks
// mutations, so only there do they go first).
type limitedKit struct {
	*kit
	drv    *limiterDriver
	client protos.CloudProviderClient
	id     string
}

func newLimitedKit(t *testing.T, h Harness) *limitedKit {
	t.Helper()
	requireHooks(t, h, nil, HookNewEnvWithOptions, HookServe)
	drv := newLimiterDriver()
	k := kitFor(t, h, registry.BuildOptions{
		RateLimit: kitRateLimit, RateLimitNow: drv.clock.Now, RateLimitSleep: drv.sleep, ObserveRateLimit: drv.observe,
	})
	env := k.env
	if err := env.Provider.Refresh(k.ctx()); err != nil {
		t.Fatalf("initial Refresh under a budget of %s: %v (the setup needs more than the burst?)", kitRateLimit, err)
	}
	lk := &limitedKit{kit: k, drv: drv, client: h.Serve(t, env.Provider)}
	lk.id = k.mainGroup().Id(k.ctx())
	return lk
}

// increase asks for IncreaseSize(1) of the main group through gRPC.
func (lk *limitedKit) increase(ctx context.Context) error {
	_, err := lk.client.NodeGroupIncreaseSize(ctx, &protos.NodeGroupIncreaseSizeRequest{Id: lk.id, Delta: 1})
	return err
}

// grpcTarget reads the main group's target as CA does.
func (lk *limitedKit) grpcTarget() int {
	lk.t.Helper()
	resp, err := lk.client.NodeGroupTargetSize(lk.ctx(), &protos.NodeGroupTargetSizeRequest{Id: lk.id})
	lk.must(err, "NodeGroupTargetSize")
	return int(resp.GetTargetSize())
}

// refusal is a locally refused IncreaseSize, seen through gRPC.
type refusal struct {
	err            error
	targetBefore   int
	sleepsBefore   int
	refusalsBefore int
	refreshesUsed  int
}

// emptyBucket spends the budget down to nothing and returns the IncreaseSize
// that found it empty: refreshes spend tokens until a read is refused (it
// keeps one token for mutations), then CA's IncreaseSize spends what is left
// until one is refused without a cloud call. With the limiter's clock
// standing still the bucket holds whole tokens, so that one found it empty.
// When the wall clock ran too far ahead meanwhile (a slow machine), the
// refused call could have got its token in time; the round starts again.
func (lk *limitedKit) emptyBucket() refusal {
	t := lk.t
	t.Helper()
	var r refusal
	for round := 0; ; round++ {
		if round == 5 {
			t.Fatal("rate limit: the machine is too slow to keep the limiter's clock within a token of the wall clock")
		}
		lk.drv.sync()
		for {
			if r.refreshesUsed > 2*kitRateLimit.Burst {
				t.Fatalf("%d Refreshes under a burst of %d were never refused: the provider's calls do not pass the rate limiter (BuildOptions.RateLimit)", r.refreshesUsed, kitRateLimit.Burst)
			}
			r.refreshesUsed++
			err := lk.env.Provider.Refresh(lk.drv.ctx(t, CallDeadline))
			if err == nil {
				continue
			}
			if !errors.Is(err, cloudprovider.ErrRateLimited) {
				t.Fatalf("Refresh with the budget spent: %v, want an error wrapping ErrRateLimited", err)
			}
			break
		}
		for attempt := 0; attempt < 3; attempt++ {
			if lk.drv.lead() < -(tokenInterval - CallDeadline - time.Second) {
				break
			}
			calls, target, sleeps, refusals := lk.env.CloudCalls(), lk.grpcTarget(), lk.drv.sleepCount(), lk.drv.refusalCount()
			err := lk.increase(lk.drv.ctx(t, CallDeadline))
			switch code := status.Code(err); {
			case code == codes.OK:
				// It took a token the bucket still held.
			case code == codes.ResourceExhausted && lk.env.CloudCalls() == calls:
				r.err, r.targetBefore, r.sleepsBefore, r.refusalsBefore = err, target, sleeps, refusals
				return r
			case code == codes.ResourceExhausted:
				// Refused part-way (a re-read took the last token); the
				// bucket is empty now.
			default:
				t.Fatalf("IncreaseSize with the budget spent reached CA as %s (%v), want ResourceExhausted", code, err)
			}
		}
	}
}

// checkRateLimitRefusesPastDeadline: a call whose next token would come
// after CA's deadline is refused at once (ResourceExhausted, so CA backs
// the group off) without a cloud call and without changing the target, and
// since it never left the process its outcome is known: the group takes the
// next IncreaseSize at once instead of being quarantined.
func checkRateLimitRefusesPastDeadline(t *testing.T, h Harness) {
	requireCallerDeadline(t, h, "the check wants a call refused at once because the rate limit's next token comes after the caller's deadline")
	lk := newLimitedKit(t, h)
	r := lk.emptyBucket()
	t.Logf("IncreaseSize with the budget spent: %v", r.err)
	if got := lk.drv.sleepCount(); got != r.sleepsBefore {
		t.Fatalf("the refused IncreaseSize waited for a token (%d waits) although none could come before its deadline", got-r.sleepsBefore)
	}
	if got := lk.drv.refusalCount() - r.refusalsBefore; got != 1 {
		t.Fatalf("the refused IncreaseSize asked the rate limiter %d times: a local refusal is final (retrying it only spends the caller's deadline on backoff)", got)
	}
	if got := lk.grpcTarget(); got != r.targetBefore {
		t.Fatalf("target %d after a locally refused IncreaseSize, want %d", got, r.targetBefore)
	}
	// Refill (no call waits from here on) and look at the cloud: nothing
	// was applied.
	lk.drv.clock.Advance(time.Duration(kitRateLimit.Burst) * tokenInterval)
	lk.must(lk.env.Provider.Refresh(lk.drv.ctx(t, CallDeadline)), "Refresh with the budget refilled")
	if got := lk.target(lk.group(lk.id)); got != r.targetBefore {
		t.Fatalf("the cloud holds target %d after a locally refused IncreaseSize, want %d", got, r.targetBefore)
	}
	if err := lk.increase(lk.drv.ctx(t, CallDeadline)); err != nil {
		t.Fatalf("IncreaseSize after a locally refused one, with the budget refilled: %v (a refused call's outcome is known: not applied)", err)
	}
	lk.must(lk.env.Provider.Refresh(lk.drv.ctx(t, CallDeadline)), "Refresh")
	if got := lk.target(lk.group(lk.id)); got != r.targetBefore+1 {
		t.Fatalf("cloud target %d after one IncreaseSize from %d", got, r.targetBefore)
	}
}

// checkRateLimitMutationsFirst: a Refresh and CA's IncreaseSize both wait
// for the empty bucket; when it holds enough for the read, the read still
// waits while the mutation does, and the mutation's calls go first. The
// read is then given up (handing it its tokens would run the limiter's
// clock past the HTTP timeout) and the cloud checked with a full bucket.
func checkRateLimitMutationsFirst(t *testing.T, h Harness) {
	requireCallerDeadline(t, h, "the check empties the budget with calls refused at the caller's deadline, then makes a read and a mutation wait for tokens under deadlines an hour away")
	lk := newLimitedKit(t, h)
	lk.emptyBucket()
	drv, before := lk.drv, lk.grpcTarget()
	readCtx, giveUpRead := context.WithTimeout(context.Background(), time.Hour)
	defer giveUpRead()
	read := drv.start(func() error { return lk.env.Provider.Refresh(readCtx) })
	drv.await(t, "the Refresh waits for a token", func() bool { return read.finished() || drv.parked(false) > 0 })
	if read.finished() {
		t.Fatalf("Refresh with the budget spent did not wait for a token under a deadline an hour away: %v", read.err)
	}
	reads := drv.parked(false)
	mutation := drv.start(func() error { return lk.increase(drv.ctx(t, time.Hour)) })
	drv.await(t, "IncreaseSize waits for a token", func() bool { return mutation.finished() || drv.parked(true) > 0 })
	if mutation.finished() {
		t.Fatalf("IncreaseSize with the budget spent did not wait for a token under a deadline an hour away: %v", mutation.err)
	}
	// Enough for the read alone (it keeps one token in reserve), but a
	// mutation waits: the read must look, find it, and wait again.
	calls := lk.env.CloudCalls()
	drv.clock.Advance(2 * tokenInterval)
	drv.release(false)
	// A read that takes the budget may then block on the mutation's lock.
	settled := drv.awaitOK(func() bool { return read.finished() || drv.parked(false) >= reads })
	if got := lk.env.CloudCalls(); got != calls || read.finished() {
		t.Fatalf("a Refresh took the budget while IncreaseSize waited for it (%d cloud calls; the Refresh %s): mutations must go first",
			got-calls, read.outcome())
	}
	if !settled {
		t.Fatal("rate limit: the released Refresh neither waited again nor made a call")
	}
	drv.pump(t, mutation, true, "IncreaseSize")
	if mutation.err != nil {
		t.Fatalf("IncreaseSize that waited for the budget: %v", mutation.err)
	}
	if got := lk.env.CloudCalls(); got == calls {
		t.Fatal("IncreaseSize succeeded without a cloud call")
	}
	giveUpRead()
	<-read.done
	drv.clock.Advance(time.Duration(kitRateLimit.Burst) * tokenInterval)
	lk.must(lk.env.Provider.Refresh(drv.ctx(t, CallDeadline)), "Refresh with the budget refilled")
	if got := lk.target(lk.group(lk.id)); got != before+1 {
		t.Fatalf("cloud target %d after one IncreaseSize from %d", got, before)
	}
}

// checkRateLimitCountsRetries: every attempt pays, retries included (the
// limiter sits under each provider's retrying transport). With the bucket
// empty and one token handed out per wait, the tokens handed out equal the
// requests the cloud received for an IncreaseSize whose first answer is a
// 429.
func checkRateLimitCountsRetries(t *testing.T, h Harness) {
	requireCallerDeadline(t, h, "the check empties the budget with calls refused at the caller's deadline, then makes a mutation wait for tokens under a deadline an hour away")
	lk := newLimitedKit(t, h)
	lk.require(HookInjectMutationFault, HookClearFaults)
	lk.emptyBucket()
	drv := lk.drv
	throttled := FaultRateLimited
	throttled.Times = 1
	lk.env.InjectMutationFault(MutationIncreaseSize, throttled)
	calls := lk.env.CloudCalls()
	mutation := drv.start(func() error { return lk.increase(drv.ctx(t, time.Hour)) })
	granted := drv.pump(t, mutation, true, "IncreaseSize")
	lk.clearFaults()
	if mutation.err != nil {
		t.Fatalf("IncreaseSize after one 429 (Retry-After 1 s, deadline an hour away): %v; every client retries a 429", mutation.err)
	}
	requests := lk.env.CloudCalls() - calls
	if requests < 2 {
		t.Fatalf("IncreaseSize made %d cloud request(s) through a 429: the fault missed or the 429 was not retried", requests)
	}
	if granted != requests {
		t.Fatalf("the cloud received %d requests but the rate limiter handed out %d tokens: every attempt, retries included, must pass the limiter", requests, granted)
	}
}
