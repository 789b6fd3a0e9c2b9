package volcapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

const (
	testAK = "AKLTtestaccesskey0001"
	testSK = "c2VjcmV0LXNlY3JldC1zZWNyZXQ="
)

type testEnv struct {
	fake   *fakeapi.Server
	client *Client
	sleeps []time.Duration
}

// newTestEnv starts a fake API and a client with our production transport
// stack (NewHTTPClient + RetryTransport) whose sleeps are recorded, not slept.
func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	env := &testEnv{fake: fakeapi.New(fakeapi.Options{Clock: fakeapi.NewFakeClock(time.Unix(1_800_000_000, 0))})}
	srv := env.fake.Start()
	t.Cleanup(srv.Close)
	hc := cloudprovider.NewHTTPClient(cloudprovider.BuildOptions{UserAgent: "test"}, Operation)
	hc.Transport = cloudprovider.NewRetryTransport(hc.Transport, cloudprovider.RetryOptions{
		MaxAttempts:       3,
		RetryServerErrors: RetrySafe,
		Sleep: func(ctx context.Context, d time.Duration) error {
			env.sleeps = append(env.sleeps, d)
			return nil
		},
	})
	c, err := New(Config{Region: "cn-shanghai", AccessKey: testAK, SecretKey: testSK, Endpoint: srv.URL, HTTPClient: hc})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	env.client = c
	return env
}

func ctx5s(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNewValidates(t *testing.T) {
	hc := cloudprovider.NewHTTPClient(cloudprovider.BuildOptions{UserAgent: "x"}, Operation)
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "all missing", cfg: Config{}, wantErr: "region, access key, secret key, endpoint, http client"},
		{name: "bare transport", cfg: Config{Region: "r", AccessKey: "a", SecretKey: "s", Endpoint: "e", HTTPClient: &http.Client{Transport: &http.Transport{}}}, wantErr: "wrapping RoundTripper"},
		{name: "ok", cfg: Config{Region: "r", AccessKey: "a", SecretKey: "s", Endpoint: "e", HTTPClient: hc}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New error = %v, want containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestNewLeavesDefaultClientAlone(t *testing.T) {
	before := http.DefaultClient.Transport
	beforeProxy := fmt.Sprintf("%p", http.DefaultTransport.(*http.Transport).Proxy)
	env := newTestEnv(t)
	if _, err := env.client.ListScalingGroups(ctx5s(t), nil); err != nil {
		t.Fatal(err)
	}
	if http.DefaultClient.Transport != before {
		t.Fatalf("http.DefaultClient.Transport changed from %v to %v", before, http.DefaultClient.Transport)
	}
	if got := fmt.Sprintf("%p", http.DefaultTransport.(*http.Transport).Proxy); got != beforeProxy {
		t.Fatalf("http.DefaultTransport.Proxy was replaced")
	}
}

func TestConfigStringRedactsKeys(t *testing.T) {
	cfg := Config{Region: "cn-beijing", AccessKey: testAK, SecretKey: testSK, Endpoint: "open.volcengineapi.com"}
	for _, format := range []string{"%v", "%+v", "%s", "%#v"} {
		out := fmt.Sprintf(format, cfg)
		if strings.Contains(out, testAK) || strings.Contains(out, testSK) {
			t.Errorf("%s leaks a key: %s", format, out)
		}
		if !strings.Contains(out, "cn-beijing") {
			t.Errorf("%s lost the region: %s", format, out)
		}
	}
}

func TestListScalingGroupsPaging(t *testing.T) {
	tests := []struct {
		name      string
		groups    int
		skew      int
		ids       []string
		want      int
		wantCalls int
	}{
		{name: "one page", groups: 3, want: 3, wantCalls: 1},
		{name: "exactly one full page stops at TotalCount", groups: PageSize, want: PageSize, wantCalls: 1},
		{name: "three pages", groups: 2*PageSize + 7, want: 2*PageSize + 7, wantCalls: 3},
		{name: "TotalCount too high stops at short page", groups: 7, skew: 1000, want: 7, wantCalls: 1},
		{name: "TotalCount too low still reads full pages", groups: PageSize + 3, skew: -PageSize, want: PageSize, wantCalls: 1},
		{name: "by id", groups: 5, ids: []string{"scg-0002", "scg-0004"}, want: 2, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)
			for i := 1; i <= tc.groups; i++ {
				env.fake.AddGroup(fakeapi.Group{ID: fmt.Sprintf("scg-%04d", i), Min: 1, Max: 10, Desired: -1, Tags: map[string]string{"k": "v"}})
			}
			env.fake.SetTotalCountSkew(tc.skew)
			got, err := env.client.ListScalingGroups(ctx5s(t), tc.ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Fatalf("got %d groups, want %d", len(got), tc.want)
			}
			if n := env.fake.CountAction(ActionDescribeScalingGroups); n != tc.wantCalls {
				t.Fatalf("%d DescribeScalingGroups calls, want %d", n, tc.wantCalls)
			}
			if got[0].Tags["k"] != "v" || got[0].Desired != NoDesiredNumber || !got[0].HasMin || got[0].Max != 10 {
				t.Fatalf("group not converted: %+v", got[0])
			}
		})
	}
}

