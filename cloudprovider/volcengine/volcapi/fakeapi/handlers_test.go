package fakeapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

const testAuth = "HMAC-SHA256 Credential=AK/20261202/cn-beijing/auto_scaling/request, SignedHeaders=host, Signature=00"

type envelope struct {
	ResponseMetadata struct {
		RequestID string `json:"RequestId"`
		Action    string
		Error     *struct{ Code, Message string }
	}
	Result map[string]any
}

func get(t *testing.T, baseURL string, q url.Values, auth string) (int, envelope) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, baseURL+"/?"+q.Encode(), nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env envelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, env
}

func TestWireFormat(t *testing.T) {
	s := New(Options{Now: fakecloud.NewManualClock(time.Unix(0, 0)).Now})
	for _, id := range []string{"scg-1", "scg-2", "scg-3"} {
		s.AddGroup(Group{ID: id, Min: 0, Max: 3, Desired: 0})
	}
	srv := s.Start()
	defer s.Close()
	tests := []struct {
		name       string
		q          url.Values
		auth       string
		wantStatus int
		wantCode   string
		wantMsg    string
		check      func(t *testing.T, r map[string]any)
	}{
		{name: "paged groups", q: url.Values{"Action": {"DescribeScalingGroups"}, "Version": {"2020-01-01"}, "PageSize": {"2"}, "PageNumber": {"2"}}, auth: testAuth, wantStatus: 200,
			check: func(t *testing.T, r map[string]any) {
				if r["TotalCount"].(float64) != 3 || len(r["ScalingGroups"].([]any)) != 1 || r["PageNumber"].(float64) != 2 {
					t.Fatalf("result = %v", r)
				}
			}},
		{name: "unsigned", q: url.Values{"Action": {"DescribeScalingGroups"}, "Version": {"2020-01-01"}}, wantStatus: 401, wantCode: "MissingAuthenticationToken"},
		{name: "wrong version", q: url.Values{"Action": {"DescribeScalingGroups"}, "Version": {"2020-04-01"}}, auth: testAuth, wantStatus: 404, wantCode: "InvalidActionOrVersion"},
		{name: "page size too big", q: url.Values{"Action": {"DescribeScalingGroups"}, "Version": {"2020-01-01"}, "PageSize": {"101"}}, auth: testAuth, wantStatus: 400, wantCode: "InvalidParameter"},
		{name: "desired above max", q: url.Values{"Action": {"ModifyScalingGroup"}, "Version": {"2020-01-01"}, "ScalingGroupId": {"scg-1"}, "DesireInstanceNumber": {"4"}}, auth: testAuth, wantStatus: 400, wantCode: "InvalidParameter"},
		{name: "remove 21", q: func() url.Values {
			q := url.Values{"Action": {"RemoveInstances"}, "Version": {"2020-01-01"}, "ScalingGroupId": {"scg-1"}}
			for i := 1; i <= 21; i++ {
				q.Set("InstanceIds."+strconv.Itoa(i), "i-x")
			}
			return q
		}(), auth: testAuth, wantStatus: 400, wantCode: "InvalidParameter", wantMsg: "got 21"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, env := get(t, srv, tc.q, tc.auth)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d (%+v)", status, tc.wantStatus, env)
			}
			if env.ResponseMetadata.RequestID == "" {
				t.Fatal("no RequestId")
			}
			if tc.wantCode != "" {
				if env.ResponseMetadata.Error == nil || env.ResponseMetadata.Error.Code != tc.wantCode {
					t.Fatalf("error = %+v, want %s", env.ResponseMetadata.Error, tc.wantCode)
				}
				if !strings.Contains(env.ResponseMetadata.Error.Message, tc.wantMsg) {
					t.Fatalf("message %q lacks %q", env.ResponseMetadata.Error.Message, tc.wantMsg)
				}
				return
			}
			tc.check(t, env.Result)
		})
	}
	reqs := s.Requests()
	if len(reqs) != len(tests) {
		t.Fatalf("request log = %+v", reqs)
	}
	if service, region := SigningScope(reqs[0]); region != "cn-beijing" || service != "auto_scaling" {
		t.Fatalf("request log = %+v", reqs)
	}
}

func TestFaultInHTTP200(t *testing.T) {
	s := New(Options{})
	s.AddFault(fakecloud.Fault{Operation: "DescribeScalingGroups", Status: 200, Code: "FlowLimitExceeded", Skip: 1})
	srv := s.Start()
	defer s.Close()
	q := url.Values{"Action": {"DescribeScalingGroups"}, "Version": {"2020-01-01"}}
	if status, env := get(t, srv, q, testAuth); status != 200 || env.ResponseMetadata.Error != nil {
		t.Fatalf("first call (skipped fault) = %d %+v", status, env.ResponseMetadata.Error)
	}
	status, env := get(t, srv, q, testAuth)
	if status != 200 || env.ResponseMetadata.Error == nil || env.ResponseMetadata.Error.Code != "FlowLimitExceeded" {
		t.Fatalf("second call = %d %+v", status, env.ResponseMetadata.Error)
	}
	if status, env := get(t, srv, q, testAuth); status != 200 || env.ResponseMetadata.Error != nil {
		t.Fatalf("fault not consumed: %d %+v", status, env.ResponseMetadata.Error)
	}
}

// TestFaultDefaultsToGatewayCodes: a fault given only a status answers in the
// gateway's envelope with the documented code for that status.
func TestFaultDefaultsToGatewayCodes(t *testing.T) {
	s := New(Options{})
	srv := s.Start()
	defer s.Close()
	q := url.Values{"Action": {"DescribeScalingGroups"}, "Version": {"2020-01-01"}}
	for status, wantCode := range map[int]string{429: "AccountFlowLimitExceeded", 503: "InternalError", 403: "AccessDenied", 401: "SignatureDoesNotMatch"} {
		s.AddFault(fakecloud.Fault{Status: status})
		got, env := get(t, srv, q, testAuth)
		if got != status || env.ResponseMetadata.Error == nil || env.ResponseMetadata.Error.Code != wantCode || env.ResponseMetadata.RequestID == "" {
			t.Errorf("fault %d answered %d %+v, want the envelope with %s and a request id", status, got, env.ResponseMetadata, wantCode)
		}
	}
}
