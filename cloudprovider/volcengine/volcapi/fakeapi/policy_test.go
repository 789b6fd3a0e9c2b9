package fakeapi

import (
	"bytes"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// examplePolicyFile is the IAM policy the deployment example ships.
const examplePolicyFile = "../../../../examples/volcengine/iam-policy.json"

func TestPolicyRefusesWithAccessDenied(t *testing.T) {
	t.Parallel()
	policy, err := ParsePolicy([]byte(`{"Statement":[
		{"Effect":"Allow","Action":["auto_scaling:DescribeScalingGroups","auto_scaling:ModifyScalingGroup"],"Resource":["*"]},
		{"Effect":"Deny","Action":["auto_scaling:ModifyScalingGroup"],"Resource":["*"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Now: fakecloud.NewManualClock(time.Unix(0, 0)).Now, Policy: policy})
	s.AddGroup(Group{ID: "scg-1", Min: 0, Max: 3, Desired: 1})
	srv := s.Start()
	t.Cleanup(s.Close)
	q := func(action string, kv ...string) url.Values {
		v := url.Values{"Action": {action}, "Version": {"2020-01-01"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	if status, env := get(t, srv, q(ActionDescribeScalingGroups), testAuth); status != 200 || env.ResponseMetadata.Error != nil {
		t.Fatalf("allowed action: %d %+v", status, env.ResponseMetadata.Error)
	}
	// Deny wins over Allow; an action no statement names is refused too.
	for _, req := range []struct {
		q    url.Values
		perm string
	}{
		{q(ActionModifyScalingGroup, "ScalingGroupId", "scg-1", "DesireInstanceNumber", "3"), "auto_scaling:ModifyScalingGroup"},
		{q(ActionDescribeScalingInstances, "ScalingGroupId", "scg-1"), "auto_scaling:DescribeScalingInstances"},
	} {
		status, env := get(t, srv, req.q, testAuth)
		e := env.ResponseMetadata.Error
		if status != 403 || e == nil || e.Code != "AccessDenied" || !strings.Contains(e.Message, req.perm) {
			t.Fatalf("%s: %d %+v, want 403 AccessDenied naming %s", req.q.Get("Action"), status, e, req.perm)
		}
	}
	if g, _ := s.Group("scg-1"); g.Desired != 1 {
		t.Fatalf("a refused ModifyScalingGroup changed the group: desired %d", g.Desired)
	}
}

func TestAllowListRefusesTheRest(t *testing.T) {
	t.Parallel()
	policy, err := fakecloud.AllowOnly(Permission(ActionDescribeScalingGroups))
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Now: fakecloud.NewManualClock(time.Unix(0, 0)).Now, Policy: policy})
	srv := s.Start()
	t.Cleanup(s.Close)
	ecsAuth := strings.Replace(testAuth, "/auto_scaling/", "/ecs/", 1)
	if status, env := get(t, srv, url.Values{"Action": {ActionDescribeScalingGroups}, "Version": {"2020-01-01"}}, testAuth); status != 200 || env.ResponseMetadata.Error != nil {
		t.Fatalf("listed action: %d %+v", status, env.ResponseMetadata.Error)
	}
	status, env := get(t, srv, url.Values{"Action": {ActionDescribeImages}, "Version": {"2020-04-01"}}, ecsAuth)
	if e := env.ResponseMetadata.Error; status != 403 || e == nil || e.Code != "AccessDenied" {
		t.Fatalf("unlisted action: %d %+v, want 403 AccessDenied", status, e)
	}
}

func TestPolicyRefusesWhatItCannotEvaluate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ policy, want string }{
		{`{"Statement":[]}`, "Statement is empty"},
		{`{"Statement":[{"Effect":"Allow","Action":["auto_scaling:*"],"Resource":["*"]}]}`, `Statement[0].Action "auto_scaling:*"`},
		{`{"Statement":[{"Effect":"Allow","Action":["DescribeScalingGroups"],"Resource":["*"]}]}`, `want one exact "service:Action" name`},
		{`{"Statement":[{"Effect":"Allow","Action":["ecs:DescribeImages"],"Resource":["trn:ecs:*:1:instance/*"]}]}`, `Statement[0].Resource`},
		{`{"Statement":[{"Effect":"allow","Action":["ecs:DescribeImages"],"Resource":["*"]}]}`, `Statement[0].Effect "allow"`},
		{`{"Statement":[{"Effect":"Allow","Action":["ecs:DescribeImages"],"Resource":["*"],"Condition":{}}]}`, `unknown field "Condition"`},
	} {
		_, err := ParsePolicy([]byte(tc.policy))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.policy, err, tc.want)
		}
	}
}

func TestPermissionNamesTheService(t *testing.T) {
	t.Parallel()
	for action, want := range map[string]string{
		ActionDescribeScalingGroups: "auto_scaling:DescribeScalingGroups",
		ActionDescribeImages:        "ecs:DescribeImages",
		ActionDescribeSubnets:       "vpc:DescribeSubnets",
		"RunInstances":              "",
	} {
		if got := Permission(action); got != want {
			t.Errorf("Permission(%s) = %q, want %q", action, got, want)
		}
	}
}

func TestExamplePolicyLoads(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePolicyFile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.AllowsOthers() || len(p.Granted()) == 0 {
		t.Fatalf("example policy: granted %q, others allowed %v", p.Granted(), p.AllowsOthers())
	}
	if !bytes.Equal(data, examplePolicy) {
		t.Fatalf("the policy embedded for --simulate differs from %s: copy it to iam-policy.json here", examplePolicyFile)
	}
	if _, err := ExamplePolicy(); err != nil {
		t.Fatal(err)
	}
}
