package main

// Tests that keep the documentation true: the flags reference is generated
// from the same flag sets --help prints, every provider page's configuration
// keys are the ones the code reads, the metrics reference matches what is
// registered, and links and package paths point at things that exist.
//
// After changing a flag, refresh docs/flags.md with
//
//	go test . -run TestDocsFlagsReference -update-docs

import (
	"context"
	"errors"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/inspect"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated sections of docs/flags.md")

// --- markdown helpers ---

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the text under the heading line equal to heading, up to the
// next heading of the same or a higher level.
func section(t *testing.T, md, heading string) string {
	t.Helper()
	level := strings.Index(heading, " ")
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != heading {
			continue
		}
		var out []string
		for _, m := range lines[i+1:] {
			if h := strings.Index(m, " "); strings.HasPrefix(m, "#") && h > 0 && h <= level && strings.Trim(m[:h], "#") == "" {
				break
			}
			out = append(out, m)
		}
		return strings.Join(out, "\n")
	}
	t.Fatalf("heading %q not found", heading)
	return ""
}

// table is a markdown table: lower-cased header cells and rows of cells.
type table struct {
	header []string
	rows   [][]string
}

// tables parses every pipe table in md.
func tables(md string) []table {
	var out []table
	var cur *table
	for _, l := range strings.Split(md, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			cur = nil
			continue
		}
		cells := splitRow(l)
		switch {
		case cur == nil:
			out = append(out, table{})
			cur = &out[len(out)-1]
			for _, c := range cells {
				cur.header = append(cur.header, strings.ToLower(c))
			}
		case regexp.MustCompile(`^[\s|:-]+$`).MatchString(l):
		default:
			cur.rows = append(cur.rows, cells)
		}
	}
	return out
}

func splitRow(l string) []string {
	l = strings.TrimSuffix(strings.TrimPrefix(l, "|"), "|")
	var cells []string
	var b strings.Builder
	code := false
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case c == '`':
			code = !code
			b.WriteByte(c)
		case c == '\\' && i+1 < len(l) && l[i+1] == '|':
			b.WriteByte('|')
			i++
		case c == '|' && !code:
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

var backticked = regexp.MustCompile("`([^`]+)`")

func codeSpans(s string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func diffSets(t *testing.T, what string, doc, code map[string]bool) {
	t.Helper()
	for _, k := range sortedKeys(code) {
		if !doc[k] {
			t.Errorf("%s: %q is read by the code but not documented", what, k)
		}
	}
	for _, k := range sortedKeys(doc) {
		if !code[k] {
			t.Errorf("%s: %q is documented but the code does not read it", what, k)
		}
	}
}

// --- flags reference ---

// flagRow is how a flag appears in docs/flags.md.
func flagRow(f *flag.Flag) string {
	def := ""
	if f.DefValue != "" {
		def = "`" + f.DefValue + "`"
	}
	// Escaped so that "<id>" renders instead of vanishing as an HTML tag.
	usage := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(f.Usage)
	// The test binary registers an extra provider; the docs describe the real binary.
	usage = strings.ReplaceAll(usage, ", "+testProvider, "")
	dash := "--"
	if len(f.Name) == 1 {
		dash = "-"
	}
	return "| `" + dash + f.Name + "` | " + def + " | " + usage + " |"
}

func flagTable(fs *flag.FlagSet, keep func(*flag.Flag) bool) string {
	rows := []string{"| flag | default | meaning |", "|---|---|---|"}
	fs.VisitAll(func(f *flag.Flag) {
		if keep(f) {
			rows = append(rows, flagRow(f))
		}
	})
	return strings.Join(rows, "\n")
}

// klogFlagNames are the logging flags klog adds to the server's flag set.
func klogFlagNames() map[string]bool {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}

// replaceGenerated swaps the text between the markers of one generated section.
func replaceGenerated(t *testing.T, doc, name, body string) string {
	t.Helper()
	begin, end := "<!-- BEGIN GENERATED: "+name+" -->", "<!-- END GENERATED: "+name+" -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/flags.md lacks the markers %q ... %q", begin, end)
	}
	return doc[:i+len(begin)] + "\n" + body + "\n" + doc[j:]
}

// skipUnlessAllProviders: the docs describe the default build, whose
// --cloud-provider help lists all three providers.
func skipUnlessAllProviders(t *testing.T) {
	t.Helper()
	for _, p := range []string{"vultr", "volcengine", "exoscale"} {
		if _, ok := registry.Lookup(p); !ok {
			t.Skipf("built without %s; the docs describe the build with every provider", p)
		}
	}
}

