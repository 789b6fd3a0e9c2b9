package apispec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// Allowance is one known difference between a cloud's description and the
// API the cloud serves: the description lacks a property that the live API
// accepts or sends (and our client or fake therefore does too). Applying it
// adds the property to the schema, so only that property is let through.
type Allowance struct {
	// Operation is the operationId whose body schema gains the property.
	Operation string
	// Status is the response status whose body gains it; "" means the
	// request body.
	Status string
	// Path is the property's place in the body: the names of the objects
	// leading to it, "[]" for an array's items, then its own name.
	Path []string
	// Query, instead of Path, names a query parameter the operation
	// gains.
	Query string
	// Schema is the property's (or query parameter's) JSON schema.
	Schema string
	// SameAs, instead of Schema, takes the schema of another property of
	// the same body, named like Path.
	SameAs []string
	// Component, instead of Schema, takes a schema the description names
	// in its components.
	Component string
	// Replace says the description declares the property with a narrower
	// schema than the live API has; the allowance's Schema replaces it.
	Replace bool
	// Source says where the live API's behaviour is documented.
	Source string
}

// NewOperation is an operation the live API serves and the description
// lacks: a read answered 200 with Response.
type NewOperation struct {
	ID     string
	Method string
	// Path is the path template, with {name} for each path parameter.
	Path string
	// Query are its query parameters, each with its JSON schema.
	Query map[string]string
	// Response is the 200 answer's JSON schema, closed like the others.
	Response string
	Source   string
}

// ErrorBody is the error answer a cloud sends for a status its description
// does not list for an operation (descriptions often list only successes).
type ErrorBody struct {
	// Schema is the body's JSON schema, closed like the description's.
	Schema string
	// Source says where the error shape is documented.
	Source string
}

// Options say how a description is read.
type Options struct {
	// BasePath is the path prefix the description's servers carry and its
	// paths do not ("/v2").
	BasePath string
	// Allowances are the known differences, each with its source.
	Allowances []Allowance
	// Operations are the operations the description lacks.
	Operations []NewOperation
	// Errors is the shape of error answers the description leaves out.
	Errors ErrorBody
}

// Spec is a loaded OpenAPI description with closed schemas: a property,
// query or path parameter it does not declare is an error.
type Spec struct {
	name   string
	doc    *openapi3.T
	opts   Options
	routes []route
	errors *openapi3.Schema
}

type route struct {
	method   string
	template string
	re       *regexp.Regexp
	params   []string
	literal  int
	item     *openapi3.PathItem
	op       *openapi3.Operation
}

// LoadOpenAPI reads an OpenAPI 3.0 description (JSON or YAML), closes its
// object schemas and applies the allowances; an allowance whose property the
// description already has is an error, so one that is no longer needed
// cannot stay.
func LoadOpenAPI(name string, data []byte, opts Options) (*Spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("%s: load the description: %w", name, err)
	}
	// Formats are checked per document, never through the library's globals.
	doc.SetStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC4122))
	s := &Spec{name: name, doc: doc, opts: opts}
	for _, o := range opts.Operations {
		if err := s.addOperation(o); err != nil {
			return nil, err
		}
	}
	for _, a := range opts.Allowances {
		if err := s.allow(a); err != nil {
			return nil, err
		}
	}
	closeSchemas(doc)
	if opts.Errors.Schema != "" {
		var es openapi3.Schema
		if err := json.Unmarshal([]byte(opts.Errors.Schema), &es); err != nil {
			return nil, fmt.Errorf("%s: error body schema: %w", name, err)
		}
		closeSchema(&es, map[*openapi3.Schema]bool{}, nil)
		s.errors = &es
	}
	for template, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			r, err := compileRoute(method, template, item, op)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			s.routes = append(s.routes, r)
		}
	}
	// The most literal template wins: /quota/instance before /quota/{entity}.
	sort.SliceStable(s.routes, func(i, j int) bool { return s.routes[i].literal > s.routes[j].literal })
	return s, nil
}

