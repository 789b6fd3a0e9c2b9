package volcapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

func TestErrorTyping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		fault      fakecloud.Fault
		wantKind   error
		wantCode   string
		wantStatus int
		wantCalls  int
	}{
		{name: "throttled 429 retried then surfaced", fault: fakecloud.Fault{Status: 429, Code: "AccountFlowLimitExceeded", Times: 5}, wantKind: cloudprovider.ErrRateLimited, wantCode: "AccountFlowLimitExceeded", wantStatus: 429, wantCalls: 3},
		{name: "throttle code in HTTP 200", fault: fakecloud.Fault{Status: 200, Code: "FlowLimitExceeded", Times: 1}, wantKind: cloudprovider.ErrRateLimited, wantCode: "FlowLimitExceeded", wantStatus: 200, wantCalls: 1},
		{name: "error code in HTTP 200", fault: fakecloud.Fault{Status: 200, Code: "InvalidParameter", Times: 1}, wantKind: cloudprovider.ErrFailedPrecondition, wantCode: "InvalidParameter", wantStatus: 200, wantCalls: 1},
		{name: "500 retried then surfaced", fault: fakecloud.Fault{Status: 500, Code: "InternalError", Times: 5}, wantKind: cloudprovider.ErrUnavailable, wantCode: "InternalError", wantStatus: 500, wantCalls: 3},
		{name: "auth", fault: fakecloud.Fault{Status: 401, Code: "SignatureDoesNotMatch"}, wantKind: cloudprovider.ErrUnauthenticated, wantCode: "SignatureDoesNotMatch", wantStatus: 401, wantCalls: 1},
		{name: "denied", fault: fakecloud.Fault{Status: 403, Code: "AccessDenied"}, wantKind: cloudprovider.ErrPermissionDenied, wantCode: "AccessDenied", wantStatus: 403, wantCalls: 1},
		{name: "quota", fault: fakecloud.Fault{Status: 400, Code: "QuotaExceeded.Instance"}, wantKind: cloudprovider.ErrQuotaExceeded, wantCode: "QuotaExceeded.Instance", wantStatus: 400, wantCalls: 1},
		{name: "not found", fault: fakecloud.Fault{Status: 404, Code: "InvalidActionOrVersion"}, wantKind: cloudprovider.ErrNotFound, wantCode: "InvalidActionOrVersion", wantStatus: 404, wantCalls: 1},
		{name: "group in the wrong state", fault: fakecloud.Fault{Status: 400, Code: "InvalidScalingGroup.InvalidStatus"}, wantKind: cloudprovider.ErrFailedPrecondition, wantCode: "InvalidScalingGroup.InvalidStatus", wantStatus: 400, wantCalls: 1},
		{name: "missing parameter", fault: fakecloud.Fault{Status: 400, Code: "MissingParameter.ScalingGroupId"}, wantKind: cloudprovider.ErrFailedPrecondition, wantCode: "MissingParameter.ScalingGroupId", wantStatus: 400, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0})
			tc.fault.Operation = ActionDescribeScalingGroups
			tc.fault.Message = "injected"
			env.fake.AddFault(tc.fault)
			_, err := env.client.ListScalingGroups(ctx5s(t), nil)
			var ae *cloudhttp.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T) is not an *APIError", err, err)
			}
			if ae.Code != tc.wantCode || ae.Status != tc.wantStatus || ae.Operation != ActionDescribeScalingGroups || ae.RequestID == "" {
				t.Fatalf("APIError = %+v", ae)
			}
			if tc.wantKind != nil && !errors.Is(err, tc.wantKind) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tc.wantKind)
			}
			if n := env.fake.CountOperation(ActionDescribeScalingGroups); n != tc.wantCalls {
				t.Fatalf("%d attempts, want %d", n, tc.wantCalls)
			}
		})
	}
}

