package apispec

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// miniDescription has one read and one change, enough to check the rules.
const miniDescription = `{
  "openapi": "3.0.0", "info": {"title": "mini", "version": "1"},
  "paths": {
    "/pool/{id}": {
      "get": {"operationId": "get-pool",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                       {"name": "verbose", "in": "query", "schema": {"type": "boolean"}}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/pool"}}}},
                      "404": {"description": "gone"}}},
      "patch": {"operationId": "resize-pool",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object",
          "required": ["size"], "properties": {"size": {"type": "integer", "minimum": 1}}}}}},
        "responses": {"202": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/pool"}}}}}}
    }
  },
  "components": {"schemas": {"pool": {"type": "object", "properties": {
    "id": {"type": "string"}, "size": {"type": "integer"},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}
}`

func load(t *testing.T, opts Options) *Spec {
	t.Helper()
	opts.BasePath = "/v1"
	s, err := LoadOpenAPI("mini", []byte(miniDescription), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func exchange(method, target, body string, status int, answer string) fakecloud.Exchange {
	u, _ := url.Parse(target)
	h := http.Header{}
	if body != "" {
		h.Set("Content-Type", "application/json")
	}
	return fakecloud.Exchange{
		Method: method, URL: u, Header: h, Body: []byte(body), Status: status,
		AnswerHeader: http.Header{"Content-Type": {"application/json"}}, Answer: []byte(answer),
	}
}

func TestCheckRefusesWhatTheDescriptionDoesNotDeclare(t *testing.T) {
	t.Parallel()
	s := load(t, Options{Errors: ErrorBody{Schema: `{"type": "object", "properties": {"error": {"type": "string"}}}`, Source: "test"}})
	tests := []struct {
		name              string
		x                 fakecloud.Exchange
		wantReq, wantAns  string
		wantOp, wantField string
	}{
		{name: "conforming read", x: exchange("GET", "/v1/pool/p1?verbose=true", "", 200, `{"id":"p1","size":2,"labels":{"a":"b"}}`),
			wantOp: "get-pool", wantField: "labels.*"},
		{name: "undeclared answer field", x: exchange("GET", "/v1/pool/p1", "", 200, `{"id":"p1","zone":"z"}`), wantAns: `"zone" is unsupported`},
		{name: "wrong answer type", x: exchange("GET", "/v1/pool/p1", "", 200, `{"id":"p1","size":"2"}`), wantAns: "must be an integer"},
		{name: "undeclared query parameter", x: exchange("GET", "/v1/pool/p1?page=2", "", 200, `{}`), wantReq: `query parameter "page" is not declared`},
		{name: "wrong path", x: exchange("GET", "/v1/pools/p1", "", 200, `{}`), wantReq: "no such path"},
		{name: "wrong method", x: exchange("DELETE", "/v1/pool/p1", "", 204, ``), wantReq: "not the method"},
		{name: "outside the base path", x: exchange("GET", "/v2/pool/p1", "", 200, `{}`), wantReq: "not under /v1"},
		{name: "undeclared body field", x: exchange("PATCH", "/v1/pool/p1", `{"size":2,"label":"x"}`, 202, `{"id":"p1"}`), wantReq: `"label" is unsupported`},
		{name: "body below the minimum", x: exchange("PATCH", "/v1/pool/p1", `{"size":0}`, 202, `{"id":"p1"}`), wantReq: "at least 1"},
		{name: "missing required field", x: exchange("PATCH", "/v1/pool/p1", `{}`, 202, `{"id":"p1"}`), wantReq: `"size"`},
		{name: "undeclared success status", x: exchange("PATCH", "/v1/pool/p1", `{"size":2}`, 200, `{"id":"p1"}`), wantAns: "200"},
		{name: "error answer in the known shape", x: exchange("GET", "/v1/pool/p1", "", 404, `{"error":"gone"}`), wantOp: "get-pool"},
		{name: "error answer in another shape", x: exchange("GET", "/v1/pool/p1", "", 404, `{"message":"gone"}`), wantAns: `"message" is unsupported`},
		{name: "undeclared error status", x: exchange("GET", "/v1/pool/p1", "", 503, `{"err":"x"}`), wantAns: `"err" is unsupported`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := s.Check(tc.x)
			matches := func(errs []error, want string) bool {
				if want == "" {
					return len(errs) == 0
				}
				for _, err := range errs {
					if strings.Contains(err.Error(), want) {
						return true
					}
				}
				return false
			}
			if !matches(res.Request, tc.wantReq) {
				t.Errorf("request errors %v, want %q", res.Request, tc.wantReq)
			}
			if !matches(res.Answer, tc.wantAns) {
				t.Errorf("answer errors %v, want %q", res.Answer, tc.wantAns)
			}
			if tc.wantOp != "" && res.Operation != tc.wantOp {
				t.Errorf("operation %q, want %q", res.Operation, tc.wantOp)
			}
			if tc.wantField != "" && !strings.Contains(strings.Join(res.Fields, " "), tc.wantField) {
				t.Errorf("fields %v, want %s", res.Fields, tc.wantField)
			}
		})
	}
}

func TestAllowancesAllowOnlyWhatTheyName(t *testing.T) {
	t.Parallel()
	s := load(t, Options{
		Allowances: []Allowance{
			{Operation: "get-pool", Status: "200", Path: []string{"zone"}, Schema: `{"type": "string"}`, Source: "test"},
			{Operation: "get-pool", Query: "page", Schema: `{"type": "integer"}`, Source: "test"},
			{Operation: "resize-pool", Path: []string{"size"}, Replace: true, Schema: `{"type": "integer", "minimum": 0}`, Source: "test"},
		},
		Operations: []NewOperation{{ID: "list-nodes", Method: "GET", Path: "/pool/{id}/nodes", Response: `{"type": "object", "properties": {"nodes": {"type": "array", "items": {"type": "string"}}}}`, Source: "test"}},
	})
	for _, x := range []fakecloud.Exchange{
		exchange("GET", "/v1/pool/p1?page=2", "", 200, `{"id":"p1","zone":"z"}`),
		exchange("PATCH", "/v1/pool/p1", `{"size":0}`, 202, `{"id":"p1","zone":"z"}`),
		exchange("GET", "/v1/pool/p1/nodes", "", 200, `{"nodes":["n1"]}`),
	} {
		if res := s.Check(x); len(res.Request)+len(res.Answer) > 0 {
			t.Errorf("%s %s: %v %v", x.Method, x.URL, res.Request, res.Answer)
		}
	}
	for _, x := range []fakecloud.Exchange{
		exchange("GET", "/v1/pool/p1", "", 200, `{"id":"p1","zone":1}`),
		exchange("GET", "/v1/pool/p1", "", 200, `{"id":"p1","region":"r"}`),
		exchange("GET", "/v1/pool/p1/nodes", "", 200, `{"nodes":["n1"],"meta":{}}`),
		exchange("GET", "/v1/pool/p1/nodes?page=1", "", 200, `{"nodes":[]}`),
	} {
		if res := s.Check(x); len(res.Request)+len(res.Answer) == 0 {
			t.Errorf("%s %s %s passed, want an error", x.Method, x.URL, x.Answer)
		}
	}
}

func TestAnAllowanceTheDescriptionNoLongerNeedsFails(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]Options{
		"property declared":   {Allowances: []Allowance{{Operation: "get-pool", Status: "200", Path: []string{"size"}, Schema: `{}`, Source: "test"}}},
		"query declared":      {Allowances: []Allowance{{Operation: "get-pool", Query: "verbose", Schema: `{}`, Source: "test"}}},
		"replace missing":     {Allowances: []Allowance{{Operation: "get-pool", Status: "200", Path: []string{"zone"}, Replace: true, Schema: `{}`, Source: "test"}}},
		"operation declared":  {Operations: []NewOperation{{ID: "x", Method: "GET", Path: "/pool/{id}", Response: `{}`, Source: "test"}}},
		"no source":           {Allowances: []Allowance{{Operation: "get-pool", Status: "200", Path: []string{"zone"}, Schema: `{}`}}},
		"no such operation":   {Allowances: []Allowance{{Operation: "nope", Status: "200", Path: []string{"zone"}, Schema: `{}`, Source: "test"}}},
		"no such place":       {Allowances: []Allowance{{Operation: "get-pool", Status: "200", Path: []string{"nodes", "[]", "ip"}, Schema: `{}`, Source: "test"}}},
		"no body for status":  {Allowances: []Allowance{{Operation: "get-pool", Status: "404", Path: []string{"zone"}, Schema: `{}`, Source: "test"}}},
		"both path and query": {Allowances: []Allowance{{Operation: "get-pool", Query: "q", Path: []string{"zone"}, Schema: `{}`, Source: "test"}}},
	} {
		if _, err := LoadOpenAPI("mini", []byte(miniDescription), opts); err == nil {
			t.Errorf("%s: loaded, want an error", name)
		}
	}
}