var paramPattern = regexp.MustCompile(`\{([^}]+)\}`)

func compileRoute(method, template string, item *openapi3.PathItem, op *openapi3.Operation) (route, error) {
	r := route{method: method, template: template, item: item, op: op}
	var b strings.Builder
	b.WriteString("^")
	rest := template
	for {
		loc := paramPattern.FindStringSubmatchIndex(rest)
		if loc == nil {
			b.WriteString(regexp.QuoteMeta(rest))
			r.literal += len(rest)
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:loc[0]]))
		r.literal += loc[0]
		b.WriteString(`([^/:]+)`)
		r.params = append(r.params, rest[loc[2]:loc[3]])
		rest = rest[loc[1]:]
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return r, fmt.Errorf("path %s: %w", template, err)
	}
	r.re = re
	return r, nil
}

// addOperation adds an operation the description lacks.
func (s *Spec) addOperation(o NewOperation) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: operation %s %s: %s", s.name, o.Method, o.Path, fmt.Sprintf(format, args...))
	}
	if o.Source == "" || o.ID == "" {
		return fail("needs an id and its source")
	}
	item := s.doc.Paths.Value(o.Path)
	if item == nil {
		item = &openapi3.PathItem{}
		s.doc.Paths.Set(o.Path, item)
	}
	if item.GetOperation(o.Method) != nil {
		return fail("the description now declares it: drop the allowance")
	}
	var resp openapi3.Schema
	if err := json.Unmarshal([]byte(o.Response), &resp); err != nil {
		return fail("response schema: %v", err)
	}
	op := openapi3.NewOperation()
	op.OperationID = o.ID
	for _, m := range paramPattern.FindAllStringSubmatch(o.Path, -1) {
		op.AddParameter(openapi3.NewPathParameter(m[1]).WithSchema(openapi3.NewStringSchema()))
	}
	for name, schema := range o.Query {
		var qs openapi3.Schema
		if err := json.Unmarshal([]byte(schema), &qs); err != nil {
			return fail("query %s: %v", name, err)
		}
		op.AddParameter(openapi3.NewQueryParameter(name).WithSchema(&qs))
	}
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(200, &openapi3.ResponseRef{
		Value: openapi3.NewResponse().WithDescription(o.Source).WithJSONSchema(&resp),
	}))
	item.SetOperation(o.Method, op)
	return nil
}

