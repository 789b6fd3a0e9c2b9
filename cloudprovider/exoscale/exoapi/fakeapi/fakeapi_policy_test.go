package fakeapi

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// examplePolicyFile is the role policy the deployment example ships.
const examplePolicyFile = "../../../../examples/exoscale/iam-role-policy.json"

func TestRolePolicyRefusesWithExoscalesAnswer(t *testing.T) {
	t.Parallel()
	policy, err := ParseRolePolicy([]byte(`{"default-service-strategy":"allow","services":{"compute":{"type":"rules","rules":[
		{"expression":"operation in ['scale-instance-pool']","action":"deny"},
		{"expression":"operation in [\"list-instance-pools\", 'scale-instance-pool']","action":"allow"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, base, _, pool := newFake(t, Options{Policy: policy})
	if status, _ := do(t, base, "GET", "/instance-pool", ""); status != 200 {
		t.Fatalf("list-instance-pools: %d, want 200", status)
	}
	// The first matching rule denies; no rule matching refuses too, whatever
	// the default strategy.
	for _, req := range []struct{ method, path, body, op string }{
		{"PUT", "/instance-pool/" + pool + ":scale", `{"size":3}`, "scale-instance-pool"},
		{"GET", "/instance-pool/" + pool, "", "get-instance-pool"},
	} {
		status, body := do(t, base, req.method, req.path, req.body)
		if msg, _ := body["message"].(string); status != 403 || !strings.Contains(msg, req.op) {
			t.Fatalf("%s %s: %d %v, want 403 naming %s", req.method, req.path, status, body, req.op)
		}
	}
	if p, _ := s.Pool(pool); p.Size != 2 {
		t.Fatalf("a refused scale changed the pool: size %d", p.Size)
	}
}

func TestRolePolicyServiceStrategies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		allows bool
	}{
		{`{"default-service-strategy":"allow","services":{}}`, true},
		{`{"default-service-strategy":"deny","services":{"sos":{"type":"allow"}}}`, false},
		{`{"default-service-strategy":"deny","services":{"compute":{"type":"allow"}}}`, true},
		{`{"default-service-strategy":"allow","services":{"compute":{"type":"deny"}}}`, false},
		{`{"default-service-strategy":"allow","services":{"compute":{"type":"rules","rules":[]}}}`, false},
	} {
		p, err := ParseRolePolicy([]byte(tc.policy))
		if err != nil {
			t.Fatalf("%s: %v", tc.policy, err)
		}
		if got := p.Allows("get-operation"); got != tc.allows {
			t.Errorf("%s: allows get-operation = %v, want %v", tc.policy, got, tc.allows)
		}
	}
}

func TestRolePolicyRefusesWhatItCannotEvaluate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ policy, want string }{
		{`{"default-service-strategy":"maybe","services":{}}`, `default-service-strategy "maybe"`},
		{`{"default-service-strategy":"deny","services":{"compute":{"type":"some"}}}`, `services.compute.type "some"`},
		{`{"default-service-strategy":"deny","services":{"compute":{"type":"rules","rules":[{"expression":"resource.sks_nodepool.name in ['a']","action":"allow"}]}}}`,
			`services.compute.rules[0].expression: "resource.sks_nodepool.name in ['a']": the fake evaluates only`},
		{`{"default-service-strategy":"deny","services":{"compute":{"type":"rules","rules":[{"expression":"operation in ['a', b]","action":"allow"}]}}}`, `list item "b"`},
		{`{"default-service-strategy":"deny","services":{"compute":{"type":"rules","rules":[{"expression":"operation in ['a']","action":"permit"}]}}}`, `services.compute.rules[0].action "permit"`},
		{`{"default-service-strategy":"deny","services":{"compute":{"type":"allow","rules":[{"expression":"true","action":"allow"}]}}}`, `takes no rules`},
		{`{"default-service-strategy":"deny","servces":{}}`, `unknown field "servces"`},
	} {
		_, err := ParseRolePolicy([]byte(tc.policy))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.policy, err, tc.want)
		}
	}
}

func TestExampleRolePolicyLoads(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePolicyFile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseRolePolicy(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.AllowsOthers() || len(p.Granted()) == 0 {
		t.Fatalf("example policy: granted %q, others allowed %v", p.Granted(), p.AllowsOthers())
	}
	if !bytes.Equal(data, examplePolicy) {
		t.Fatalf("the policy embedded for --simulate differs from %s: copy it to iam-role-policy.json here", examplePolicyFile)
	}
	if _, err := ExamplePolicy(); err != nil {
		t.Fatal(err)
	}
}