func TestTheCloudsDescriptionsLoad(t *testing.T) {
	t.Parallel()
	if _, err := Exoscale(); err != nil {
		t.Error(err)
	}
	if _, err := Vultr(); err != nil {
		t.Error(err)
	}
	if _, err := Volcengine(); err != nil {
		t.Error(err)
	}
}

func TestVolcengineMetadataCheck(t *testing.T) {
	t.Parallel()
	m, err := Volcengine()
	if err != nil {
		t.Fatal(err)
	}
	ok := `{"ResponseMetadata":{"RequestId":"r","Action":"DescribeScalingInstances","Version":"2020-01-01","Service":"auto_scaling","Region":"cn-beijing"},
		"Result":{"ScalingInstances":[{"InstanceId":"i-1","Status":"InService"}],"PageNumber":1,"PageSize":50,"TotalCount":1}}`
	refused := `{"ResponseMetadata":{"RequestId":"r","Error":{"Code":"InvalidParameter","Message":"bad"}}}`
	base := "/?Action=DescribeScalingInstances&Version=2020-01-01&ScalingGroupId=scg-1"
	tests := []struct {
		name             string
		x                fakecloud.Exchange
		wantReq, wantAns string
	}{
		{name: "conforming", x: exchange("GET", base+"&InstanceIds.1=i-1&InstanceIds.2=i-2&PageNumber=1", "", 200, ok)},
		{name: "error envelope", x: exchange("GET", base, "", 400, refused)},
		{name: "undeclared parameter", x: exchange("GET", base+"&ScalingGroupName=x", "", 200, ok), wantReq: "ScalingGroupName"},
		{name: "unindexed list parameter", x: exchange("GET", base+"&InstanceIds=i-1", "", 200, ok), wantReq: "InstanceIds"},
		{name: "wrong version", x: exchange("GET", "/?Action=DescribeScalingInstances&Version=2020-04-01", "", 200, ok), wantReq: "not version"},
		{name: "unknown action", x: exchange("GET", "/?Action=ScaleOut&Version=2020-01-01", "", 200, ok), wantReq: "none of the services"},
		{name: "wrong path", x: exchange("GET", "/api"+base, "", 200, ok), wantReq: "path /api"},
		{name: "undeclared answer field", x: exchange("GET", base, "", 200, strings.Replace(ok, `"Status":"InService"`, `"Status":"InService","Zone":"a"`, 1)), wantAns: "ScalingInstances[].Zone"},
		{name: "structure as a string", x: exchange("GET", base, "", 200, strings.Replace(ok, `[{"InstanceId":"i-1","Status":"InService"}]`, `"i-1"`, 1)), wantAns: "is a structure"},
		{name: "basic field as an object", x: exchange("GET", base, "", 200, strings.Replace(ok, `"Status":"InService"`, `"Status":{"Code":"InService"}`, 1)), wantAns: "basic field"},
		{name: "envelope field", x: exchange("GET", base, "", 200, strings.Replace(ok, `"Region":"cn-beijing"`, `"Region":"cn-beijing","Trace":"t"`, 1)), wantAns: "ResponseMetadata.Trace"},
		{name: "error without error envelope", x: exchange("GET", base, "", 500, ok), wantAns: "without ResponseMetadata.Error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := m.Check(tc.x)
			has := func(errs []error, want string) bool {
				if want == "" {
					return len(errs) == 0
				}
				return strings.Contains(strings.Join(func() []string {
					out := make([]string, len(errs))
					for i, e := range errs {
						out[i] = e.Error()
					}
					return out
				}(), "\n"), want)
			}
			if !has(res.Request, tc.wantReq) || !has(res.Answer, tc.wantAns) {
				t.Errorf("request %v (want %q), answer %v (want %q)", res.Request, tc.wantReq, res.Answer, tc.wantAns)
			}
		})
	}
}

