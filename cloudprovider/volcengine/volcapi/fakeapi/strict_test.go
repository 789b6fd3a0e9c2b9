package fakeapi

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// call sends one Auto Scaling action with params and returns the status and
// the error code (empty on success).
func call(t *testing.T, base, action string, params map[string]string) (int, string) {
	t.Helper()
	q := url.Values{"Action": {action}, "Version": {"2020-01-01"}}
	for k, v := range params {
		q.Set(k, v)
	}
	status, env := get(t, base, q, testAuth)
	if env.ResponseMetadata.Error != nil {
		return status, env.ResponseMetadata.Error.Code
	}
	return status, ""
}

// TestStrictRules: each documented constraint is refused with a documented
// code and changes nothing.
func TestStrictRules(t *testing.T) {
	t.Parallel()
	clock := fakecloud.NewManualClock(time.Unix(0, 0))
	s := New(Options{Now: clock.Now, CheckInterval: time.Hour, ProvisionDelay: time.Hour})
	s.AddGroup(Group{ID: "scg-a", Min: 0, Max: 10, Desired: 2})
	s.AddGroup(Group{ID: "scg-off", Min: 0, Max: 10, Desired: 0, LifecycleState: "InActive"})
	s.Settle()
	pending := s.AddInstance("scg-a", StatusPending)
	broken := s.AddInstance("scg-a", StatusError)
	s.SetGroupBounds("scg-a", 3, 10, 4)
	base := s.Start()
	t.Cleanup(s.Close)
	eleven := map[string]string{}
	for i := 1; i <= 11; i++ {
		eleven[fmt.Sprintf("ScalingGroupIds.%d", i)] = fmt.Sprintf("scg-%d", i)
	}
	cfgs := map[string]string{}
	for i := 1; i <= 11; i++ {
		cfgs[fmt.Sprintf("ScalingConfigurationIds.%d", i)] = fmt.Sprintf("scc-%d", i)
	}
	inService := s.Instances("scg-a")[0].ID
	tests := []struct {
		name, action string
		params       map[string]string
		wantCode     string
	}{
		{"11 group ids", "DescribeScalingGroups", eleven, "InvalidParameter"},
		{"11 configuration ids", "DescribeScalingConfigurations", cfgs, "InvalidParameter"},
		{"remove a pending instance", "RemoveInstances", map[string]string{"ScalingGroupId": "scg-a", "InstanceIds.1": pending}, "InvalidParameter"},
		{"remove an Error instance", "RemoveInstances", map[string]string{"ScalingGroupId": "scg-a", "InstanceIds.1": broken}, "InvalidParameter"},
		{"remove below min", "RemoveInstances", map[string]string{"ScalingGroupId": "scg-a", "InstanceIds.1": inService, "InstanceIds.2": s.Instances("scg-a")[1].ID}, "InvalidParameter"},
		{"resize a disabled group", "ModifyScalingGroup", map[string]string{"ScalingGroupId": "scg-off", "DesireInstanceNumber": "1"}, "InvalidScalingGroup.InvalidStatus"},
		{"no group id", "ModifyScalingGroup", map[string]string{"DesireInstanceNumber": "1"}, "MissingParameter.ScalingGroupId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := len(s.Instances("scg-a"))
			status, code := call(t, base, tc.action, tc.params)
			if status != 400 || code != tc.wantCode {
				t.Fatalf("%s = %d %q, want 400 %q", tc.action, status, code, tc.wantCode)
			}
			if g, _ := s.Group("scg-a"); g.Desired != 4 || len(s.Instances("scg-a")) != before {
				t.Fatalf("a refused call changed the group: desired %d, %d instances", g.Desired, len(s.Instances("scg-a")))
			}
		})
	}
}

// TestHealthCheckReplacesErrorInstances: an Error instance is removed at the
// first check after ErrorGrace and replaced while the desired number wants it.
func TestHealthCheckReplacesErrorInstances(t *testing.T) {
	t.Parallel()
	clock := fakecloud.NewManualClock(time.Unix(0, 0))
	s := New(Options{Now: clock.Now, ErrorGrace: time.Minute})
	s.AddGroup(Group{ID: "scg-a", Min: 0, Max: 5, Desired: 1})
	broken := s.AddInstance("scg-a", StatusError)
	if insts := s.Instances("scg-a"); len(insts) != 1 || insts[0].ID != broken {
		t.Fatalf("before the grace: %+v", insts)
	}
	clock.Advance(time.Minute)
	insts := s.Instances("scg-a")
	if len(insts) != 1 || insts[0].ID == broken || insts[0].Status != StatusInService {
		t.Fatalf("after the health check: %+v, want one new InService instance", insts)
	}
}

// TestModifyDoesNotReconcileInline: the desired number is acted on at the
// next periodic check, not inside ModifyScalingGroup.
func TestModifyDoesNotReconcileInline(t *testing.T) {
	t.Parallel()
	clock := fakecloud.NewManualClock(time.Unix(0, 0))
	s := New(Options{Now: clock.Now, CheckInterval: time.Minute})
	s.AddGroup(Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0})
	base := s.Start()
	t.Cleanup(s.Close)
	if status, code := call(t, base, "ModifyScalingGroup", map[string]string{"ScalingGroupId": "scg-a", "DesireInstanceNumber": "2"}); code != "" {
		t.Fatalf("ModifyScalingGroup = %d %s", status, code)
	}
	if n := len(s.instancesOfLocked("scg-a")); n != 0 {
		t.Fatalf("%d instances inside the call, want 0", n)
	}
	clock.Advance(time.Minute)
	if n := len(s.Instances("scg-a")); n != 2 {
		t.Fatalf("%d instances after the check, want 2", n)
	}
}
