package fakeapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// examplePolicy is examples/volcengine/iam-policy.json, embedded for
// --simulate (go:embed reaches no file outside the package); a test keeps the
// two equal byte for byte.
//
//go:embed iam-policy.json
var examplePolicy []byte

// ExamplePolicy is the deployment example's IAM policy, parsed: --simulate
// serves the demo under it.
func ExamplePolicy() (*fakecloud.Permissions, error) { return ParsePolicy(examplePolicy) }

// policyDocument is a Volcengine IAM identity policy.
type policyDocument struct {
	Statement []policyStatement `json:"Statement"`
}

type policyStatement struct {
	Effect   string   `json:"Effect"`
	Action   []string `json:"Action"`
	Resource []string `json:"Resource"`
}

// ParsePolicy reads a Volcengine IAM policy (the JSON of
// examples/volcengine/iam-policy.json) into the permissions the fake enforces
// (Options.Policy): an action is allowed when an Allow statement names it and
// no Deny statement does, as Volcengine IAM evaluates. Of the policy language
// it supports exact "service:Action" names on Resource ["*"] and refuses
// wildcards, Condition, NotAction and narrower resources at load, so a policy
// the fake cannot evaluate fails instead of allowing too much or too little.
func ParsePolicy(data []byte) (*fakecloud.Permissions, error) {
	var doc policyDocument
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("volcengine policy: %w (the fake supports Statement entries of Effect, Action and Resource only)", err)
	}
	if len(doc.Statement) == 0 {
		return nil, fmt.Errorf("volcengine policy: Statement is empty")
	}
	var allow, deny []string
	for i, st := range doc.Statement {
		where := fmt.Sprintf("Statement[%d]", i)
		if !slices.Equal(st.Resource, []string{"*"}) {
			return nil, fmt.Errorf("volcengine policy: %s.Resource %q: the fake supports only [\"*\"]", where, st.Resource)
		}
		for _, a := range st.Action {
			service, action, ok := strings.Cut(a, ":")
			if !ok || service == "" || action == "" || strings.ContainsAny(a, "* ") {
				return nil, fmt.Errorf("volcengine policy: %s.Action %q: want one exact \"service:Action\" name, such as \"auto_scaling:DescribeScalingGroups\"", where, a)
			}
		}
		switch st.Effect {
		case "Allow":
			allow = append(allow, st.Action...)
		case "Deny":
			deny = append(deny, st.Action...)
		default:
			return nil, fmt.Errorf("volcengine policy: %s.Effect %q: want Allow or Deny", where, st.Effect)
		}
	}
	return fakecloud.NewPermissions(false,
		fakecloud.PermissionRule{Names: deny, Allow: false},
		fakecloud.PermissionRule{Names: allow, Allow: true})
}

// Permission returns the IAM action name of an API action the fake serves,
// "service:Action" (such as "auto_scaling:DescribeScalingGroups"), or "" for
// one it does not serve.
func Permission(action string) string {
	h, ok := handlers[action]
	if !ok {
		return ""
	}
	return h.name + ":" + action
}

// refusedLocked answers an action the policy does not allow as the gateway
// does: 403 AccessDenied in the error envelope.
func (s *Server) refusedLocked(action string) *apiError {
	perm := Permission(action)
	if s.opts.Policy.Allows(perm) {
		return nil
	}
	return errf(http.StatusForbidden, "AccessDenied", "the access key is not authorized to perform %s", perm)
}
