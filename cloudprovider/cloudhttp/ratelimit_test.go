package cloudhttp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// limiterUnderTest is a limiter on a manual clock whose sleeps advance the
// clock and are recorded, so no test sleeps. The clock starts an hour from
// now, so deadlines computed from it lie in the real future and contexts do
// not expire while a test runs.
type limiterUnderTest struct {
	*cloudhttp.RateLimiter
	clock   *fakecloud.ManualClock
	slept   []time.Duration
	waited  []time.Duration
	refused int
	// duringSleep, when set, runs inside the next sleep (after the clock moved).
	duringSleep func()
}

func newLimiterUnderTest(limit cloudhttp.RateLimit) *limiterUnderTest {
	l := &limiterUnderTest{clock: fakecloud.NewManualClock(time.Now().Add(time.Hour))}
	l.RateLimiter = cloudhttp.NewRateLimiter(limit, cloudhttp.RateLimiterOptions{
		Now: l.clock.Now,
		Sleep: func(ctx context.Context, d time.Duration) error {
			l.slept = append(l.slept, d)
			l.clock.Advance(d)
			if f := l.duringSleep; f != nil {
				l.duringSleep = nil
				f()
			}
			return ctx.Err()
		},
		Observe: func(waited time.Duration, refused bool) {
			if refused {
				l.refused++
				return
			}
			l.waited = append(l.waited, waited)
		},
	})
	return l
}

// deadlineIn is a context whose deadline lies d after the limiter's clock.
func (l *limiterUnderTest) deadlineIn(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), l.clock.Now().Add(d))
	t.Cleanup(cancel)
	return ctx
}

