package fakecloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// counterAPI is a one-resource cloud: POST /counter adds one, GET reads it,
// PUT is refused with 409 and changes nothing.
type counterAPI struct {
	*API
	value atomic.Int64
}

func newCounterAPI(t *testing.T, clock *ManualClock, overrides ...func(*APIConfig)) *counterAPI {
	t.Helper()
	c := &counterAPI{}
	cfg := APIConfig{
		Routes: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				WriteJSON(w, http.StatusConflict, map[string]string{"code": "busy", "message": "refused"})
				return
			}
			if r.Method == http.MethodPost {
				c.value.Add(1)
			}
			WriteJSON(w, http.StatusOK, map[string]int64{"value": c.value.Load()})
		}),
		Operation: func(r *http.Request, _ []byte) string { return r.Method + " counter" },
		WriteError: func(w http.ResponseWriter, status int, code, message string) {
			WriteJSON(w, status, map[string]string{"code": code, "message": message})
		},
		MalformedBody: `{"value": `,
		BasePath:      "/api",
		Now:           clock.Now,
	}
	for _, override := range overrides {
		override(&cfg)
	}
	c.API = NewAPI(cfg)
	c.Start()
	t.Cleanup(c.Close)
	return c
}

type answer struct {
	status      int
	body        string
	retryAfter  string
	contentType string
	err         error
}

func (c *counterAPI) call(ctx context.Context, method, body string) answer {
	req, _ := http.NewRequestWithContext(ctx, method, c.URL()+"/counter", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(b), retryAfter: resp.Header.Get("Retry-After"), contentType: resp.Header.Get("Content-Type")}
}

func TestAPIAnswersFaults(t *testing.T) {
	verbatim := "<html>bad gateway</html>"
	tests := []struct {
		name        string
		fault       Fault
		wantStatus  int
		wantBody    string
		wantRetry   string
		wantType    string
		wantApplied bool
		wantNoReply bool
	}{
		{name: "cloud error body", fault: Fault{Status: 429, RetryAfter: "7", Code: "Throttled"},
			wantStatus: 429, wantBody: `{"code":"Throttled","message":"Too Many Requests"}`, wantRetry: "7", wantType: "application/json"},
		{name: "message", fault: Fault{Status: 403, Message: "no"}, wantStatus: 403, wantBody: `{"code":"","message":"no"}`},
		{name: "malformed", fault: Fault{Malformed: true}, wantStatus: 200, wantBody: `{"value": `, wantType: "application/json"},
		{name: "verbatim body", fault: Fault{Status: 502, Body: &verbatim, ContentType: "text/html"}, wantStatus: 502, wantBody: verbatim, wantType: "text/html"},
		{name: "applied, answer lost", fault: Fault{AfterApply: true, Status: 502}, wantStatus: 502, wantApplied: true,
			wantBody: `{"code":"","message":"Bad Gateway"}`},
		{name: "applied, malformed", fault: Fault{AfterApply: true, Malformed: true}, wantStatus: 200, wantBody: `{"value": `, wantApplied: true},
		{name: "reset", fault: Fault{Reset: true}, wantNoReply: true},
		{name: "applied, reset", fault: Fault{AfterApply: true, Reset: true}, wantNoReply: true, wantApplied: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCounterAPI(t, NewManualClock(time.Unix(100, 0)))
			c.AddFault(tc.fault)
			got := c.call(context.Background(), http.MethodPost, "")
			if tc.wantNoReply {
				if got.err == nil {
					t.Fatalf("got an answer %d %q, want the connection dropped", got.status, got.body)
				}
			} else {
				if got.err != nil {
					t.Fatal(got.err)
				}
				if got.status != tc.wantStatus || strings.TrimSpace(got.body) != strings.TrimSpace(tc.wantBody) {
					t.Fatalf("answer %d %q, want %d %q", got.status, got.body, tc.wantStatus, tc.wantBody)
				}
				if got.retryAfter != tc.wantRetry || (tc.wantType != "" && got.contentType != tc.wantType) {
					t.Fatalf("Retry-After %q content type %q, want %q %q", got.retryAfter, got.contentType, tc.wantRetry, tc.wantType)
				}
			}
			if applied := c.value.Load() == 1; applied != tc.wantApplied {
				t.Fatalf("applied = %v, want %v", applied, tc.wantApplied)
			}
			reqs := c.Requests()
			if len(reqs) != 1 || !reqs[0].Faulted || reqs[0].Status != map[bool]int{true: 0, false: tc.wantStatus}[tc.wantNoReply] {
				t.Fatalf("request log %+v", reqs)
			}
			// The fault is spent: the next request reaches the cloud.
			if next := c.call(context.Background(), http.MethodGet, ""); next.status != http.StatusOK {
				t.Fatalf("next request: %d %v", next.status, next.err)
			}
		})
	}
}