// allow adds one allowance's property to the description.
func (s *Spec) allow(a Allowance) error {
	where := "request body"
	if a.Status != "" {
		where = "response " + a.Status
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: allowance for %s %s %s: %s", s.name, a.Operation, where, strings.Join(a.Path, "."), fmt.Sprintf(format, args...))
	}
	if a.Source == "" || (len(a.Path) == 0) == (a.Query == "") {
		return fail("every allowance needs its source and either a path or a query parameter")
	}
	op := s.operation(a.Operation)
	if op == nil {
		return fail("the description has no such operation")
	}
	if a.Query != "" {
		if op.Parameters.GetByInAndName(openapi3.ParameterInQuery, a.Query) != nil {
			return fail("the description now declares query parameter %s: drop the allowance", a.Query)
		}
		var ps openapi3.Schema
		if err := json.Unmarshal([]byte(a.Schema), &ps); err != nil {
			return fail("schema: %v", err)
		}
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: &openapi3.Parameter{
			Name: a.Query, In: openapi3.ParameterInQuery, Schema: openapi3.NewSchemaRef("", &ps),
		}})
		return nil
	}
	var body *openapi3.SchemaRef
	if a.Status == "" {
		if op.RequestBody != nil && op.RequestBody.Value != nil {
			if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil {
				body = mt.Schema
			}
		}
	} else if resp := op.Responses.Value(a.Status); resp != nil && resp.Value != nil {
		if mt := resp.Value.Content.Get("application/json"); mt != nil {
			body = mt.Schema
		}
	}
	if body == nil || body.Value == nil {
		return fail("the description has no JSON body there")
	}
	walk := func(path []string) (*openapi3.Schema, error) {
		cur := body.Value
		for _, step := range path {
			var next *openapi3.SchemaRef
			if step == "[]" {
				next = cur.Items
			} else {
				next = cur.Properties[step]
			}
			if next == nil || next.Value == nil {
				return nil, fail("the description has no %q on the way", step)
			}
			cur = next.Value
		}
		return cur, nil
	}
	cur, err := walk(a.Path[:len(a.Path)-1])
	if err != nil {
		return err
	}
	name := a.Path[len(a.Path)-1]
	if _, ok := cur.Properties[name]; ok != a.Replace {
		if a.Replace {
			return fail("the description no longer declares it")
		}
		return fail("the description now declares it: drop the allowance")
	}
	if cur.Properties == nil {
		cur.Properties = openapi3.Schemas{}
	}
	if a.Component != "" {
		c := s.doc.Components.Schemas[a.Component]
		if c == nil || c.Value == nil {
			return fail("the description has no component %s", a.Component)
		}
		cur.Properties[name] = c
		return nil
	}
	if len(a.SameAs) > 0 {
		same, err := walk(a.SameAs)
		if err != nil {
			return err
		}
		cur.Properties[name] = openapi3.NewSchemaRef("", same)
		return nil
	}
	var ps openapi3.Schema
	if err := json.Unmarshal([]byte(a.Schema), &ps); err != nil {
		return fail("schema: %v", err)
	}
	cur.Properties[name] = openapi3.NewSchemaRef("", &ps)
	return nil
}

func (s *Spec) operation(id string) *openapi3.Operation {
	for _, item := range s.doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID == id {
				return op
			}
		}
	}
	return nil
}

// closeSchemas makes every object schema with declared properties refuse
// others, unless it says what else it takes. Members of an allOf stay open:
// each would refuse the others' properties.
func closeSchemas(doc *openapi3.T) {
	inAllOf := map[*openapi3.Schema]bool{}
	seen := map[*openapi3.Schema]bool{}
	var mark func(*openapi3.SchemaRef)
	mark = func(r *openapi3.SchemaRef) {
		if r == nil || r.Value == nil || seen[r.Value] {
			return
		}
		seen[r.Value] = true
		v := r.Value
		for _, m := range v.AllOf {
			if m.Value != nil {
				inAllOf[m.Value] = true
			}
		}
		walkChildren(v, mark)
	}
	forEachSchema(doc, mark)
	closed := map[*openapi3.Schema]bool{}
	forEachSchema(doc, func(r *openapi3.SchemaRef) {
		if r != nil && r.Value != nil {
			closeSchema(r.Value, closed, inAllOf)
		}
	})
}

func closeSchema(v *openapi3.Schema, done, open map[*openapi3.Schema]bool) {
	if done[v] {
		return
	}
	done[v] = true
	if len(v.Properties) > 0 && v.AdditionalProperties.Has == nil && v.AdditionalProperties.Schema == nil && !open[v] {
		no := false
		v.AdditionalProperties.Has = &no
	}
	walkChildren(v, func(r *openapi3.SchemaRef) {
		if r != nil && r.Value != nil {
			closeSchema(r.Value, done, open)
		}
	})
}

func walkChildren(v *openapi3.Schema, fn func(*openapi3.SchemaRef)) {
	for _, p := range v.Properties {
		fn(p)
	}
	fn(v.Items)
	fn(v.AdditionalProperties.Schema)
	fn(v.Not)
	for _, list := range []openapi3.SchemaRefs{v.AllOf, v.OneOf, v.AnyOf} {
		for _, m := range list {
			fn(m)
		}
	}
}

