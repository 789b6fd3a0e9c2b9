package apispec

import (
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// Checker is anything that checks one exchange: an OpenAPI description
// (Spec) or Volcengine's metadata (Metadata).
type Checker interface {
	Check(fakecloud.Exchange) Result
}

// Watch checks every exchange of fake against c until the test ends, failing
// the test on each difference, and records what it saw in cov (nil: no
// record). It is for tests that drive a fake through our client: every
// request must be one the description allows.
func Watch(t testing.TB, fake *fakecloud.API, c Checker, cov *Coverage) {
	t.Helper()
	watch(t, fake, c, cov, false)
}

// WatchFake is Watch for tests that send a fake requests of their own,
// including ones the description refuses: such a request must be refused
// (answered 4xx, in the cloud's error shape); a fake that accepts it fails
// the test.
func WatchFake(t testing.TB, fake *fakecloud.API, c Checker, cov *Coverage) {
	t.Helper()
	watch(t, fake, c, cov, true)
}

func watch(t testing.TB, fake *fakecloud.API, c Checker, cov *Coverage, ownRequests bool) {
	t.Helper()
	var mu sync.Mutex
	done := false
	fake.Observe(func(x fakecloud.Exchange) {
		res := c.Check(x)
		cov.add(res, x)
		errs := append(slices.Clone(res.Request), res.Answer...)
		if ownRequests && len(res.Request) > 0 {
			// A request the description refuses must be refused; its
			// answer's shape is still checked.
			errs = res.Answer
			if x.Status < 400 || x.Status >= 500 {
				errs = append(errs, fmt.Errorf("%s %s: the fake answered %d to a request the description refuses: %v", x.Method, x.URL, x.Status, res.Request))
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		for _, err := range errs {
			t.Errorf("API description: %v", err)
		}
	})
	t.Cleanup(func() {
		fake.Observe(nil)
		mu.Lock()
		done = true
		mu.Unlock()
	})
}

// Coverage is what a package's tests exchanged with a fake, per operation.
// It is safe for concurrent use.
type Coverage struct {
	mu  sync.Mutex
	ops map[string]*opCoverage
}

type opCoverage struct {
	template string
	calls    int
	statuses map[int]bool
	// sent are the fields the fake's 2xx answers carried.
	sent map[string]bool
}

// NewCoverage returns an empty record.
func NewCoverage() *Coverage { return &Coverage{ops: map[string]*opCoverage{}} }

func (c *Coverage) add(res Result, x fakecloud.Exchange) {
	if c == nil || res.Operation == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	oc := c.ops[res.Operation]
	if oc == nil {
		oc = &opCoverage{template: res.Template, statuses: map[int]bool{}, sent: map[string]bool{}}
		c.ops[res.Operation] = oc
	}
	oc.calls++
	oc.statuses[x.Status] = true
	if x.Status >= 200 && x.Status < 300 && !x.Fault {
		for _, f := range res.Fields {
			oc.sent[f] = true
		}
	}
}

// Sent reports whether the fake's 2xx answers to operation carried field.
func (c *Coverage) Sent(operation, field string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	oc := c.ops[operation]
	return oc != nil && oc.sent[field]
}

// Operations returns the operations seen, sorted.
func (c *Coverage) Operations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.ops))
	for op := range c.ops {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// Table is the coverage as a Markdown table: per operation we call, the
// statuses seen, whether the fake implements it (answered a 2xx of its
// own), the fields the fake sends and those the client reads (reads, per
// operation).
func (c *Coverage) Table(reads map[string][]string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops := make([]string, 0, len(c.ops))
	for op := range c.ops {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var b strings.Builder
	b.WriteString("| operation | request | fake implements | statuses seen | fields the fake sends | fields the client reads |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, op := range ops {
		oc := c.ops[op]
		var statuses []string
		implemented := "no"
		for st := range oc.statuses {
			statuses = append(statuses, strconv.Itoa(st))
			if st >= 200 && st < 300 {
				implemented = "yes"
			}
		}
		sort.Strings(statuses)
		sent := make([]string, 0, len(oc.sent))
		for f := range oc.sent {
			sent = append(sent, f)
		}
		sort.Strings(sent)
		read := slices.Sorted(slices.Values(reads[op]))
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s | %s |\n", op, oc.template, implemented,
			strings.Join(statuses, ", "), codeList(sent), codeList(read))
	}
	return b.String()
}

func codeList(fields []string) string {
	if len(fields) == 0 {
		return "none"
	}
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = "`" + f + "`"
	}
	return strings.Join(out, " ")
}

// SyncTable compares the generated file at path with content, or writes it
// when update is set (CAP_UPDATE_API_COVERAGE=1 in the tests).
func SyncTable(path, content string, update bool) error {
	if update {
		return os.WriteFile(path, []byte(content), 0o644)
	}
	have, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w; generate it with CAP_UPDATE_API_COVERAGE=1", err)
	}
	if string(have) != content {
		return fmt.Errorf("%s is not what the tests generate; regenerate it with CAP_UPDATE_API_COVERAGE=1 and review the change", path)
	}
	return nil
}

