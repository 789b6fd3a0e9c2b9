package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The provider file map (docs/architecture.md, "## Provider file map"): every
// provider package holds the same files under the same names, so a fix in one
// provider has one obvious home in the others.

const fileMapDoc = "docs/architecture.md, ## Provider file map"

// providerTypes are the types every provider declares, with the map part
// (the file <p>_<part>.go) that declares each.
var providerTypes = map[string]string{
	"cloudProvider": "cloud_provider",
	"manager":       "manager",
	"cloudAPI":      "manager",
	"nodeGroup":     "node_group",
}

// roleMethods name, by a method only it has, the type that plays each role:
// whichever type has it must carry the role's one name.
var roleMethods = map[string]string{
	"NodeGroupForNode": "cloudProvider",
	"DeleteNodes":      "nodeGroup",
}

// fileMapParts reads the <part> of every <p>_<part>.go row of the map.
func fileMapParts(t *testing.T) []string {
	t.Helper()
	md := section(t, readDoc(t, "docs/architecture.md"), "## Provider file map")
	tbls := tables(md)
	if len(tbls) == 0 {
		t.Fatalf("%s: no table", fileMapDoc)
	}
	row := regexp.MustCompile(`^<p>_([a-z_]+)\.go$`)
	var parts []string
	for _, r := range tbls[0].rows {
		for _, s := range codeSpans(r[0]) {
			if m := row.FindStringSubmatch(s); m != nil {
				parts = append(parts, m[1])
			}
		}
	}
	if len(parts) < 5 {
		t.Fatalf("%s lists only %d files (%v); the table's first column names them as `<p>_<part>.go`", fileMapDoc, len(parts), parts)
	}
	for name := range providerTypes {
		if !strings.Contains(md, "`"+name+"`") {
			t.Errorf("%s does not name the provider type %s; name it there or drop it from providerTypes", fileMapDoc, name)
		}
	}
	return parts
}

// registers matches a provider's registration call (not the registry's own
// definition of it).
var registers = regexp.MustCompile(`\w+\.RegisterCloudProvider\(`)

// providerDirs finds the provider packages: the directories under
// cloudprovider/ whose package registers a cloud provider.
func providerDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("cloudprovider")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join("cloudprovider", e.Name())
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			if b, err := os.ReadFile(f); err == nil && registers.Match(b) {
				dirs = append(dirs, dir)
				break
			}
		}
	}
	if len(dirs) < 3 {
		t.Fatalf("found %d provider packages under cloudprovider/ (%v), want at least 3", len(dirs), dirs)
	}
	return dirs
}

func TestProviderFileMap(t *testing.T) {
	t.Parallel()
	parts := fileMapParts(t)
	for _, dir := range providerDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			checkProviderFiles(t, dir, parts)
			checkProviderTypes(t, dir)
		})
	}
}

// checkProviderFiles compares the package's files with the map.
func checkProviderFiles(t *testing.T, dir string, parts []string) {
	p := filepath.Base(dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var subdirs []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if name != "testdata" {
				subdirs = append(subdirs, name)
			}
			continue
		}
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		path := filepath.Join(dir, name)
		if strings.HasSuffix(name, "_test.go") {
			if !testFileInMap(p, name, parts) {
				t.Errorf("%s: a test file is named after the file it tests (%s_<part>_test.go or %s_<part>_<topic>_test.go, or %s_strict_test.go); rename it (%s)", path, p, p, p, fileMapDoc)
			}
			continue
		}
		part, ok := strings.CutPrefix(strings.TrimSuffix(name, ".go"), p+"_")
		if !ok || !slices.Contains(parts, part) {
			t.Errorf("%s is outside the provider file map: move its declarations into the mapped file they belong to, or add a row that every provider follows (%s)", path, fileMapDoc)
			continue
		}
		seen[part] = true
	}
	for _, part := range parts {
		if !seen[part] {
			t.Errorf("%s/%s_%s.go is missing: every provider has every file of the map (%s)", dir, p, part, fileMapDoc)
		}
	}
	if len(subdirs) != 1 {
		t.Errorf("%s has sub-packages %v; the map allows one, the thin API client with its fakeapi/ (%s)", dir, subdirs, fileMapDoc)
		return
	}
	if fi, err := os.Stat(filepath.Join(dir, subdirs[0], "fakeapi")); err != nil || !fi.IsDir() {
		t.Errorf("%s/%s has no fakeapi/: the API client's fake sits under it (%s)", dir, subdirs[0], fileMapDoc)
	}
}

// testFileInMap reports whether name is <p>_strict_test.go, or
// <p>_<part>_test.go or <p>_<part>_<topic>_test.go for a part of the map.
func testFileInMap(p, name string, parts []string) bool {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(name, "_test.go"), p+"_")
	if !ok {
		return false
	}
	if rest == "strict" {
		return true
	}
	for _, part := range parts {
		if rest == part || strings.HasPrefix(rest, part+"_") {
			return true
		}
	}
	return false
}

// checkProviderTypes checks the one naming of the provider types.
func checkProviderTypes(t *testing.T, dir string) {
	p := filepath.Base(dir)
	fset := token.NewFileSet()
	declaredIn := map[string]string{} // type name -> file
	methods := map[string][]string{}  // role method -> receiver types
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						declaredIn[ts.Name.Name] = filepath.Base(path)
					}
				}
			case *ast.FuncDecl:
				if _, role := roleMethods[d.Name.Name]; role && d.Recv != nil && len(d.Recv.List) == 1 {
					methods[d.Name.Name] = append(methods[d.Name.Name], receiverName(d.Recv.List[0].Type))
				}
			}
		}
	}
	for name, part := range providerTypes {
		want := p + "_" + part + ".go"
		switch got, ok := declaredIn[name]; {
		case !ok:
			t.Errorf("%s declares no type %s: every provider names it so (%s)", dir, name, fileMapDoc)
		case got != want:
			t.Errorf("%s declares %s in %s; it belongs in %s (%s)", dir, name, got, want, fileMapDoc)
		}
	}
	for method, name := range roleMethods {
		for _, got := range methods[method] {
			if got == name {
				continue
			}
			t.Errorf("%s: type %s has %s, so it is the provider's %s: rename it %s (%s)", dir, got, method, name, name, fileMapDoc)
		}
	}
}

func receiverName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
