package fakeapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// examplePolicy is examples/exoscale/iam-role-policy.json, embedded for
// --simulate (go:embed reaches no file outside the package); a test keeps the
// two equal byte for byte.
//
//go:embed iam-role-policy.json
var examplePolicy []byte

// ExamplePolicy is the deployment example's role policy, parsed: --simulate
// serves the demo under it.
func ExamplePolicy() (*fakecloud.Permissions, error) { return ParseRolePolicy(examplePolicy) }

// computeService is the IAM service of every operation the fake serves.
const computeService = "compute"

// rolePolicy is an Exoscale IAM role policy document.
type rolePolicy struct {
	DefaultServiceStrategy string                   `json:"default-service-strategy"`
	Services               map[string]servicePolicy `json:"services"`
}

type servicePolicy struct {
	Type  string       `json:"type"`
	Rules []policyRule `json:"rules"`
}

type policyRule struct {
	Expression string `json:"expression"`
	Action     string `json:"action"`
}

// ParseRolePolicy reads an Exoscale IAM role policy (the JSON of
// examples/exoscale/iam-role-policy.json) into the permissions the fake
// enforces (Options.Policy). It evaluates them as Exoscale does: a service the
// policy does not name gets default-service-strategy; a "rules" service takes
// the first rule whose expression matches, and refuses an operation no rule
// matches whatever the default. Of the rule language it supports only
// `operation in ['op', ...]` and refuses any other expression, so a policy the
// fake cannot evaluate fails at load instead of allowing too much or too little.
func ParseRolePolicy(data []byte) (*fakecloud.Permissions, error) {
	var p rolePolicy
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("exoscale role policy: %w", err)
	}
	def, err := allowOrDeny("default-service-strategy", p.DefaultServiceStrategy)
	if err != nil {
		return nil, err
	}
	var compute *fakecloud.Permissions
	for name, svc := range p.Services {
		perms, err := parseServicePolicy(name, svc)
		if err != nil {
			return nil, err
		}
		if name == computeService {
			compute = perms
		}
	}
	if compute == nil {
		return fakecloud.NewPermissions(def)
	}
	return compute, nil
}

func parseServicePolicy(name string, svc servicePolicy) (*fakecloud.Permissions, error) {
	field := "services." + name
	switch svc.Type {
	case "allow", "deny":
		if len(svc.Rules) > 0 {
			return nil, fmt.Errorf("exoscale role policy: %s: type %q takes no rules; use type \"rules\"", field, svc.Type)
		}
		return fakecloud.NewPermissions(svc.Type == "allow")
	case "rules":
	default:
		return nil, fmt.Errorf("exoscale role policy: %s.type %q: want allow, deny or rules", field, svc.Type)
	}
	rules := make([]fakecloud.PermissionRule, 0, len(svc.Rules))
	for i, r := range svc.Rules {
		where := fmt.Sprintf("%s.rules[%d]", field, i)
		allow, err := allowOrDeny(where+".action", r.Action)
		if err != nil {
			return nil, err
		}
		ops, err := operationList(r.Expression)
		if err != nil {
			return nil, fmt.Errorf("exoscale role policy: %s.expression: %w", where, err)
		}
		rules = append(rules, fakecloud.PermissionRule{Names: ops, Allow: allow})
	}
	// No matching rule refuses, whatever default-service-strategy says.
	return fakecloud.NewPermissions(false, rules...)
}

func allowOrDeny(field, v string) (bool, error) {
	switch v {
	case "allow":
		return true, nil
	case "deny":
		return false, nil
	}
	return false, fmt.Errorf("exoscale role policy: %s %q: want allow or deny", field, v)
}

// operationList reads `operation in ['a', 'b']`, the one expression shape
// the fake evaluates.
func operationList(expr string) ([]string, error) {
	m := regexp.MustCompile(`^\s*operation\s+in\s+\[(.*)\]\s*$`).FindStringSubmatch(expr)
	if m == nil {
		return nil, fmt.Errorf("%q: the fake evaluates only \"operation in ['op', ...]\"", expr)
	}
	var ops []string
	for _, item := range strings.Split(m[1], ",") {
		item = strings.TrimSpace(item)
		if len(item) < 3 || (item[0] != '\'' && item[0] != '"') || item[len(item)-1] != item[0] || strings.ContainsAny(item[1:len(item)-1], `'"`) {
			return nil, fmt.Errorf("%q: list item %q is not one quoted operation name", expr, item)
		}
		ops = append(ops, item[1:len(item)-1])
	}
	return ops, nil
}

// refused answers a request the policy does not allow as Exoscale does: 403
// with its {"message"} body. It reports whether it answered.
func (s *Server) refused(w http.ResponseWriter, r *http.Request) bool {
	op := exoapi.IAMOperation(exoapi.OperationName(r))
	if op == "" || s.opts.Policy.Allows(op) {
		return false
	}
	writeError(w, http.StatusForbidden, "", fmt.Sprintf("Forbidden: the API key's role does not allow operation %s", op))
	return true
}