func TestRequestsCarryRegionAndService(t *testing.T) {
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0, SubnetIDs: []string{"subnet-1"}})
	env.fake.AddSubnet(fakeapi.Subnet{ID: "subnet-1", ZoneID: "cn-shanghai-a"})
	ctx := ctx5s(t)
	if _, err := env.client.ListScalingGroups(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.ListSubnets(ctx, []string{"subnet-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.ListInstanceTypes(ctx, []string{"ecs.g1.large"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ActionDescribeScalingGroups: "auto_scaling", ActionDescribeSubnets: "vpc", ActionDescribeInstanceTypes: "ecs"}
	for _, r := range env.fake.Requests() {
		if r.Region != "cn-shanghai" {
			t.Errorf("%s signed for region %q", r.Action, r.Region)
		}
		if r.Service != want[r.Action] {
			t.Errorf("%s signed for service %q, want %q", r.Action, r.Service, want[r.Action])
		}
	}
}

func TestListScalingInstancesPaging(t *testing.T) {
	tests := []struct {
		name      string
		instances int
		wantCalls int
	}{
		{name: "empty", instances: 0, wantCalls: 1},
		{name: "two pages", instances: PageSize + 1, wantCalls: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 100, Desired: tc.instances})
			env.fake.Reconcile()
			env.fake.Settle()
			got, err := env.client.ListScalingInstances(ctx5s(t), "scg-a")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.instances {
				t.Fatalf("got %d instances, want %d", len(got), tc.instances)
			}
			for _, inst := range got {
				if inst.Status != fakeapi.StatusInService || inst.GroupID != "scg-a" {
					t.Fatalf("bad instance %+v", inst)
				}
			}
			if n := env.fake.CountAction(ActionDescribeScalingInstances); n != tc.wantCalls {
				t.Fatalf("%d calls, want %d", n, tc.wantCalls)
			}
		})
	}
}

