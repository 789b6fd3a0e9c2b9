package apispec

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// Metadata is Volcengine's SDK metadata of the services the provider calls:
// per action, the request parameter names and the response field tree. It
// has no types, methods or required flags, so the check is by name and by
// shape (a structure is an object or a list of objects, a basic field is
// not an object).
type Metadata struct {
	// actions maps an action name to the services declaring it.
	actions map[string][]*volcAction
	// envelope, meta and errorFields are the gateway's envelope, which the
	// metadata leaves out: every answer is {"ResponseMetadata": {...},
	// "Result": {...}}, an error a ResponseMetadata.Error instead of the
	// Result (volcengine-go-sdk v1.1.35 volcengine/response:
	// ResponseMetadata, Error; its HTTPCode is the SDK's own, never sent).
	envelope, meta, errorFields []string
	// gatewayParams are the query parameters of every action.
	gatewayParams []string
}

type volcAction struct {
	service, version string
	params           map[string]bool
	response         *volcTree
}

// volcTree is one level of a response: its basic fields and structures.
type volcTree struct {
	Basic     []string             `json:"Basic"`
	Structure map[string]*volcTree `json:"Structure"`
}

// Volcengine loads the Auto Scaling, ECS and VPC metadata.
func Volcengine() (*Metadata, error) {
	m := &Metadata{
		actions:       map[string][]*volcAction{},
		envelope:      []string{"ResponseMetadata", "Result"},
		meta:          []string{"RequestId", "Action", "Version", "Service", "Region", "Error"},
		errorFields:   []string{"CodeN", "Code", "Message"},
		gatewayParams: []string{"Action", "Version"},
	}
	for _, svc := range []struct{ service, version, file string }{
		{"auto_scaling", "2020-01-01", "testdata/volcengine-auto_scaling-2020-01-01-metadata.json"},
		{"ecs", "2020-04-01", "testdata/volcengine-ecs-2020-04-01-metadata.json"},
		{"vpc", "2020-04-01", "testdata/volcengine-vpc-2020-04-01-metadata.json"},
	} {
		data, err := descriptions.ReadFile(svc.file)
		if err != nil {
			return nil, err
		}
		var raw map[string]struct {
			Request struct {
				Basic []string `json:"Basic"`
			} `json:"Request"`
			Response *volcTree `json:"Response"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("%s: %w", svc.file, err)
		}
		for name, a := range raw {
			act := &volcAction{service: svc.service, version: svc.version, params: map[string]bool{}, response: a.Response}
			for _, p := range a.Request.Basic {
				act.params[p] = true
			}
			if act.response == nil {
				act.response = &volcTree{}
			}
			m.actions[name] = append(m.actions[name], act)
		}
	}
	return m, nil
}

// indexed matches the 1-based index of a list parameter ("InstanceIds.3").
var indexed = regexp.MustCompile(`\.[1-9][0-9]*(\.|$)`)

// ParamName is the metadata's name of a query parameter: list indexes
// become N ("TagFilters.1.Values.2" is "TagFilters.N.Values.N").
func ParamName(name string) string {
	for {
		next := indexed.ReplaceAllString(name, ".N$1")
		if next == name {
			return name
		}
		name = next
	}
}

// action finds the metadata of a request's action and version.
func (m *Metadata) action(name, version string) (*volcAction, error) {
	cands := m.actions[name]
	if len(cands) == 0 {
		return nil, fmt.Errorf("action %q is in none of the services' metadata", name)
	}
	for _, a := range cands {
		if a.version == version {
			return a, nil
		}
	}
	return nil, fmt.Errorf("action %s is in %s %s, not version %q", name, cands[0].service, cands[0].version, version)
}

// Check validates one exchange with Volcengine's gateway.
func (m *Metadata) Check(x fakecloud.Exchange) Result {
	q := x.URL.Query()
	name, version := q.Get("Action"), q.Get("Version")
	res := Result{Operation: name, Template: x.Method + " /?Action=" + name}
	refuse := func(err error) { res.Request = append(res.Request, fmt.Errorf("%s: %w", name, err)) }
	fail := func(err error) { res.Answer = append(res.Answer, fmt.Errorf("%s: answer %d: %w", name, x.Status, err)) }
	if x.URL.Path != "/" {
		refuse(fmt.Errorf("path %s: the gateway serves every action at /", x.URL.Path))
	}
	if x.Method != http.MethodGet && x.Method != http.MethodPost {
		refuse(fmt.Errorf("method %s: actions are sent as GET (or a form POST)", x.Method))
	}
	act, err := m.action(name, version)
	if err != nil {
		refuse(err)
		res.Operation = ""
	} else {
		for p, vals := range q {
			if slices.Contains(m.gatewayParams, p) {
				continue
			}
			if !act.params[ParamName(p)] {
				refuse(fmt.Errorf("request parameter %q (%s) is not one %s declares", p, ParamName(p), name))
			}
			if len(vals) != 1 {
				refuse(fmt.Errorf("request parameter %q is sent %d times", p, len(vals)))
			}
		}
	}

	var body map[string]any
	if err := json.Unmarshal(x.Answer, &body); err != nil {
		fail(fmt.Errorf("not a JSON object: %w", err))
		return res
	}
	for _, k := range sortedKeys(body) {
		if !slices.Contains(m.envelope, k) {
			fail(fmt.Errorf("field %q is not part of the gateway's envelope", k))
		}
	}
	meta, ok := body["ResponseMetadata"].(map[string]any)
	if !ok {
		fail(fmt.Errorf("no ResponseMetadata object"))
		return res
	}
	for _, k := range sortedKeys(meta) {
		if !slices.Contains(m.meta, k) {
			fail(fmt.Errorf("ResponseMetadata.%s is not a field the gateway sends", k))
		}
	}
	if e, isErr := meta["Error"]; isErr {
		em, ok := e.(map[string]any)
		if !ok {
			fail(fmt.Errorf("ResponseMetadata.Error is not an object"))
		}
		for _, k := range sortedKeys(em) {
			if !slices.Contains(m.errorFields, k) {
				fail(fmt.Errorf("ResponseMetadata.Error.%s is not a field the gateway sends", k))
			}
		}
		if _, has := body["Result"]; has {
			fail(fmt.Errorf("an error answer carries a Result"))
		}
		return res
	}
	if x.Status < 200 || x.Status >= 300 {
		fail(fmt.Errorf("a non-2xx answer without ResponseMetadata.Error"))
	}
	result, has := body["Result"]
	if !has {
		fail(fmt.Errorf("a success without Result"))
		return res
	}
	if act == nil {
		return res
	}
	fields, errs := walkVolc("", result, act.response)
	for _, err := range errs {
		fail(err)
	}
	res.Fields = fields
	return res
}

// walkVolc checks v against the response tree t and lists its fields as
// dotted paths ("ScalingGroups[].Tags[].Key").
func walkVolc(prefix string, v any, t *volcTree) ([]string, []error) {
	var fields []string
	var errs []error
	obj, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("%s is %T, want an object", orRoot(prefix), v)}
	}
	for _, k := range sortedKeys(obj) {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		val := obj[k]
		switch {
		case slices.Contains(t.Basic, k):
			fields = append(fields, p)
			if isObject(val) {
				errs = append(errs, fmt.Errorf("%s is a basic field, the answer has an object", p))
			}
			if list, ok := val.([]any); ok && slices.ContainsFunc(list, isObject) {
				errs = append(errs, fmt.Errorf("%s is a basic field, the answer has a list of objects", p))
			}
		case t.Structure[k] != nil:
			fields = append(fields, p)
			sub := t.Structure[k]
			switch c := val.(type) {
			case []any:
				for _, item := range c {
					f, e := walkVolc(p+"[]", item, sub)
					fields, errs = append(fields, f...), append(errs, e...)
				}
			case map[string]any, nil:
				f, e := walkVolc(p, c, sub)
				fields, errs = append(fields, f...), append(errs, e...)
			default:
				errs = append(errs, fmt.Errorf("%s is a structure, the answer has %T", p, val))
			}
		default:
			errs = append(errs, fmt.Errorf("%s is not a field of the action's response", p))
		}
	}
	sort.Strings(fields)
	return slices.Compact(fields), errs
}

// ResponseHasField reports whether an action's response tree has the
// dotted field path (list items marked "[]" or not).
func (m *Metadata) ResponseHasField(action, field string) error {
	cands := m.actions[action]
	if len(cands) == 0 {
		return fmt.Errorf("no action %s", action)
	}
	t := cands[0].response
	parts := strings.Split(strings.ReplaceAll(field, "[]", ""), ".")
	for i, part := range parts {
		if i == len(parts)-1 && slices.Contains(t.Basic, part) {
			return nil
		}
		next := t.Structure[part]
		if next == nil {
			return fmt.Errorf("%s's response has no field %s", action, field)
		}
		t = next
	}
	return nil
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

func orRoot(p string) string {
	if p == "" {
		return "Result"
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