// TestAPIGarbledSuccessOnlyForWhatTheCloudDid: an applied fault that
// garbles a 2xx keeps the cloud's own refusal, since a 2xx means the cloud
// carried the request out; an applied 502 still hides it.
func TestAPIGarbledSuccessOnlyForWhatTheCloudDid(t *testing.T) {
	c := newCounterAPI(t, NewManualClock(time.Unix(100, 0)))
	c.AddFault(Fault{AfterApply: true, Malformed: true})
	if got := c.call(context.Background(), http.MethodPut, ""); got.err != nil || got.status != http.StatusConflict || !strings.Contains(got.body, "refused") {
		t.Fatalf("refused request under a garbling fault answered %d %q %v, want the cloud's 409", got.status, got.body, got.err)
	}
	if reqs := c.Requests(); len(reqs) != 1 || reqs[0].Status != http.StatusConflict || !reqs[0].Faulted {
		t.Fatalf("request log %+v", reqs)
	}
	c.AddFault(Fault{AfterApply: true, Status: 502})
	if got := c.call(context.Background(), http.MethodPut, ""); got.status != http.StatusBadGateway {
		t.Fatalf("refused request under a lost answer answered %d, want 502", got.status)
	}
}

func TestAPIHangEndsWithTheClient(t *testing.T) {
	c := newCounterAPI(t, NewManualClock(time.Unix(100, 0)))
	c.AddFault(Fault{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if got := c.call(ctx, http.MethodPost, ""); !errors.Is(got.err, context.DeadlineExceeded) {
		t.Fatalf("hung call ended with %v, want the client's deadline", got.err)
	}
	if c.value.Load() != 0 {
		t.Fatal("a hang without AfterApply applied the request")
	}
}

func TestAPIRecorder(t *testing.T) {
	clock := NewManualClock(time.Unix(100, 0))
	c := newCounterAPI(t, clock)
	if !strings.HasSuffix(c.URL(), "/api") || !strings.HasPrefix(c.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %q is not loopback plus the base path", c.URL())
	}
	for i := range 3 {
		clock.Advance(time.Second)
		c.call(context.Background(), http.MethodPost, fmt.Sprintf(`{"n":%d}`, i))
	}
	c.call(context.Background(), http.MethodGet, "")
	reqs := c.Requests()
	if len(reqs) != 4 || c.RequestCount() != 4 {
		t.Fatalf("%d requests logged, RequestCount %d, want 4", len(reqs), c.RequestCount())
	}
	if r := reqs[2]; r.Method != http.MethodPost || r.Path != "/api/counter" || string(r.Body) != `{"n":2}` ||
		!r.Time.Equal(time.Unix(103, 0)) || r.Status != http.StatusOK || r.Faulted {
		t.Fatalf("third request recorded as %+v", r)
	}
	if c.CountOperation("POST counter") != 3 || c.OperationCounts()["GET counter"] != 1 {
		t.Fatalf("counts %v", c.OperationCounts())
	}
	c.ResetRequests()
	if c.RequestCount() != 0 {
		t.Fatal("ResetRequests kept the log")
	}
}

func TestAPIDelay(t *testing.T) {
	tests := []struct {
		name        string
		fault       Fault
		deadline    time.Duration
		wantStatus  int // 0: the client gave up
		wantApplied bool
	}{
		{name: "slow answer", fault: Fault{Delay: 20 * time.Millisecond, PassThrough: true}, deadline: 5 * time.Second, wantStatus: 200, wantApplied: true},
		{name: "slow past the deadline is dropped", fault: Fault{Delay: 200 * time.Millisecond, PassThrough: true}, deadline: 20 * time.Millisecond},
		{name: "slow past the deadline, applied anyway", fault: Fault{Delay: 200 * time.Millisecond, PassThrough: true, AfterApply: true}, deadline: 20 * time.Millisecond, wantApplied: true},
		{name: "slow then an error", fault: Fault{Delay: 20 * time.Millisecond, Status: 503}, deadline: 5 * time.Second, wantStatus: 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCounterAPI(t, NewManualClock(time.Unix(100, 0)))
			c.AddFault(tc.fault)
			ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
			defer cancel()
			got := c.call(ctx, http.MethodPost, "")
			if got.status != tc.wantStatus {
				t.Fatalf("answer %d (%v), want %d", got.status, got.err, tc.wantStatus)
			}
			// A request the client gave up on is applied (or not) once its
			// delay is over.
			c.WaitFinished(1)
			if applied := c.value.Load() == 1; applied != tc.wantApplied {
				t.Fatalf("applied = %v, want %v", applied, tc.wantApplied)
			}
		})
	}
}

func TestAPIFaultPolicyAfterTheQueue(t *testing.T) {
	c := newCounterAPI(t, NewManualClock(time.Unix(100, 0)))
	var asked []FaultRequest
	c.SetFaultPolicy(func(r FaultRequest) (Fault, bool) {
		asked = append(asked, r)
		return Fault{Status: http.StatusServiceUnavailable}, r.Method == http.MethodPost
	})
	c.AddFault(Fault{Status: http.StatusTooManyRequests})
	for i, want := range []int{429, 503, 200} {
		method := http.MethodPost
		if i == 2 {
			method = http.MethodGet
		}
		if got := c.call(context.Background(), method, ""); got.status != want {
			t.Fatalf("request %d: %d, want %d", i, got.status, want)
		}
	}
	if len(asked) != 2 || asked[0].Operation != "POST counter" {
		t.Fatalf("policy asked for %+v, want the two requests the queue let through", asked)
	}
	c.SetFaultPolicy(nil)
	if got := c.call(context.Background(), http.MethodPost, ""); got.status != http.StatusOK {
		t.Fatalf("policy off: %d", got.status)
	}
}

func TestAPIReleaseLandsWhenTheTestSays(t *testing.T) {
	c := newCounterAPI(t, NewManualClock(time.Unix(100, 0)))
	release, landed := make(chan struct{}), make(chan struct{})
	c.AddFault(Fault{Release: release, Landed: landed, AfterApply: true, PassThrough: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// The client gives up once the fake holds its request.
		for c.RequestCount() == 0 {
			runtime.Gosched()
		}
		cancel()
	}()
	if got := c.call(ctx, http.MethodPost, ""); got.err == nil {
		t.Fatalf("answer %d to a client that gave up", got.status)
	}
	done := make(chan struct{})
	go func() { c.WaitIdle(); close(done) }()
	select {
	case <-landed:
		t.Fatal("the held request landed before its release")
	case <-done:
		t.Fatal("WaitIdle returned while a request was held")
	default:
	}
	if c.value.Load() != 0 {
		t.Fatal("the held request was applied before its release")
	}
	close(release)
	<-landed
	<-done
	if c.value.Load() != 1 {
		t.Fatal("the released request was not applied")
	}
}

func TestAPIAnswerOnArrivalDescribesTheCloudAsItWas(t *testing.T) {
	c := newCounterAPI(t, NewManualClock(time.Unix(100, 0)))
	release, arrived := make(chan struct{}), make(chan struct{})
	c.AddFault(Fault{Method: http.MethodGet, Release: release, Arrived: arrived, AnswerOnArrival: true})
	got := make(chan answer, 1)
	go func() { got <- c.call(context.Background(), http.MethodGet, "") }()
	<-arrived
	// A change lands while the read is held; the read still reports the
	// value it found on arrival.
	if a := c.call(context.Background(), http.MethodPost, ""); a.status != http.StatusOK {
		t.Fatalf("change during the held read: %+v", a)
	}
	select {
	case a := <-got:
		t.Fatalf("the held read answered before its release: %+v", a)
	default:
	}
	close(release)
	a := <-got
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"value":0`) {
		t.Fatalf("held read = %+v, want 200 with the value on arrival (0)", a)
	}
	if a := c.call(context.Background(), http.MethodGet, ""); !strings.Contains(a.body, `"value":1`) {
		t.Fatalf("next read = %+v, want the changed value (1)", a)
	}
}

func TestAPINowIsTheConfiguredClockOrTheWallClock(t *testing.T) {
	t.Parallel()
	clock := NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	manual := NewAPI(APIConfig{Now: clock.Now})
	clock.Advance(time.Minute)
	if got, want := manual.Now(), clock.Now(); !got.Equal(want) {
		t.Errorf("Now() = %v, want the manual clock's %v", got, want)
	}
	before := time.Now()
	got := NewAPI(APIConfig{}).Now()
	if got.Before(before) || got.After(time.Now()) {
		t.Errorf("Now() without a clock = %v, want the wall clock", got)
	}
}

// TestAPIObserveSeesAnswersInTheCloudsWords checks which answers an observer
// sees: the routes' own, a refused change's, and a fault's error in the
// cloud's shape; never a garbled body or a reset.
func TestAPIObserveSeesAnswersInTheCloudsWords(t *testing.T) {
	t.Parallel()
	c := newCounterAPI(t, NewManualClock(time.Unix(0, 0)))
	got := make(chan Exchange, 16)
	c.Observe(func(x Exchange) { got <- x })
	next := func() Exchange {
		t.Helper()
		select {
		case x := <-got:
			return x
		case <-time.After(5 * time.Second):
			t.Fatal("no exchange observed")
			return Exchange{}
		}
	}

	c.call(context.Background(), http.MethodPost, `{"add":1}`)
	x := next()
	if x.Method != http.MethodPost || x.URL.Path != "/api/counter" || string(x.Body) != `{"add":1}` || x.Status != 200 ||
		strings.TrimSpace(string(x.Answer)) != `{"value":1}` || x.AnswerHeader.Get("Content-Type") != "application/json" || x.Fault {
		t.Errorf("route answer: %+v", x)
	}
	c.call(context.Background(), http.MethodPut, "")
	if x := next(); x.Status != http.StatusConflict || !strings.Contains(string(x.Answer), `"busy"`) || x.Fault {
		t.Errorf("refused change: %+v", x)
	}
	c.AddFault(Fault{Status: 429, RetryAfter: "7", Code: "Throttled"})
	c.call(context.Background(), http.MethodGet, "")
	if x := next(); x.Status != 429 || !strings.Contains(string(x.Answer), `"Throttled"`) || x.AnswerHeader.Get("Retry-After") != "7" || !x.Fault {
		t.Errorf("fault in the cloud's shape: %+v", x)
	}
	c.AddFault(Fault{Malformed: true})
	c.AddFault(Fault{Reset: true})
	// POSTs: Go's transport repeats a GET that met a reset.
	c.call(context.Background(), http.MethodPost, "")
	c.call(context.Background(), http.MethodPost, "")
	c.Observe(nil)
	c.call(context.Background(), http.MethodGet, "")
	c.WaitIdle()
	select {
	case x := <-got:
		t.Errorf("observed %+v after the last answer in the cloud's words", x)
	default:
	}
}

// TestServeAt: the fake listens where it is told, so a client outside the
// process can be pointed at a known address, and refuses an address in use.
func TestServeAt(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	var hits atomic.Int64
	newFake := func() *API {
		return NewAPI(APIConfig{Routes: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			hits.Add(1)
			WriteJSON(w, http.StatusOK, map[string]string{})
		}), BasePath: "/v2"})
	}
	// The port is in use: ServeAt says so, naming the address.
	if _, err := newFake().ServeAt(addr); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("ServeAt(%s) on a port in use = %v, want an error naming it", addr, err)
	}
	ln.Close()
	fake := newFake()
	url, err := fake.ServeAt(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	if url != "http://"+addr+"/v2" {
		t.Fatalf("ServeAt(%s) = %s, want http://%s/v2", addr, url, addr)
	}
	resp, err := http.Get(url + "/anything")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("the request to %s did not reach the fake", url)
	}
}