func TestListInstanceTypesBatchesAndGPU(t *testing.T) {
	env := newTestEnv(t)
	var ids []string
	for i := 0; i < 13; i++ {
		id := fmt.Sprintf("ecs.t%02d.large", i)
		ids = append(ids, id)
		env.fake.AddInstanceType(fakeapi.InstanceType{ID: id, CPUs: 2, MemoryMiB: 8192})
	}
	env.fake.AddInstanceType(fakeapi.InstanceType{ID: "ecs.gni2.3xlarge", CPUs: 12, MemoryMiB: 47104, GPUCount: 1, GPUModel: "NVIDIA A10"})
	ids = append(ids, "ecs.gni2.3xlarge")
	got, err := env.client.ListInstanceTypes(ctx5s(t), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 14 {
		t.Fatalf("got %d types, want 14", len(got))
	}
	if n := env.fake.CountAction(ActionDescribeInstanceTypes); n != 2 {
		t.Fatalf("%d calls, want 2 (batches of 10)", n)
	}
	var gpu InstanceType
	for _, it := range got {
		if it.ID == "ecs.gni2.3xlarge" {
			gpu = it
		}
	}
	if gpu.GPUCount != 1 || gpu.GPUModel != "NVIDIA A10" || gpu.CPUs != 12 || gpu.MemoryMiB != 47104 {
		t.Fatalf("gpu type = %+v", gpu)
	}
}

func TestErrorTyping(t *testing.T) {
	tests := []struct {
		name       string
		fault      fakeapi.Fault
		wantKind   error
		wantCode   string
		wantStatus int
		wantCalls  int
	}{
		{name: "throttled 429 retried then surfaced", fault: fakeapi.Fault{Status: 429, Code: "AccountFlowLimitExceeded", Times: 5}, wantKind: cloudprovider.ErrRateLimited, wantCode: "AccountFlowLimitExceeded", wantStatus: 429, wantCalls: 3},
		{name: "throttle code in HTTP 200", fault: fakeapi.Fault{Status: 200, Code: "FlowLimitExceeded", Times: 1}, wantKind: cloudprovider.ErrRateLimited, wantCode: "FlowLimitExceeded", wantStatus: 200, wantCalls: 1},
		{name: "error code in HTTP 200", fault: fakeapi.Fault{Status: 200, Code: "InvalidParameter", Times: 1}, wantCode: "InvalidParameter", wantStatus: 200, wantCalls: 1},
		{name: "500 retried then surfaced", fault: fakeapi.Fault{Status: 500, Code: "InternalError", Times: 5}, wantKind: cloudprovider.ErrUnavailable, wantCode: "InternalError", wantStatus: 500, wantCalls: 3},
		{name: "auth", fault: fakeapi.Fault{Status: 401, Code: "SignatureDoesNotMatch"}, wantKind: cloudprovider.ErrUnauthenticated, wantCode: "SignatureDoesNotMatch", wantStatus: 401, wantCalls: 1},
		{name: "denied", fault: fakeapi.Fault{Status: 403, Code: "AccessDenied"}, wantKind: cloudprovider.ErrPermissionDenied, wantCode: "AccessDenied", wantStatus: 403, wantCalls: 1},
		{name: "quota", fault: fakeapi.Fault{Status: 400, Code: "QuotaExceeded.Instance"}, wantKind: cloudprovider.ErrQuotaExceeded, wantCode: "QuotaExceeded.Instance", wantStatus: 400, wantCalls: 1},
		{name: "not found", fault: fakeapi.Fault{Status: 404, Code: "InvalidScalingGroupId.NotFound"}, wantKind: cloudprovider.ErrNotFound, wantCode: "InvalidScalingGroupId.NotFound", wantStatus: 404, wantCalls: 1},
		{name: "operation denied", fault: fakeapi.Fault{Status: 400, Code: "OperationDenied.ScalingActivityInProgress"}, wantKind: cloudprovider.ErrFailedPrecondition, wantCode: "OperationDenied.ScalingActivityInProgress", wantStatus: 400, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0})
			tc.fault.Action = ActionDescribeScalingGroups
			tc.fault.Message = "injected"
			env.fake.AddFault(tc.fault)
			_, err := env.client.ListScalingGroups(ctx5s(t), nil)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T) is not an *APIError", err, err)
			}
			if ae.Code != tc.wantCode || ae.Status != tc.wantStatus || ae.Action != ActionDescribeScalingGroups || ae.RequestID == "" {
				t.Fatalf("APIError = %+v", ae)
			}
			if tc.wantKind != nil && !errors.Is(err, tc.wantKind) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tc.wantKind)
			}
			if n := env.fake.CountAction(ActionDescribeScalingGroups); n != tc.wantCalls {
				t.Fatalf("%d attempts, want %d", n, tc.wantCalls)
			}
		})
	}
}

func TestMalformedBody(t *testing.T) {
	env := newTestEnv(t)
	env.fake.AddFault(fakeapi.Fault{Action: ActionDescribeScalingGroups, Status: 200, Malformed: true})
	_, err := env.client.ListScalingGroups(ctx5s(t), nil)
	if !errors.Is(err, ErrMalformedResponse) || !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Fatalf("error = %v, want malformed + unavailable", err)
	}
}

func TestRemoveInstancesNotRetriedOnServerError(t *testing.T) {
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 2})
	env.fake.Reconcile()
	env.fake.Settle()
	insts := env.fake.Instances("scg-a")
	env.fake.FailNext(1)
	_, err := env.client.RemoveInstances(ctx5s(t), "scg-a", []string{insts[0].ID}, true)
	if !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Fatalf("error = %v, want unavailable", err)
	}
	if n := env.fake.CountAction(ActionRemoveInstances); n != 1 {
		t.Fatalf("RemoveInstances sent %d times, want 1 (not idempotent)", n)
	}
	if g, _ := env.fake.Group("scg-a"); g.Desired != 2 {
		t.Fatalf("desired = %d after failed remove, want 2", g.Desired)
	}
}

