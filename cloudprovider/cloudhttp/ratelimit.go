package cloudhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// RateLimit is a client-side budget for one cloud's API: Rate requests per
// second on average, at most Burst at once. The zero value means no limit.
type RateLimit struct {
	Rate  float64
	Burst int
}

// Enabled reports whether l limits anything.
func (l RateLimit) Enabled() bool { return l.Rate > 0 }

// String renders l as --cloud-api-rate-limit reads it: "30/s burst 30".
func (l RateLimit) String() string {
	if !l.Enabled() {
		return "off"
	}
	return strconv.FormatFloat(l.Rate, 'f', -1, 64) + "/s burst " + strconv.Itoa(l.burst())
}

func (l RateLimit) burst() int {
	if l.Burst > 0 {
		return l.Burst
	}
	if b := int(l.Rate); b > 1 {
		return b
	}
	return 1
}

// ParseRateLimit reads "RATE" or "RATE:BURST" (requests per second, burst in
// requests); "" means the cloud's default, "off" disables the limit.
func ParseRateLimit(s string) (limit RateLimit, useDefault bool, err error) {
	switch strings.TrimSpace(s) {
	case "":
		return RateLimit{}, true, nil
	case "off":
		return RateLimit{}, false, nil
	}
	rate, burst, hasBurst := strings.Cut(s, ":")
	r, err := strconv.ParseFloat(rate, 64)
	if err != nil || r <= 0 || r > 1e6 {
		return RateLimit{}, false, fmt.Errorf("rate %q: want requests per second > 0, e.g. 10 or 10:20 (rate:burst), or off", s)
	}
	limit = RateLimit{Rate: r}
	if hasBurst {
		b, err := strconv.Atoi(burst)
		if err != nil || b < 1 {
			return RateLimit{}, false, fmt.Errorf("burst in %q: want a whole number of requests >= 1", s)
		}
		limit.Burst = b
	}
	return limit, false, nil
}

type mutationKey struct{}

// WithMutationPriority marks ctx as serving a mutation (IncreaseSize,
// DecreaseTargetSize, DeleteNodes): its cloud calls, including the re-read a
// mutation may make first, go ahead of refresh reads when the budget is short.
func WithMutationPriority(ctx context.Context) context.Context {
	return context.WithValue(ctx, mutationKey{}, true)
}

// HasMutationPriority reports whether ctx was marked by WithMutationPriority.
func HasMutationPriority(ctx context.Context) bool {
	v, _ := ctx.Value(mutationKey{}).(bool)
	return v
}

// RateLimiter is a token bucket shared by every call to one cloud. A call
// that would get its token only after its deadline is refused at once with
// ErrRateLimited. Mutations come first: a read takes a token only while no
// mutation waits, and it leaves one token for a mutation.
type RateLimiter struct {
	limit RateLimit
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
	// observe is told every wait (refused=false) and every local refusal.
	observe func(waited time.Duration, refused bool)

	mu               sync.Mutex
	tokens           float64
	last             time.Time
	mutationsWaiting int
}

// RateLimiterOptions injects the clock and the sleep (tests use a manual
// clock) and the observer the metrics use.
type RateLimiterOptions struct {
	Now     func() time.Time
	Sleep   func(context.Context, time.Duration) error
	Observe func(waited time.Duration, refused bool)
}

// NewRateLimiter returns a full bucket for limit; nil when limit is off.
func NewRateLimiter(limit RateLimit, opts RateLimiterOptions) *RateLimiter {
	if !limit.Enabled() {
		return nil
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = SleepContext
	}
	if opts.Observe == nil {
		opts.Observe = func(time.Duration, bool) {}
	}
	return &RateLimiter{limit: limit, now: opts.Now, sleep: opts.Sleep, observe: opts.Observe,
		tokens: float64(limit.burst()), last: opts.Now()}
}

// Limit is the budget the limiter keeps.
func (l *RateLimiter) Limit() RateLimit { return l.limit }

// refill adds the tokens earned since the last look; callers hold mu.
func (l *RateLimiter) refill(now time.Time) {
	if now.After(l.last) {
		l.tokens += now.Sub(l.last).Seconds() * l.limit.Rate
		if b := float64(l.limit.burst()); l.tokens > b {
			l.tokens = b
		}
		l.last = now
	}
}

// Wait takes one token, waiting for it when the bucket is empty. It returns
// an error wrapping ErrRateLimited, without waiting, when the token would
// come after ctx's deadline, and ctx's error when ctx ends while waiting.
func (l *RateLimiter) Wait(ctx context.Context) error {
	if l == nil {
		return nil
	}
	mutation := HasMutationPriority(ctx)
	// A read leaves one token for a mutation, unless the bucket only holds one.
	need := 1.0
	if !mutation && l.limit.burst() > 1 {
		need = 2
	}
	start := l.now()
	registered := false
	defer func() {
		if registered {
			l.mu.Lock()
			l.mutationsWaiting--
			l.mu.Unlock()
		}
	}()
	for {
		l.mu.Lock()
		now := l.now()
		l.refill(now)
		if l.tokens >= need && (mutation || l.mutationsWaiting == 0) {
			l.tokens--
			l.mu.Unlock()
			if waited := now.Sub(start); waited > 0 {
				l.observe(waited, false)
			}
			return nil
		}
		wait := time.Duration((need - l.tokens) / l.limit.Rate * float64(time.Second))
		if wait <= 0 {
			// A read held back by a waiting mutation tries again after one
			// token's time, so the mutation can take its token first.
			wait = time.Duration(float64(time.Second) / l.limit.Rate)
		}
		if deadline, ok := ctx.Deadline(); ok && now.Add(wait).After(deadline) {
			l.mu.Unlock()
			l.observe(now.Sub(start), true)
			return cloudprovider.Refusal(fmt.Errorf("client-side budget of %s for this cloud: the next request slot is %s away, after the call's deadline: %w",
				l.limit, wait.Round(time.Millisecond), cloudprovider.ErrRateLimited))
		}
		if mutation && !registered {
			registered = true
			l.mutationsWaiting++
		}
		l.mu.Unlock()
		if err := l.sleep(ctx, wait); err != nil {
			l.observe(l.now().Sub(start), false)
			// The call never left the process.
			return cloudprovider.Refusal(err)
		}
	}
}

// rateLimitTransport takes a token before every request, so retries pay too.
type rateLimitTransport struct {
	base    http.RoundTripper
	limiter *RateLimiter
}

func (t *rateLimitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.limiter.Wait(req.Context()); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// NoResponseClass classifies an error that came without an HTTP response:
// ErrRateLimited when the client-side budget refused the call (it never left
// the process), else ErrUnavailable. It also unwraps OrigErr, which the
// Volcengine SDK's errors use.
func NoResponseClass(err error) error {
	for depth := 0; err != nil && depth < 8; depth++ {
		if errors.Is(err, cloudprovider.ErrRateLimited) {
			return cloudprovider.ErrRateLimited
		}
		var sdkErr interface{ OrigErr() error }
		if !errors.As(err, &sdkErr) {
			break
		}
		err = sdkErr.OrigErr()
	}
	return cloudprovider.ErrUnavailable
}