func forEachSchema(doc *openapi3.T, fn func(*openapi3.SchemaRef)) {
	if doc.Components != nil {
		for _, sr := range doc.Components.Schemas {
			fn(sr)
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					fn(mt.Schema)
				}
			}
			for _, resp := range op.Responses.Map() {
				if resp.Value == nil {
					continue
				}
				for _, mt := range resp.Value.Content {
					fn(mt.Schema)
				}
			}
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value != nil {
					fn(p.Value.Schema)
				}
			}
		}
	}
}

// Match finds the described operation of a request: its operationId, path
// template and path parameters.
func (s *Spec) match(method, path string) (*route, map[string]string, error) {
	p, ok := strings.CutPrefix(path, s.opts.BasePath)
	if !ok {
		return nil, nil, fmt.Errorf("path %s is not under %s", path, s.opts.BasePath)
	}
	methodSeen := false
	for i := range s.routes {
		r := &s.routes[i]
		m := r.re.FindStringSubmatch(p)
		if m == nil {
			continue
		}
		if r.method != method {
			methodSeen = true
			continue
		}
		params := map[string]string{}
		for j, name := range r.params {
			params[name] = m[j+1]
		}
		return r, params, nil
	}
	if methodSeen {
		return nil, nil, fmt.Errorf("%s %s: the description has the path but not the method", method, path)
	}
	return nil, nil, fmt.Errorf("%s %s: the description has no such path", method, path)
}

// Result is what checking one exchange found.
type Result struct {
	// Operation is the operationId matched, "" when none was.
	Operation string
	// Template is the matched path template.
	Template string
	// Request are the request's differences from the description: the
	// description refuses the request.
	Request []error
	// Answer are the answer's differences.
	Answer []error
	// Fields are the fields of a 2xx answer, as dotted paths ("a.b",
	// "list[].c", "labels.*" for a map's keys).
	Fields []string
}

// Check validates one exchange: the request against the operation's
// parameters and request body, the answer against the response declared
// for its status (or the error body for an undeclared error status).
func (s *Spec) Check(x fakecloud.Exchange) Result {
	r, params, err := s.match(x.Method, x.URL.Path)
	if err != nil {
		return Result{Request: []error{err}}
	}
	res := Result{Operation: r.op.OperationID, Template: r.method + " " + r.template}
	fail := func(err error) {
		res.Answer = append(res.Answer, fmt.Errorf("%s (%s): %w", res.Template, r.op.OperationID, err))
	}
	refuse := func(err error) {
		res.Request = append(res.Request, fmt.Errorf("%s (%s): %w", res.Template, r.op.OperationID, err))
	}

	declared := map[string]bool{}
	for _, p := range append(slices.Clone(r.item.Parameters), r.op.Parameters...) {
		if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
			declared[p.Value.Name] = true
		}
	}
	for name := range x.URL.Query() {
		if !declared[name] {
			refuse(fmt.Errorf("query parameter %q is not declared", name))
		}
	}

	req, _ := http.NewRequest(x.Method, x.URL.String(), bytes.NewReader(x.Body))
	req.Header = x.Header.Clone()
	if len(x.Body) == 0 {
		req.Body = http.NoBody
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params,
		Route: &routers.Route{Spec: s.doc, Path: r.template, PathItem: r.item, Method: r.method, Operation: r.op},
		Options: &openapi3filter.Options{
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true,
			RejectWhenRequestBodyNotSpecified: true, SkipSettingDefaults: true,
		},
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		refuse(fmt.Errorf("request: %w", err))
	}

	status := strconv.Itoa(x.Status)
	listed := r.op.Responses.Status(x.Status)
	// An error status the description lists without a body is checked
	// against the known error body, like one it does not list.
	errorBody := x.Status >= 400 && (listed == nil || listed.Value == nil || len(listed.Value.Content) == 0)
	switch {
	case !errorBody:
		out := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: x.Status, Header: x.AnswerHeader,
			Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
		}
		out.SetBodyBytes(x.Answer)
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			fail(fmt.Errorf("answer %s: %w", status, err))
		}
		if resp := r.op.Responses.Status(x.Status); resp != nil && resp.Value != nil && x.Status < 300 {
			if mt := resp.Value.Content.Get("application/json"); mt != nil {
				res.Fields = BodyFields(x.Answer, mt.Schema)
			}
		}
	case s.errors == nil:
		fail(fmt.Errorf("answer %s: the description declares no such status and no error body is known", status))
	default:
		var v any
		if err := json.Unmarshal(x.Answer, &v); err != nil {
			fail(fmt.Errorf("answer %s: error body is not JSON: %w", status, err))
		} else if err := s.errors.VisitJSON(v, openapi3.MultiErrors()); err != nil {
			fail(fmt.Errorf("answer %s: error body: %w", status, err))
		}
	}
	return res
}