func TestRemoveInstancesParameters(t *testing.T) {
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 1, Max: 5, Desired: 2})
	env.fake.Reconcile()
	env.fake.Settle()
	insts := env.fake.Instances("scg-a")
	if _, err := env.client.RemoveInstances(ctx5s(t), "scg-a", []string{insts[0].ID}, false); err != nil {
		t.Fatal(err)
	}
	reqs := env.fake.Requests()
	q := reqs[len(reqs)-1].Query
	if q.Get("DecreaseDesiredCapacity") != "false" || q.Get("ForceDelete") != "true" || q.Get("InstanceIds.1") != insts[0].ID {
		t.Fatalf("query = %v", q)
	}
	if _, err := env.client.RemoveInstances(ctx5s(t), "scg-a", make([]string, MaxRemoveBatch+1), true); err == nil {
		t.Fatal("21 ids accepted")
	}
}

func TestDeadlineStopsStalledCall(t *testing.T) {
	env := newTestEnv(t)
	env.fake.AddFault(fakeapi.Fault{Action: ActionModifyScalingGroup, Stall: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := env.client.SetDesiredInstances(ctx, "scg-a", 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want deadline exceeded", err)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0})
	env.fake.AddFault(fakeapi.Fault{Action: ActionDescribeScalingGroups, Status: 429, Code: "AccountFlowLimitExceeded", RetryAfter: "1"})
	got, err := env.client.ListScalingGroups(ctx5s(t), nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	if len(env.sleeps) != 1 || env.sleeps[0] != time.Second {
		t.Fatalf("sleeps = %v, want [1s]", env.sleeps)
	}
}

func TestRecentActivities(t *testing.T) {
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0})
	if err := env.client.SetDesiredInstances(ctx5s(t), "scg-a", 1); err != nil {
		t.Fatal(err)
	}
	env.fake.SetCreateFailure("scg-a", &fakeapi.CreateFailure{Code: "InsufficientInstanceStock", Message: "no stock in zone"})
	if err := env.client.SetDesiredInstances(ctx5s(t), "scg-a", 3); err != nil {
		t.Fatal(err)
	}
	got, err := env.client.RecentActivities(ctx5s(t), "scg-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Failed || got[1].Failed {
		t.Fatalf("activities = %+v, want the failed one first", got)
	}
	if len(got[0].Related) != 2 || !got[0].Related[0].InstanceFailed() || !strings.Contains(got[0].Related[0].Message, "InsufficientInstanceStock") {
		t.Fatalf("related = %+v", got[0].Related)
	}
}

func TestOperation(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://x/?Action=DescribeScalingGroups&ScalingGroupIds.1=scg-abc&Version=2020-01-01", nil)
	if got := Operation(req); got != "GET /?Action=DescribeScalingGroups" {
		t.Fatalf("Operation = %q", got)
	}
	if !RetrySafe(req) {
		t.Fatal("Describe not retry-safe")
	}
	req2, _ := http.NewRequest(http.MethodGet, "http://x/?Action=RemoveInstances", nil)
	if RetrySafe(req2) {
		t.Fatal("RemoveInstances retry-safe")
	}
}

func TestServerMessageScrubbedOfKeys(t *testing.T) {
	env := newTestEnv(t)
	env.fake.AddFault(fakeapi.Fault{Action: ActionDescribeScalingGroups, Status: 401, Code: "InvalidAccessKey",
		Message: "The AccessKey " + testAK + " (secret " + testSK + ") is invalid"})
	_, err := env.client.ListScalingGroups(ctx5s(t), nil)
	if !errors.Is(err, cloudprovider.ErrUnauthenticated) {
		t.Fatalf("error = %v", err)
	}
	if msg := fmt.Sprintf("%v %+v", err, err); strings.Contains(msg, testAK) || strings.Contains(msg, testSK) || !strings.Contains(msg, "<redacted>") {
		t.Fatalf("error = %s", msg)
	}
}
