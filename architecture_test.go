package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/ca-providers/cluster-autoscaler-provider"

// TestArchitectureWhereTable keeps docs/architecture.md's paths true: every
// path named in the where column of any of its tables exists.
func TestArchitectureWhereTable(t *testing.T) {
	n := 0
	for _, tb := range tables(readDoc(t, "docs/architecture.md")) {
		col := slices.Index(tb.header, "where")
		if col < 0 {
			continue
		}
		for _, row := range tb.rows {
			if col >= len(row) {
				continue
			}
			for _, s := range codeSpans(row[col]) {
				if !strings.Contains(s, "/") && !strings.HasSuffix(s, ".go") {
					continue // an identifier, not a path
				}
				n++
				if _, err := os.Stat(strings.TrimSuffix(s, "/")); err != nil {
					t.Errorf("docs/architecture.md names %s, which does not exist", s)
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("docs/architecture.md: the where columns name only %d paths", n)
	}
}

// TestArchitectureLayers keeps the layer list of docs/architecture.md true:
// every Go package of the repository is in exactly one layer, no non-test
// file imports a package of a later layer, and the imports have no cycle.
func TestArchitectureLayers(t *testing.T) {
	layers := docLayers(t, section(t, readDoc(t, "docs/architecture.md"), "## Layers"))
	imports := repoImports(t)
	layerOf := map[string]int{}
	for i, pkgs := range layers {
		for _, p := range pkgs {
			if prev, dup := layerOf[p]; dup {
				t.Errorf("%s is listed in layers %d and %d", p, prev+1, i+1)
			}
			layerOf[p] = i
			if _, ok := imports[p]; !ok {
				t.Errorf("layer %d lists %s, which is not a Go package of this repository", i+1, p)
			}
		}
	}
	for _, p := range sortedKeys(keysOf(imports)) {
		from, ok := layerOf[p]
		if !ok {
			t.Errorf("package %s is in no layer of docs/architecture.md", p)
			continue
		}
		for _, q := range imports[p] {
			if to, ok := layerOf[q]; ok && to > from {
				t.Errorf("%s (layer %d) imports %s (layer %d, above it)", p, from+1, q, to+1)
			}
		}
	}
	if cycle := findCycle(imports); cycle != nil {
		t.Errorf("import cycle: %s", strings.Join(cycle, " -> "))
	}
}

// docLayers reads the numbered list under ## Layers: each item's code spans
// that name a directory are its packages ("." is the main package).
func docLayers(t *testing.T, md string) [][]string {
	t.Helper()
	item := regexp.MustCompile(`^(\d+)\. `)
	var layers [][]string
	for _, l := range strings.Split(md, "\n") {
		if m := item.FindStringSubmatch(l); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != len(layers)+1 {
				t.Fatalf("docs/architecture.md: layer %s follows layer %d", m[1], len(layers))
			}
			layers = append(layers, nil)
		}
		if len(layers) == 0 || (!item.MatchString(l) && !strings.HasPrefix(l, "   ")) {
			continue
		}
		for _, s := range codeSpans(l) {
			if fi, err := os.Stat(s); err == nil && fi.IsDir() {
				layers[len(layers)-1] = append(layers[len(layers)-1], filepath.Clean(s))
			}
		}
	}
	if len(layers) < 3 {
		t.Fatalf("docs/architecture.md: ## Layers lists %d layers", len(layers))
	}
	return layers
}

// repoImports maps every directory holding non-test Go files to the
// repository packages those files import (as directories).
func repoImports(t *testing.T) map[string][]string {
	t.Helper()
	modules, _ := makefileModules(t)
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin" || d.Name() == "vendor" || ownModule(path, modules)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		if _, ok := out[dir]; !ok {
			out[dir] = nil
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			var q string
			switch {
			case p == modulePath:
				q = "."
			case strings.HasPrefix(p, modulePath+"/"):
				q = strings.TrimPrefix(p, modulePath+"/")
			default:
				continue
			}
			if !slices.Contains(out[dir], q) {
				out[dir] = append(out[dir], q)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d packages", len(out))
	}
	return out
}

func keysOf(m map[string][]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// ownModule reports whether dir holds a go.mod of its own and is not one of
// modules, the Makefile's MODULES. The repository walks skip such a module as
// go build, go vet and go mod tidy of this module do. They enter the nested
// modules of MODULES: those hold this repository's tools and tests, split off
// only so that their dependencies stay out of the providers' go.mod, and the
// rules for this repository's code apply to them.
func ownModule(dir string, modules []string) bool {
	if slices.Contains(modules, filepath.ToSlash(filepath.Clean(dir))) {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// makefileModules reads the Makefile's MODULES (the modules make test, lint,
// staticcheck and tidy run in) and OTHER_MODULES (the nested modules they
// leave out).
func makefileModules(t *testing.T) (modules, other []string) {
	t.Helper()
	mk := readDoc(t, "Makefile")
	read := func(name string) []string {
		m := regexp.MustCompile(`(?m)^` + name + ` *:= *(.*)$`).FindStringSubmatch(mk)
		if m == nil {
			t.Fatalf("Makefile: no %s := line", name)
		}
		return strings.Fields(m[1])
	}
	modules, other = read("MODULES"), read("OTHER_MODULES")
	if !slices.Contains(modules, ".") {
		t.Fatalf("Makefile: MODULES %v lacks the root module \".\"", modules)
	}
	return modules, other
}

// TestEveryModuleIsListed keeps the Makefile's module lists true, so make
// test runs every module's tests: each go.mod of the repository is in
// exactly one of MODULES and OTHER_MODULES, each listed directory holds a
// go.mod, and each module's path is this module's path plus its directory,
// so an import path names the directory the repository walks find it in.
func TestEveryModuleIsListed(t *testing.T) {
	t.Parallel()
	modules, other := makefileModules(t)
	found := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata" || d.Name() == "bin" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			found[filepath.ToSlash(filepath.Dir(path))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 2 {
		t.Fatalf("found go.mod only in %v", sortedKeys(found))
	}
	listed := map[string]string{}
	for _, l := range []struct {
		name string
		dirs []string
	}{{"MODULES", modules}, {"OTHER_MODULES", other}} {
		for _, dir := range l.dirs {
			if prev, dup := listed[dir]; dup {
				t.Errorf("Makefile: %s is in %s and in %s", dir, prev, l.name)
			}
			listed[dir] = l.name
			if !found[dir] {
				t.Errorf("Makefile: %s names %s, which holds no go.mod", l.name, dir)
				continue
			}
			want := modulePath
			if dir != "." {
				want += "/" + dir
			}
			if got := goModPath(t, dir); got != want {
				t.Errorf("%s/go.mod: module %s, want %s", dir, got, want)
			}
		}
	}
	for _, dir := range sortedKeys(found) {
		if _, ok := listed[dir]; !ok {
			t.Errorf("%s/go.mod: a module in neither MODULES nor OTHER_MODULES of the Makefile, so make test skips it; add it to MODULES, or to OTHER_MODULES with the reason", dir)
		}
	}
}

// goModPath returns the module path dir/go.mod declares.
func goModPath(t *testing.T, dir string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindStringSubmatch(readDoc(t, filepath.Join(dir, "go.mod")))
	if m == nil {
		t.Fatalf("%s/go.mod declares no module", dir)
	}
	return m[1]
}

// findCycle returns one import cycle of graph, nil when there is none.
func findCycle(graph map[string][]string) []string {
	const (
		unvisited = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(p string) []string
	visit = func(p string) []string {
		state[p] = open
		stack = append(stack, p)
		for _, q := range graph[p] {
			switch state[q] {
			case open:
				i := slices.Index(stack, q)
				return append(slices.Clone(stack[i:]), q)
			case unvisited:
				if c := visit(q); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[p] = done
		return nil
	}
	for _, p := range sortedKeys(keysOf(graph)) {
		if state[p] == unvisited {
			if c := visit(p); c != nil {
				return c
			}
		}
	}
	return nil
}

// The compiler refuses a cycle among the packages it builds, so the layer
// test's cycle check is shown working on a graph of its own.
func TestFindCycle(t *testing.T) {
	if c := findCycle(map[string][]string{"a": {"b"}, "b": {"c"}, "c": nil}); c != nil {
		t.Fatalf("cycle %v in a graph without one", c)
	}
	c := findCycle(map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}})
	if strings.Join(c, " ") != "a b c a" {
		t.Fatalf("findCycle = %v, want a b c a", c)
	}
}
