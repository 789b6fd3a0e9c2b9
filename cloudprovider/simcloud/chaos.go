package simcloud

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// FaultKind is one way Chaos breaks a cloud request.
type FaultKind string

// The faults Chaos injects. Each mimics something real clouds do.
const (
	// FaultServerError answers 503 with the cloud's error body.
	FaultServerError FaultKind = "5xx"
	// FaultThrottle answers 429 with Retry-After: 1.
	FaultThrottle FaultKind = "429+Retry-After"
	// FaultReset closes the connection without an answer (TCP RST).
	FaultReset FaultKind = "reset"
	// FaultSlow holds the request past the caller's deadline (see SetSlow);
	// it reaches the cloud only if the caller is still waiting by then.
	FaultSlow FaultKind = "slow"
	// FaultSlowApplied holds the request past the caller's deadline, then
	// forwards it anyway: the cloud applies what the caller gave up on, after
	// the caller may already have sent its next change.
	FaultSlowApplied FaultKind = "slow-applied"
	// FaultMalformed answers 200 with a truncated JSON body; a mutation is
	// applied first, as when a gateway mangles the answer.
	FaultMalformed FaultKind = "malformed"
	// FaultLostAnswer applies the request and then answers 502,
	// as when the answer is lost on the way back.
	FaultLostAnswer FaultKind = "lost-answer"
)

// DefaultFaults are the faults the soak injects unless told otherwise.
var DefaultFaults = []FaultKind{FaultServerError, FaultThrottle, FaultReset, FaultSlow, FaultMalformed, FaultLostAnswer}

// AllFaults lists every fault kind.
var AllFaults = append(append([]FaultKind(nil), DefaultFaults...), FaultSlowApplied)

// DefaultHold is how long a slow fault holds a request unless told
// otherwise: past CA's 5 s deadline and the provider's own, and well inside
// the default --unknown-outcome-window (60 s), so a slow-applied request
// lands while the guard still expects it.
const DefaultHold = 30 * time.Second

// Chaos picks faults at random for a fake cloud's requests, through the fake
// kit's fault policy (fakecloud.API.SetFaultPolicy), so every
// fault is answered in the cloud's own error shape.
type Chaos struct {
	mu       sync.Mutex
	rnd      *rand.Rand
	mix      []KindRate
	slow     time.Duration
	injected map[FaultKind]int
	passed   int
}

// NewChaos returns a Chaos that injects nothing until SetMix or SetFaults is
// called.
func NewChaos(seed int64) *Chaos {
	return &Chaos{slow: DefaultHold, rnd: rand.New(rand.NewSource(seed)), injected: map[FaultKind]int{}}
}

// SetMix makes each kind of m hit its share of requests; m.Hold, when set,
// replaces how long slow faults hold a request. An empty mix turns faults off.
func (c *Chaos) SetMix(m FaultMix) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mix = append([]KindRate(nil), m.Rates...)
	if m.Hold > 0 {
		c.slow = m.Hold
	}
}

// SetFaults makes a share rate (0..1) of requests fail with one of kinds,
// each kind equally likely. Rate 0 turns faults off.
func (c *Chaos) SetFaults(rate float64, kinds ...FaultKind) {
	c.SetMix(Uniform(rate, kinds...))
}

// SetSlow sets how long a slow fault holds a request (default DefaultHold).
func (c *Chaos) SetSlow(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slow = d
}

// Injected returns how many faults of each kind were injected.
func (c *Chaos) Injected() map[FaultKind]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.injected)
}

// Passed returns how many requests went through untouched.
func (c *Chaos) Passed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.passed
}

// Pick is the fault policy: it chooses whether r fails, and how.
func (c *Chaos) Pick(r fakecloud.FaultRequest) (fakecloud.Fault, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kind, hit := FaultKind(""), false
	if len(c.mix) > 0 {
		draw := c.rnd.Float64()
		for _, kr := range c.mix {
			if draw < kr.Rate {
				kind, hit = kr.Kind, true
				break
			}
			draw -= kr.Rate
		}
	}
	if !hit {
		c.passed++
		return fakecloud.Fault{}, false
	}
	c.injected[kind]++
	mutation := r.Mutating
	switch kind {
	case FaultServerError:
		return fakecloud.Fault{Status: http.StatusServiceUnavailable}, true
	case FaultThrottle:
		return fakecloud.Fault{Status: http.StatusTooManyRequests, RetryAfter: "1"}, true
	case FaultReset:
		return fakecloud.Fault{Reset: true}, true
	case FaultSlow:
		return fakecloud.Fault{Delay: c.slow, PassThrough: true}, true
	case FaultSlowApplied:
		return fakecloud.Fault{Delay: c.slow, PassThrough: true, AfterApply: true}, true
	case FaultMalformed:
		return fakecloud.Fault{Malformed: true, AfterApply: mutation}, true
	case FaultLostAnswer:
		return fakecloud.Fault{Status: http.StatusBadGateway, AfterApply: true}, true
	}
	return fakecloud.Fault{}, false
}

// FaultSummary renders counts as "kind=n" pairs in a stable order.
func FaultSummary(m map[FaultKind]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%d", k, m[FaultKind(k)])
	}
	return b.String()
}