func TestDocsFlagsReference(t *testing.T) {
	skipUnlessAllProviders(t)
	var cfg config
	server := newFlagSet(&cfg, io.Discard)
	var inspectFlags inspect.Flags
	insp := inspect.NewFlagSet(&inspectFlags, io.Discard)
	var probeFlags inspect.Flags
	probe := inspect.NewProbeFlagSet(&probeFlags, io.Discard)
	klogNames := klogFlagNames()

	const path = "docs/flags.md"
	doc := readDoc(t, path)
	want := replaceGenerated(t, doc, "server flags", flagTable(server, func(f *flag.Flag) bool { return !klogNames[f.Name] }))
	want = replaceGenerated(t, want, "logging flags", flagTable(server, func(f *flag.Flag) bool { return klogNames[f.Name] }))
	want = replaceGenerated(t, want, "inspect flags", flagTable(insp, func(*flag.Flag) bool { return true }))
	want = replaceGenerated(t, want, "probe flags", flagTable(probe, func(*flag.Flag) bool { return true }))
	if want != doc {
		if *updateDocs {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("%s is out of date with the flag definitions: run go test . -run TestDocsFlagsReference -update-docs", path)
	}

	// The tables come from the flag sets; --help prints the same sets.
	cases := []struct {
		name string
		args []string
		fs   *flag.FlagSet
	}{
		{"server", []string{"--help"}, server},
		{"inspect", []string{"inspect", "--help"}, insp},
		{"probe", []string{"probe", "--help"}, probe},
	}
	for _, tc := range cases {
		t.Run(tc.name+" --help", func(t *testing.T) {
			var out, errb strings.Builder
			if code := run(context.Background(), tc.args, &out, &errb); code != 0 {
				t.Fatalf("--help exit %d", code)
			}
			help := errb.String()
			tc.fs.VisitAll(func(f *flag.Flag) {
				if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(help) {
					t.Errorf("--help does not list -%s", f.Name)
				}
			})
		})
	}
}

// TestDocsReadmeFlags checks the README's short flags table: every server
// flag of ours is there with its default, and nothing else.
func TestDocsReadmeFlags(t *testing.T) {
	var cfg config
	server := newFlagSet(&cfg, io.Discard)
	klogNames := klogFlagNames()
	tbls := tables(section(t, readDoc(t, "README.md"), "## Flags"))
	if len(tbls) == 0 {
		t.Fatal("README.md: no table under ## Flags")
	}
	doc := map[string]bool{}
	for _, row := range tbls[0].rows {
		name := strings.TrimLeft(strings.Trim(row[0], "`"), "-")
		doc[name] = true
		f := server.Lookup(name)
		if f == nil {
			t.Errorf("README.md documents --%s, which does not exist", name)
			continue
		}
		def := strings.Trim(row[1], "`")
		if def != f.DefValue {
			t.Errorf("README.md: --%s default %q, the code says %q", name, def, f.DefValue)
		}
	}
	code := map[string]bool{}
	server.VisitAll(func(f *flag.Flag) {
		if !klogNames[f.Name] {
			code[f.Name] = true
		}
	})
	diffSets(t, "README.md flags table", doc, code)
}

// --- provider configuration references ---

// structTags returns the tagKey values of every field (nested ones included)
// of the named type in a Go file.
func structTags(t *testing.T, file, typeName, tagKey string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != typeName {
			return true
		}
		found = true
		ast.Inspect(ts.Type, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			tag, _ := strconv.Unquote(field.Tag.Value)
			if v, ok := reflect.StructTag(tag).Lookup(tagKey); ok {
				if name := strings.Split(v, ",")[0]; name != "" && name != "-" {
					out[name] = true
				}
			}
			return true
		})
		return false
	})
	if !found {
		t.Fatalf("%s: type %s not found", file, typeName)
	}
	return out
}

// envConstants returns the values of the string constants named Env*/env*
// in a Go file: by convention the environment variables a provider reads.
func envConstants(t *testing.T, file string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if !regexp.MustCompile(`^[Ee]nv[A-Z]`).MatchString(name.Name) || i >= len(vs.Values) {
				continue
			}
			if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				out[v] = true
			}
		}
		return true
	})
	return out
}

// getenvLiterals finds os.Getenv("X")/getenv("X") calls with a literal name,
// which would bypass the Env* constants convention.
func getenvLiterals(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			name := ""
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.EqualFold(name, "getenv") {
				out = append(out, file+": "+lit.Value)
			}
			return true
		})
	}
	return out
}

func union(sets ...map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, s := range sets {
		for k := range s {
			out[k] = true
		}
	}
	return out
}

// keyColumns are the table headers whose cells name configuration keys.
var keyColumns = map[string]bool{"key": true, "file key": true, "json key": true, "env var": true, "environment variable": true, "variable": true}