// TestMalformedBody: a success body that does not parse is an error naming
// cloud, operation and status; the cloud answered 2xx, so a mutation it
// answers is applied (the guard reads the group), never unknown.
func TestMalformedBody(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.fake.AddFault(fakecloud.Fault{Operation: ActionDescribeScalingGroups, Status: 200, Malformed: true})
	_, err := env.client.ListScalingGroups(ctx5s(t), nil)
	if !errors.Is(err, cloudprovider.ErrMalformedResponse) || cloudprovider.OutcomeOf(err) != cloudprovider.MutationApplied {
		t.Fatalf("error = %v, want malformed with the outcome applied", err)
	}
	for _, want := range []string{"volcengine", ActionDescribeScalingGroups, "HTTP 200"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
}

// TestJSONLabelledTextPlainIsAccepted: a gateway may relabel the answer;
// the body decides, not the label.
func TestJSONLabelledTextPlainIsAccepted(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0})
	body := `{"ResponseMetadata":{"RequestId":"r1","Action":"DescribeScalingGroups"},"Result":{"ScalingGroups":[{"ScalingGroupId":"scg-a","MinInstanceNumber":0,"MaxInstanceNumber":5}],"TotalCount":1,"PageNumber":1,"PageSize":100}}`
	env.fake.AddFault(fakecloud.Fault{Operation: ActionDescribeScalingGroups, Status: 200, Body: &body, ContentType: "text/plain; charset=utf-8"})
	got, err := env.client.ListScalingGroups(ctx5s(t), nil)
	if err != nil || len(got) != 1 || got[0].ID != "scg-a" || got[0].Max != 5 {
		t.Fatalf("JSON labelled text/plain: %+v, %v; want it read", got, err)
	}
}

// TestMutationOutcomes: the client states each answer's outcome, with the
// status the SDK drops taken from the shared stack's answer record.
func TestMutationOutcomes(t *testing.T) {
	t.Parallel()
	empty, html := "", "<html>502 Bad Gateway</html>"
	for _, tc := range []struct {
		name       string
		fault      fakecloud.Fault
		want       cloudprovider.MutationOutcome
		wantStatus int
	}{
		{"error object in a 200", fakecloud.Fault{Status: 200, Code: "InvalidScalingGroup.InvalidStatus"}, cloudprovider.MutationRefused, 200},
		{"400", fakecloud.Fault{Status: 400, Code: "InvalidParameter"}, cloudprovider.MutationRefused, 400},
		{"500 every attempt", fakecloud.Fault{Status: 500, Times: 10}, cloudprovider.MutationUnknown, 500},
		{"gateway page 502", fakecloud.Fault{Status: 502, Body: &html, ContentType: "text/html", Times: 10}, cloudprovider.MutationUnknown, 502},
		{"empty 200, applied", fakecloud.Fault{Status: 200, Body: &empty, AfterApply: true}, cloudprovider.MutationApplied, 200},
		{"reset", fakecloud.Fault{Reset: true, Times: 10}, cloudprovider.MutationUnknown, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0})
			tc.fault.Operation = ActionModifyScalingGroup
			env.fake.AddFault(tc.fault)
			err := env.client.SetDesiredInstances(ctx5s(t), "scg-a", 1)
			var ae *cloudhttp.APIError
			if err == nil || !errors.As(err, &ae) || cloudprovider.OutcomeOf(err) != tc.want || ae.Status != tc.wantStatus {
				t.Fatalf("%v: outcome %s, want %s with status %d", err, cloudprovider.OutcomeOf(err), tc.want, tc.wantStatus)
			}
		})
	}
}

func TestServerMessageScrubbedOfKeys(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.fake.AddFault(fakecloud.Fault{Operation: ActionDescribeScalingGroups, Status: 401, Code: "InvalidAccessKey",
		Message: "The AccessKey " + testAK + " (secret " + testSK + ") is invalid"})
	_, err := env.client.ListScalingGroups(ctx5s(t), nil)
	if !errors.Is(err, cloudprovider.ErrUnauthenticated) {
		t.Fatalf("error = %v", err)
	}
	if msg := fmt.Sprintf("%v %+v", err, err); strings.Contains(msg, testAK) || strings.Contains(msg, testSK) || !strings.Contains(msg, "<redacted>") {
		t.Fatalf("error = %s", msg)
	}
}
func TestDeadlineStopsStalledCall(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.fake.AddFault(fakecloud.Fault{Operation: ActionModifyScalingGroup, Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := env.client.SetDesiredInstances(ctx, "scg-a", 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want deadline exceeded", err)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0})
	env.fake.AddFault(fakecloud.Fault{Operation: ActionDescribeScalingGroups, Status: 429, Code: "AccountFlowLimitExceeded", RetryAfter: "1"})
	got, err := env.client.ListScalingGroups(ctx5s(t), nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	if len(env.sleeps) != 1 || env.sleeps[0] != time.Second {
		t.Fatalf("sleeps = %v, want [1s]", env.sleeps)
	}
}