// AllTestsRan reports whether the test binary runs every test (no -run or
// -skip), so a coverage table built from them is whole.
func AllTestsRan() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// JSONFields lists the JSON fields a Go value decodes, as dotted paths under
// prefix, the way BodyFields names them: "[]" for a slice's items, "*" for
// a map's keys. A client's read list comes from the types it decodes into.
func JSONFields(prefix string, v any) []string {
	return ReadFields(prefix, v, nil)
}

// ReadFields is JSONFields keeping only the struct fields the client's code
// selects (selected, from SelectedFields; nil keeps all), and only below a
// kept field: the fields of an SDK's answer type that a client reads. A
// field without a json tag is named by its Go name, as the Volcengine SDK's
// are.
func ReadFields(prefix string, v any, selected Selections) []string {
	var out []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			walk(prefix+"[]", t.Elem())
		case reflect.Map:
			out = append(out, prefix+".*")
			walk(prefix+".*", t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if !f.IsExported() || name == "-" || (selected != nil && !selected[t.PkgPath()+"."+t.Name()][f.Name]) {
					continue
				}
				if name == "" {
					name = f.Name
				}
				p := name
				if prefix != "" {
					p = prefix + "." + name
				}
				out = append(out, p)
				walk(p, f.Type)
			}
		}
	}
	walk(prefix, reflect.TypeOf(v))
	sort.Strings(out)
	return out
}

// Selections are the struct fields a package's code selects, by the
// struct's type ("import/path.TypeName") and field name.
type Selections map[string]map[string]bool

// SelectedFields type-checks the Go package in dir (its non-test files,
// against the export data the go tool reports for its imports) and returns
// every struct field its code selects (x.Field), by the struct's type: with
// ReadFields, exactly the fields of an SDK's answer types a client reads.
func SelectedFields(dir string) (Selections, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go tool is needed to type-check %s: %w", dir, err)
	}
	cmd := exec.Command(goTool, "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	cmd.Dir = dir
	listed, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export in %s: %w", dir, err)
	}
	exports := map[string]string{}
	self := ""
	for line := range strings.SplitSeq(strings.TrimSpace(string(listed)), "\n") {
		path, file, _ := strings.Cut(line, "\t")
		exports[path] = file
		self = path // the package itself comes last
	}
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})}
	if _, err := conf.Check(self, fset, files, info); err != nil {
		return nil, fmt.Errorf("type-check %s: %w", dir, err)
	}
	out := Selections{}
	for _, sel := range info.Selections {
		if sel.Kind() != types.FieldVal {
			continue
		}
		recv := sel.Recv()
		if p, ok := recv.(*types.Pointer); ok {
			recv = p.Elem()
		}
		named, ok := recv.(*types.Named)
		if !ok || named.Obj().Pkg() == nil {
			continue
		}
		key := named.Obj().Pkg().Path() + "." + named.Obj().Name()
		if out[key] == nil {
			out[key] = map[string]bool{}
		}
		out[key][sel.Obj().Name()] = true
	}
	return out, nil
}

// Description is a cloud's description loaded at most once per test binary
// and only read after that, shared by the tests of a package.
type Description[C Checker] struct{ get func() (C, error) }

// Once returns the description load reads, loaded on first use.
func Once[C Checker](load func() (C, error)) Description[C] {
	return Description[C]{get: sync.OnceValues(load)}
}

// Get returns the description, or why it cannot be loaded.
func (d Description[C]) Get() (C, error) { return d.get() }

// Watch is Watch against the description, failing the test when it cannot
// be loaded.
func (d Description[C]) Watch(t testing.TB, fake *fakecloud.API, cov *Coverage) {
	t.Helper()
	c, err := d.get()
	if err != nil {
		t.Fatal(err)
	}
	Watch(t, fake, c, cov)
}
