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
	t.Parallel()
	s := New(Options{Now: fakecloud.NewManualClock(time.Unix(0, 0)).Now})
	for _, id := range []string{"scg-1", "scg-2", "scg-3"} {
		s.AddGroup(Group{ID: id, Min: 0, Max: 3, Desired: 0})
	}
	srv := s.Start()
	t.Cleanup(s.Close)
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
		// Not parallel: the request log is checked after the cases, on the shared server.
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
	t.Parallel()
	s := New(Options{})
	s.AddFault(fakecloud.Fault{Operation: "DescribeScalingGroups", Status: 200, Code: "FlowLimitExceeded", Skip: 1})
	srv := s.Start()
	t.Cleanup(s.Close)
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
	t.Parallel()
	s := New(Options{})
	srv := s.Start()
	t.Cleanup(s.Close)
	q := url.Values{"Action": {"DescribeScalingGroups"}, "Version": {"2020-01-01"}}
	for status, wantCode := range map[int]string{429: "AccountFlowLimitExceeded", 503: "InternalError", 403: "AccessDenied", 401: "SignatureDoesNotMatch"} {
		s.AddFault(fakecloud.Fault{Status: status})
		got, env := get(t, srv, q, testAuth)
		if got != status || env.ResponseMetadata.Error == nil || env.ResponseMetadata.Error.Code != wantCode || env.ResponseMetadata.RequestID == "" {
			t.Errorf("fault %d answered %d %+v, want the envelope with %s and a request id", status, got, env.ResponseMetadata, wantCode)
		}
	}
}

// TestEnvelope: every answer carries ResponseMetadata naming the action,
// version, service and region; a refusal carries Error and no Result.
func TestEnvelope(t *testing.T) {
	t.Parallel()
	s := New(Options{Region: "ap-southeast-1", AccessKey: "AK"})
	s.AddSubnet(Subnet{ID: "sn-1", ZoneID: "z"})
	base := s.Start()
	t.Cleanup(s.Close)
	for _, tc := range []struct {
		action, version, service, auth string
		wantStatus                     int
		wantCode                       string
	}{
		{action: ActionDescribeScalingGroups, version: "2020-01-01", service: "auto_scaling", auth: testAuth, wantStatus: 200},
		{action: ActionDescribeInstanceTypes, version: "2020-04-01", service: "ecs", auth: testAuth, wantStatus: 200},
		{action: ActionDescribeSubnets, version: "2020-04-01", service: "vpc", auth: testAuth, wantStatus: 200},
		{action: ActionDescribeSubnets, version: "2020-04-01", service: "vpc", auth: strings.Replace(testAuth, "Credential=AK/", "Credential=OTHER/", 1), wantStatus: 401, wantCode: "InvalidAccessKey"},
		{action: ActionModifyScalingGroup, version: "2020-01-01", service: "auto_scaling", auth: testAuth, wantStatus: 400, wantCode: "MissingParameter.ScalingGroupId"},
	} {
		t.Run(tc.action+" "+tc.wantCode, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(http.MethodGet, base+"/?"+url.Values{"Action": {tc.action}, "Version": {tc.version}}.Encode(), nil)
			req.Header.Set("Authorization", tc.auth)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				ResponseMetadata map[string]any
				Result           map[string]any
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			meta := body.ResponseMetadata
			if resp.StatusCode != tc.wantStatus || meta["Action"] != tc.action || meta["Version"] != tc.version ||
				meta["Service"] != tc.service || meta["Region"] != "ap-southeast-1" || meta["RequestId"] == "" {
				t.Fatalf("%d %v, want %d and the action's metadata", resp.StatusCode, meta, tc.wantStatus)
			}
			errBody, _ := meta["Error"].(map[string]any)
			switch {
			case tc.wantCode == "" && (errBody != nil || body.Result == nil):
				t.Fatalf("success answered Error %v, Result %v", errBody, body.Result)
			case tc.wantCode != "" && (errBody == nil || errBody["Code"] != tc.wantCode || body.Result != nil):
				t.Fatalf("refusal answered Error %v, Result %v; want %s and no Result", errBody, body.Result, tc.wantCode)
			}
		})
	}
}