// BodyFields lists the JSON fields of a body as dotted paths ("a.b",
// "list[].c"); the keys of an object the schema makes a map (no properties,
// an additionalProperties schema) are one field, "*".
func BodyFields(body []byte, schema *openapi3.SchemaRef) []string {
	var v any
	if err := json.NewDecoder(io.LimitReader(bytes.NewReader(body), 8<<20)).Decode(&v); err != nil {
		return nil
	}
	set := map[string]bool{}
	var walk func(prefix string, v any, sr *openapi3.SchemaRef)
	walk = func(prefix string, v any, sr *openapi3.SchemaRef) {
		var sc *openapi3.Schema
		if sr != nil {
			sc = sr.Value
		}
		switch t := v.(type) {
		case map[string]any:
			isMap := sc != nil && len(sc.Properties) == 0 && sc.AdditionalProperties.Schema != nil
			for k, c := range t {
				name, child := k, findProperty(sr, k)
				if isMap {
					name, child = "*", sc.AdditionalProperties.Schema
				}
				p := name
				if prefix != "" {
					p = prefix + "." + name
				}
				set[p] = true
				walk(p, c, child)
			}
		case []any:
			var items *openapi3.SchemaRef
			if sc != nil {
				items = sc.Items
			}
			for _, c := range t {
				walk(prefix+"[]", c, items)
			}
		}
	}
	walk("", v, schema)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ResponseHasField reports whether the response schema of an operation for
// status declares the dotted field path.
func (s *Spec) ResponseHasField(operation, status, field string) error {
	op := s.operation(operation)
	if op == nil {
		return fmt.Errorf("%s: no operation %s", s.name, operation)
	}
	resp := op.Responses.Value(status)
	if resp == nil || resp.Value == nil || resp.Value.Content.Get("application/json") == nil {
		return fmt.Errorf("%s: %s has no JSON answer for %s", s.name, operation, status)
	}
	cur := resp.Value.Content.Get("application/json").Schema
	for _, part := range strings.Split(field, ".") {
		name, arrays := part, 0
		for strings.HasSuffix(name, "[]") {
			name, arrays = strings.TrimSuffix(name, "[]"), arrays+1
		}
		next := findProperty(cur, name)
		if name == "*" && cur != nil && cur.Value != nil {
			next = cur.Value.AdditionalProperties.Schema
		}
		if next == nil {
			return fmt.Errorf("%s: %s answer %s has no field %s", s.name, operation, status, field)
		}
		for range arrays {
			if next.Value == nil || next.Value.Items == nil {
				return fmt.Errorf("%s: %s answer %s: %s is not an array", s.name, operation, status, field)
			}
			next = next.Value.Items
		}
		cur = next
	}
	return nil
}

func findProperty(r *openapi3.SchemaRef, name string) *openapi3.SchemaRef {
	if r == nil || r.Value == nil {
		return nil
	}
	if p := r.Value.Properties[name]; p != nil {
		return p
	}
	for _, list := range []openapi3.SchemaRefs{r.Value.AllOf, r.Value.OneOf, r.Value.AnyOf} {
		for _, m := range list {
			if p := findProperty(m, name); p != nil {
				return p
			}
		}
	}
	return nil
}