func TestRateLimiterBurstThenRate(t *testing.T) {
	l := newLimiterUnderTest(cloudhttp.RateLimit{Rate: 2, Burst: 2})
	ctx := cloudhttp.WithMutationPriority(l.deadlineIn(t, time.Minute))
	for i := range 2 {
		if err := l.Wait(ctx); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	if len(l.slept) != 0 {
		t.Fatalf("the burst waited: %v", l.slept)
	}
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if len(l.slept) != 1 || l.slept[0] != 500*time.Millisecond {
		t.Fatalf("third call at 2/s slept %v, want one 500ms", l.slept)
	}
	if len(l.waited) != 1 || l.waited[0] != 500*time.Millisecond {
		t.Fatalf("observed waits %v, want one 500ms", l.waited)
	}
}

func TestRateLimiterRefusesAWaitPastTheDeadline(t *testing.T) {
	l := newLimiterUnderTest(cloudhttp.RateLimit{Rate: 1, Burst: 1})
	if err := l.Wait(l.deadlineIn(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	// The next token is 1 s away; a caller with 999 ms left is refused at once.
	err := l.Wait(l.deadlineIn(t, 999*time.Millisecond))
	if !errors.Is(err, cloudprovider.ErrRateLimited) {
		t.Fatalf("err = %v, want ErrRateLimited", err)
	}
	if len(l.slept) != 0 || l.refused != 1 {
		t.Fatalf("slept %v, refused %d; want no sleep and one refusal", l.slept, l.refused)
	}
	// With the second it needs, it waits exactly that long.
	if err := l.Wait(l.deadlineIn(t, time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(l.slept) != 1 || l.slept[0] != time.Second {
		t.Fatalf("slept %v, want one 1s", l.slept)
	}
}

func TestRateLimiterKeepsATokenForMutations(t *testing.T) {
	l := newLimiterUnderTest(cloudhttp.RateLimit{Rate: 1, Burst: 3})
	read := l.deadlineIn(t, 100*time.Millisecond)
	for i := range 2 {
		if err := l.Wait(read); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if err := l.Wait(read); !errors.Is(err, cloudprovider.ErrRateLimited) {
		t.Fatalf("a read took the last token: %v", err)
	}
	if err := l.Wait(cloudhttp.WithMutationPriority(read)); err != nil {
		t.Fatalf("the mutation did not get the reserved token: %v", err)
	}
}

func TestRateLimiterReadsYieldToAWaitingMutation(t *testing.T) {
	l := newLimiterUnderTest(cloudhttp.RateLimit{Rate: 1, Burst: 1})
	mutation := cloudhttp.WithMutationPriority(l.deadlineIn(t, time.Minute))
	if err := l.Wait(mutation); err != nil {
		t.Fatal(err)
	}
	var readErr error
	l.duringSleep = func() {
		// The token has come back, but a mutation is waiting for it.
		readErr = l.Wait(l.deadlineIn(t, 500*time.Millisecond))
	}
	if err := l.Wait(mutation); err != nil {
		t.Fatalf("waiting mutation: %v", err)
	}
	if !errors.Is(readErr, cloudprovider.ErrRateLimited) {
		t.Fatalf("a read took the token a mutation waited for: %v", readErr)
	}
}

func TestRateLimiterGivesUpWhenTheContextEnds(t *testing.T) {
	l := newLimiterUnderTest(cloudhttp.RateLimit{Rate: 1, Burst: 1})
	ctx, cancel := context.WithCancel(context.Background())
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := l.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestRateLimiterOffIsNil(t *testing.T) {
	if l := cloudhttp.NewRateLimiter(cloudhttp.RateLimit{}, cloudhttp.RateLimiterOptions{}); l != nil {
		t.Fatal("a zero limit built a limiter")
	}
	var l *cloudhttp.RateLimiter
	if err := l.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestHTTPClientRefusesOverBudgetWithoutCallingTheCloud drives the limiter
// through the client every provider builds: a call over budget never
// reaches the server and fails as rate limited, not as a network error.
func TestHTTPClientRefusesOverBudgetWithoutCallingTheCloud(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	var refused atomic.Int32
	hc := cloudhttp.NewHTTPClient(cloudhttp.ClientOptions{
		RateLimit: cloudhttp.RateLimit{Rate: 0.001, Burst: 1},
		ObserveRateLimit: func(_ time.Duration, r bool) {
			if r {
				refused.Add(1)
			}
		},
	}, cloudhttp.HTTPStack{Operation: func(*http.Request) string { return "GET /" }})
	get := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatal(err)
	}
	if err := get(); !errors.Is(err, cloudprovider.ErrRateLimited) {
		t.Fatalf("second call: %v, want ErrRateLimited", err)
	}
	if served.Load() != 1 || refused.Load() != 1 {
		t.Fatalf("server saw %d calls, %d refused; want 1 and 1", served.Load(), refused.Load())
	}
}

func TestParseRateLimit(t *testing.T) {
	cases := []struct {
		in         string
		want       cloudhttp.RateLimit
		useDefault bool
		bad        bool
	}{
		{in: "", useDefault: true},
		{in: "off"},
		{in: "10", want: cloudhttp.RateLimit{Rate: 10}},
		{in: "0.5:3", want: cloudhttp.RateLimit{Rate: 0.5, Burst: 3}},
		{in: "0", bad: true},
		{in: "-1", bad: true},
		{in: "ten", bad: true},
		{in: "10:0", bad: true},
		{in: "10:x", bad: true},
	}
	for _, tc := range cases {
		got, useDefault, err := cloudhttp.ParseRateLimit(tc.in)
		if (err != nil) != tc.bad || got != tc.want || useDefault != tc.useDefault {
			t.Errorf("ParseRateLimit(%q) = %v, %v, %v", tc.in, got, useDefault, err)
		}
	}
	if s := (cloudhttp.RateLimit{Rate: 10}).String(); s != "10/s burst 10" {
		t.Errorf("String() = %q", s)
	}
}

// origErr keeps its cause behind OrigErr only, as the Volcengine SDK's errors do.
type origErr struct{ cause error }

func (e origErr) Error() string   { return "RequestError: send request failed" }
func (e origErr) OrigErr() error  { return e.cause }
func (e origErr) Code() string    { return "RequestError" }
func (e origErr) Message() string { return e.Error() }

func TestNoResponseClass(t *testing.T) {
	refused := fmt.Errorf("Get \"https://api\": %w", fmt.Errorf("budget: %w", cloudprovider.ErrRateLimited))
	for name, tc := range map[string]struct {
		err  error
		want error
	}{
		"refused locally":            {refused, cloudprovider.ErrRateLimited},
		"refused, behind an SDK":     {origErr{refused}, cloudprovider.ErrRateLimited},
		"connection reset":           {errors.New("connection reset by peer"), cloudprovider.ErrUnavailable},
		"connection reset, SDK-kept": {origErr{errors.New("reset")}, cloudprovider.ErrUnavailable},
	} {
		if got := cloudhttp.NoResponseClass(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	// A call refused locally never left: its outcome is known.
	local := cloudhttp.NoAnswer("c", "op", refusedByLimiter(t))
	if cloudprovider.OutcomeUnknown(local) {
		t.Error("a locally refused call counts as outcome unknown")
	}
	lost := cloudhttp.NoAnswer("c", "op", errors.New("connection reset by peer"))
	if !cloudprovider.OutcomeUnknown(lost) {
		t.Error("a call without an answer counts as known")
	}
}

// refusedByLimiter returns the error a real limiter refuses a call with.
func refusedByLimiter(t *testing.T) error {
	t.Helper()
	l := cloudhttp.NewRateLimiter(cloudhttp.RateLimit{Rate: 0.001, Burst: 1}, cloudhttp.RateLimiterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	err := l.Wait(ctx)
	if !errors.Is(err, cloudprovider.ErrRateLimited) {
		t.Fatalf("second Wait: %v, want ErrRateLimited", err)
	}
	return err
}