func TestParamNameAndJSONFields(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"InstanceIds.3": "InstanceIds.N", "TagFilters.1.Values.12": "TagFilters.N.Values.N", "PageSize": "PageSize", "Eip.Bandwidth": "Eip.Bandwidth",
	} {
		if got := ParamName(in); got != want {
			t.Errorf("ParamName(%s) = %s, want %s", in, got, want)
		}
	}
	type node struct {
		ID string `json:"id"`
	}
	type pool struct {
		Labels map[string]string `json:"labels,omitempty"`
		Nodes  []node            `json:"nodes"`
		Skip   int               `json:"-"`
	}
	got := strings.Join(JSONFields("pool", pool{}), " ")
	if want := "pool.labels pool.labels.* pool.nodes pool.nodes[].id"; got != want {
		t.Errorf("JSONFields = %s, want %s", got, want)
	}
}

// TestSelectedFieldsAreByType type-checks this package: it selects
// openapi3.Schema's Properties, and the Items of no type of its own.
func TestSelectedFieldsAreByType(t *testing.T) {
	t.Parallel()
	sel, err := SelectedFields(".")
	if err != nil {
		t.Fatal(err)
	}
	schema := sel["github.com/getkin/kin-openapi/openapi3.Schema"]
	if !schema["Properties"] || !schema["Items"] || schema["Discriminator"] {
		t.Errorf("openapi3.Schema selections %v, want Properties and Items, not Discriminator", schema)
	}
	if got := sel["github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud.Exchange"]; !got["Answer"] || !got["Status"] {
		t.Errorf("fakecloud.Exchange selections %v, want Answer and Status", got)
	}
}