func TestDocsProviderConfigKeys(t *testing.T) {
	var cfg config
	server := newFlagSet(&cfg, io.Discard)
	cases := []struct {
		provider string
		code     func(t *testing.T) map[string]bool
	}{
		{"vultr", func(t *testing.T) map[string]bool {
			return union(structTags(t, "cloudprovider/vultr/vultr_config.go", "Config", "json"),
				envConstants(t, "cloudprovider/vultr/vultr_constants.go"))
		}},
		{"volcengine", func(t *testing.T) map[string]bool {
			return union(structTags(t, "cloudprovider/volcengine/volcengine_config.go", "fileConfig", "gcfg"),
				envConstants(t, "cloudprovider/volcengine/volcengine_constants.go"))
		}},
		{"exoscale", func(t *testing.T) map[string]bool {
			return envConstants(t, "cloudprovider/exoscale/exoscale_constants.go")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			if lits := getenvLiterals(t, "cloudprovider/"+tc.provider); len(lits) > 0 {
				t.Errorf("environment variables read without an Env* constant (the docs check cannot see them): %v", lits)
			}
			ref := section(t, readDoc(t, "docs/providers/"+tc.provider+".md"), "## Configuration reference")
			doc := map[string]bool{}
			for _, tb := range tables(ref) {
				for col, h := range tb.header {
					if !keyColumns[h] {
						continue
					}
					for _, row := range tb.rows {
						if col < len(row) {
							for _, k := range codeSpans(row[col]) {
								doc[k] = true
							}
						}
					}
				}
			}
			if len(doc) == 0 {
				t.Fatal("no keys found under ## Configuration reference (columns: key, env var)")
			}
			diffSets(t, "docs/providers/"+tc.provider+".md", doc, tc.code(t))
			for _, s := range codeSpans(ref) {
				if m := regexp.MustCompile(`^--([a-z-]+)`).FindStringSubmatch(s); m != nil && server.Lookup(m[1]) == nil {
					t.Errorf("configuration reference names --%s, which the server does not have", m[1])
				}
			}
		})
	}
}

// --- metrics reference ---

type fakeTransport struct{}

func (fakeTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
}

func TestDocsMetricsReference(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	// Touch every metric once so each family is gathered with its labels.
	m.SetBuildInfo("v0.0.0", "vultr")
	m.ObserveRPC("NodeGroups", "OK", time.Millisecond)
	m.RefreshFailed()
	m.SetGroupSize(metrics.GroupSize{ID: "g", Min: 1, Max: 2, Target: 1})
	m.SetUnmatchedSpecs(0)
	m.TemplateUnavailable("g")
	m.ObserveRateLimit("vultr")(time.Millisecond, true)
	m.SetSettingErrors(map[string]int{"g": 0})
	m.ObserveMutation("g", metrics.OperationIncrease, "applied")
	m.SetQuarantinedGroups(0)
	m.SetGroupInstances(map[string]metrics.InstanceCounts{"g": {Running: 1}})
	m.NodeLookupFailed("vultr")()
	m.NodeIdentityMismatch("g")
	rt := m.InstrumentTransport("vultr")(fakeTransport{}, nil)
	req, _ := http.NewRequest(http.MethodGet, "http://fake/v2/x", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	code := map[string]string{}
	for _, f := range families {
		var labels []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		sort.Strings(labels)
		code[f.GetName()] = strings.ToLower(f.GetType().String()) + " " + strings.Join(labels, ",")
	}

	tbls := tables(section(t, readDoc(t, "docs/metrics.md"), "## Provider metrics"))
	if len(tbls) == 0 {
		t.Fatal("docs/metrics.md: no table under ## Provider metrics")
	}
	doc := map[string]string{}
	for _, row := range tbls[0].rows {
		labels := codeSpans(row[2])
		sort.Strings(labels)
		doc[strings.Trim(row[0], "`")] = strings.ToLower(row[1]) + " " + strings.Join(labels, ",")
	}
	if !reflect.DeepEqual(doc, code) {
		t.Fatalf("docs/metrics.md (name: type labels)\n%v\ncode registers\n%v", doc, code)
	}
}

// --- links and paths ---

// docPages are the pages checked for dead links: the README, every page
// under docs/ and the examples' READMEs.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("examples/*/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "README.md")
	err = filepath.WalkDir("docs", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, page := range docPages(t) {
		t.Run(page, func(t *testing.T) {
			for _, m := range link.FindAllStringSubmatch(readDoc(t, page), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				p := filepath.Clean(filepath.Join(filepath.Dir(page), target))
				if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
					t.Errorf("dead link %s", target)
				}
			}
		})
	}
}

// TestDocsInspectCommands checks every inspect invocation shown in the docs
// uses flags that inspect has.
func TestDocsInspectCommands(t *testing.T) {
	var f inspect.Flags
	fs := inspect.NewFlagSet(&f, io.Discard)
	flagRe := regexp.MustCompile(`(?:^|\s)--?([a-z][a-z-]*)`)
	n := 0
	for _, page := range []string{"README.md", "docs/inspect.md", "docs/troubleshooting.md", "docs/flags.md"} {
		for i, line := range strings.Split(readDoc(t, page), "\n") {
			for _, m := range regexp.MustCompile(`\binspect\s+(-[^|`+"`"+`#]*)`).FindAllStringSubmatch(line, -1) {
				for _, fm := range flagRe.FindAllStringSubmatch(m[1], -1) {
					n++
					if fs.Lookup(fm[1]) == nil {
						t.Errorf("%s:%d: inspect has no flag -%s", page, i+1, fm[1])
					}
				}
			}
		}
	}
	if n < 5 {
		t.Fatalf("found only %d inspect flags in the docs; is the pattern still right?", n)
	}
}