// TestMutatingActionsAreMarked: every action arrives as GET, so a fault
// policy learns from the fake which ones change the cloud (the soak applies
// those before garbling their answer).
func TestMutatingActionsAreMarked(t *testing.T) {
	t.Parallel()
	s := New(Options{})
	seen := map[string]bool{}
	s.SetFaultPolicy(func(r fakecloud.FaultRequest) (fakecloud.Fault, bool) {
		seen[r.Operation] = r.Mutating
		return fakecloud.Fault{}, false
	})
	srv := s.Start()
	t.Cleanup(s.Close)
	for _, action := range []string{ActionDescribeScalingGroups, ActionModifyScalingGroup, ActionRemoveInstances, ActionDescribeScalingInstances} {
		get(t, srv, url.Values{"Action": {action}, "Version": {"2020-01-01"}}, testAuth)
	}
	want := map[string]bool{ActionDescribeScalingGroups: false, ActionModifyScalingGroup: true, ActionRemoveInstances: true, ActionDescribeScalingInstances: false}
	for action, mutating := range want {
		if got, ok := seen[action]; !ok || got != mutating {
			t.Errorf("%s: Mutating = %v (seen %v), want %v", action, got, ok, mutating)
		}
	}
}

// TestOtherRegion: a request signed for a region outside Options.Regions is
// refused with 400 InvalidRegion, or served as an empty region that leaves
// the served one untouched; the served region sees its groups either way.
func TestOtherRegion(t *testing.T) {
	t.Parallel()
	typo := strings.Replace(testAuth, "/cn-beijing/", "/cn-bejing/", 1)
	list := url.Values{"Action": {ActionDescribeScalingGroups}, "Version": {"2020-01-01"}}
	modify := url.Values{"Action": {ActionModifyScalingGroup}, "Version": {"2020-01-01"}, "ScalingGroupId": {"scg-1"}, "DesireInstanceNumber": {"2"}}
	for _, tc := range []struct {
		policy     RegionPolicy
		wantStatus int
		wantCode   string
	}{
		{policy: RefuseRegion, wantStatus: http.StatusBadRequest, wantCode: codeInvalidRegion},
		{policy: EmptyRegion, wantStatus: http.StatusOK},
	} {
		t.Run(tc.wantCode, func(t *testing.T) {
			t.Parallel()
			s := New(Options{Regions: []string{"cn-beijing"}, OtherRegion: tc.policy})
			s.AddGroup(Group{ID: "scg-1", Min: 0, Max: 3, Desired: 0})
			base := s.Start()
			defer s.Close()
			status, env := get(t, base, list, typo)
			gotCode := ""
			if env.ResponseMetadata.Error != nil {
				gotCode = env.ResponseMetadata.Error.Code
			}
			if status != tc.wantStatus || gotCode != tc.wantCode {
				t.Fatalf("other region: %d %q, want %d %q", status, gotCode, tc.wantStatus, tc.wantCode)
			}
			if tc.wantCode == "" && env.Result["TotalCount"] != float64(0) {
				t.Fatalf("the empty region lists %v", env.Result)
			}
			if status, _ := get(t, base, modify, typo); status == http.StatusOK {
				t.Fatal("a mutation in the other region succeeded")
			}
			if g, _ := s.Group("scg-1"); g.Desired != 0 {
				t.Fatalf("the other region's mutation changed the served group: desired %d", g.Desired)
			}
			if status, env := get(t, base, list, testAuth); status != http.StatusOK || env.Result["TotalCount"] != float64(1) {
				t.Fatalf("served region: %d %v, want its one group", status, env.Result)
			}
		})
	}
}
