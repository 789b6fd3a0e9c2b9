package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// mutableGlobals are the package-level variables that may change after
// start-up. The provider registry is the one: providers register from their
// init functions, as CA's own builder does.
var mutableGlobals = map[string]string{
	"cloudprovider/registry.registry":   "the provider registry, filled by the providers' init functions",
	"cloudprovider/registry.registryMu": "guards the provider registry",
}

// readOnlyGlobals are the package-level variables of the module's non-test
// code that are set once, where they are declared, and only read after
// that. Each carries why it is a variable and not a constant or an option.
// Sentinel errors (errors.New), patterns compiled once (regexp.MustCompile),
// quantities parsed once (resource.MustParse), compile-time interface
// assertions (var _ I = ...) and generated code need no entry.
var readOnlyGlobals = map[string]string{
	".version":                                                "the release, replaced at link time with -ldflags -X; never assigned in code",
	"cloudprovider/groupconfig.OptionNames":                   "table: the per-group option names, in the order they are documented",
	"cloudprovider/cloudprovidertest.deletionPaths":           "table of the deletion paths the kit's check walks",
	"cloudprovider/cloudprovidertest.mutationCases":           "table of the kit's mutation cases",
	"cloudprovider/cloudprovidertest.Mutations":               "table: the three mutations, for checks that cover all",
	"cloudprovider/cloudprovidertest.Hooks":                   "table: every optional hook, for the check that each one is set or has its reason",
	"cloudprovider/cloudprovidertest.FaultRateLimited":        "fault value that checks copy before changing it",
	"cloudprovider/cloudprovidertest.FaultServerError":        "fault value that checks copy before changing it",
	"cloudprovider/cloudprovidertest.FaultHang":               "fault value that checks copy before changing it",
	"cloudprovider/cloudprovidertest.FaultMalformed":          "fault value that checks copy before changing it",
	"cloudprovider/cloudprovidertest.FaultAnswerLost":         "fault value that checks copy before changing it",
	"cloudprovider/cloudprovidertest.FaultAppliedReset":       "fault value that checks copy before changing it",
	"cloudprovider/cloudprovidertest.FaultAppliedEmptyBody":   "fault value that checks copy before changing it",
	"cloudprovider/cloudprovidertest.FaultRefused":            "fault value that checks copy before changing it",
	"cloudprovider/cloudprovidertest.MutationFaults":          "table naming the faults above",
	"cloudprovider/cloudprovidertest.kitRateLimit":            "the kit's rate-limit budget; a struct, so not a constant",
	"cloudprovider/exoscale.DefaultRateLimit":                 "the registered default budget; a struct, so not a constant",
	"cloudprovider/exoscale.publishedZones":                   "table: the zones the SDK publishes",
	"cloudprovider/exoscale.simDefaultSpecs":                  "table: --simulate's default --nodes",
	"cloudprovider/exoscale/exoapi.collections":               "table of the API's collection path segments",
	"cloudprovider/exoscale/exoapi/fakeapi.examplePolicy":     "the example role policy, embedded for --simulate (go:embed needs a variable)",
	"cloudprovider/externalgrpc.classification":               "table: error class to gRPC code, in match order",
	"cloudprovider/fakecloud/apispec.descriptions":            "the clouds' API descriptions, embedded for the tests (go:embed needs a variable)",
	"cloudprovider/providertest.vultrDescription":             "Vultr's API description, loaded once per test binary and only read after that",
	"cloudprovider/providertest.volcengineDescription":        "Volcengine's API description, loaded once per test binary and only read after that",
	"cloudprovider/providertest.exoscaleDescription":          "Exoscale's API description, loaded once per test binary and only read after that",
	"cloudprovider/externalgrpc/grpctest/wirevectors.Current": "names the wire-vector set; a struct, so not a constant",
	"cloudprovider/externalgrpc/grpctest/wirevectors.Legacy":  "names the wire-vector set; a struct, so not a constant",
	"cloudprovider/simcloud.AllFaults":                        "table: every fault kind",
	"cloudprovider/simcloud.DefaultFaults":                    "table: the default fault mix",
	"cloudprovider/volcengine.DefaultRateLimit":               "the registered default budget; a struct, so not a constant",
	"cloudprovider/volcengine/volcapi.throttleCodes":          "table of the API's throttling error codes",
	"cloudprovider/volcengine/volcapi/fakeapi.autoScaling":    "the fake gateway's service table entry",
	"cloudprovider/volcengine/volcapi/fakeapi.ecs":            "the fake gateway's service table entry",
	"cloudprovider/volcengine/volcapi/fakeapi.vpc":            "the fake gateway's service table entry",
	"cloudprovider/volcengine/volcapi/fakeapi.handlers":       "the fake gateway's action table",
	"cloudprovider/volcengine/volcapi/fakeapi.examplePolicy":  "the example IAM policy, embedded for --simulate (go:embed needs a variable)",
	"cloudprovider/vultr.DefaultRateLimit":                    "the registered default budget; a struct, so not a constant",
	"cloudprovider/vultr/vultrapi.staticSegments":             "table of the API's fixed path segments",
	"hack/bench/cluster.Providers":                            "table: the providers the bench drives",
	"hack/chart.lintKubeVersion":                              "the Kubernetes version the chart is linted for; a struct",
	"hack/container.defaultCABundles":                         "table of where the CA bundle is looked for",
	"hack/container.knownProviders":                           "table: the providers an image can hold",
	"hack/soak.allOps":                                        "table: the soak's operations",
	"hack/soak.defaults":                                      "the autoscaling options the soak asks with; only read",
	"hack/soak.mutations":                                     "table: the RPCs that mutate",
	"hack/soak.opWeights":                                     "table: each operation's weight",
	"hack/soak.readyStates":                                   "table: the states that count as ready",
}

// onceInitialised are the calls whose result is set once and only read:
// a package variable holding one needs no allow-list entry.
var onceInitialised = regexp.MustCompile(`^(errors\.New|regexp\.MustCompile|resource\.MustParse)$`)

// packageVar is a package-level variable of non-test code.
type packageVar struct {
	pos     token.Position
	syncful bool // its type holds a sync or sync/atomic value: it changes through methods
	once    bool // set once by an onceInitialised call
}

// TestNoMutablePackageState keeps the module's non-test code free of
// package-level mutable state outside the provider registry: the clock, the
// quarantine window and everything else a test may want to vary travel in
// options, so tests run in parallel without sharing it. Every package-level
// variable must be on an allow-list with a reason, and none but the
// registry's may be assigned outside its declaration (by any file, tests
// included) or hold a lock or an atomic.
func TestNoMutablePackageState(t *testing.T) {
	fset := token.NewFileSet()
	modPath := modulePath
	vars := map[string]*packageVar{}
	type parsed struct {
		dir  string
		file *ast.File
	}
	var files []parsed
	pkgName := map[string]string{} // dir -> its non-test package name
	modules, _ := makefileModules(t)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "bin" || name == "vendor" || ownModule(path, modules)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." {
			dir = ""
		}
		files = append(files, parsed{dir, f})
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkgName[dir] = f.Name.Name
		if ast.IsGenerated(f) {
			return nil
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name == "_" {
						continue
					}
					v := &packageVar{pos: fset.Position(n.Pos()), syncful: mentionsSync(vs.Type)}
					if i < len(vs.Values) {
						v.syncful = v.syncful || mentionsSync(vs.Values[i])
						v.once = isOnceCall(vs.Values[i])
					}
					vars[dir+"."+n.Name] = v
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for key, v := range vars {
		_, ro := readOnlyGlobals[key]
		_, mut := mutableGlobals[key]
		if !ro && !mut && !v.once {
			t.Errorf("%s: package-level variable %s: pass it in through options (BuildOptions, a constructor's options), or, if it is a read-only table, add it to readOnlyGlobals with the reason", v.pos, key)
		}
		if v.syncful && !mut {
			t.Errorf("%s: package-level variable %s holds a lock or an atomic, so it changes at run time: move it into the value that uses it", v.pos, key)
		}
	}
	for _, list := range []map[string]string{readOnlyGlobals, mutableGlobals} {
		for key := range list {
			if vars[key] == nil {
				t.Errorf("allow-list entry %s names no package-level variable any more: remove it", key)
			}
		}
	}

	// Every assignment, increment or address taken whose target is (a part
	// of) a package-level variable.
	for _, pf := range files {
		imports := map[string]string{} // local name -> module-relative dir
		for _, imp := range pf.file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(p, modPath)
			if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
				continue
			}
			local := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imports[local] = strings.TrimPrefix(rel, "/")
		}
		samePkg := pf.file.Name.Name == pkgName[pf.dir]
		// local holds the names declared inside the function being
		// walked: such a name there is not the package's variable (a
		// function that shadows a package variable it also assigns
		// would escape the check; none does).
		var local map[string]bool
		target := func(e ast.Expr) (string, bool) {
			for {
				switch x := e.(type) {
				case *ast.ParenExpr:
					e = x.X
				case *ast.StarExpr:
					e = x.X
				case *ast.IndexExpr:
					e = x.X
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && !local[id.Name] {
						if dir, ok := imports[id.Name]; ok {
							key := dir + "." + x.Sel.Name
							return key, vars[key] != nil
						}
					}
					e = x.X
				case *ast.Ident:
					key := pf.dir + "." + x.Name
					if !samePkg || vars[key] == nil || local[x.Name] {
						return "", false
					}
					return key, true
				default:
					return "", false
				}
			}
		}
		report := func(e ast.Expr, how string) {
			if key, ok := target(e); ok {
				if _, mut := mutableGlobals[key]; !mut {
					t.Errorf("%s: %s package-level variable %s: make it a field of the value that uses it, set through options", fset.Position(e.Pos()), how, key)
				}
			}
		}
		for _, decl := range pf.file.Decls {
			local = declaredIn(decl)
			ast.Inspect(decl, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.AssignStmt:
					if x.Tok != token.DEFINE {
						for _, l := range x.Lhs {
							report(l, "assigns")
						}
					}
				case *ast.IncDecStmt:
					report(x.X, "changes")
				case *ast.RangeStmt:
					if x.Tok == token.ASSIGN {
						report(x.Key, "assigns")
						if x.Value != nil {
							report(x.Value, "assigns")
						}
					}
				case *ast.UnaryExpr:
					if x.Op == token.AND {
						report(x.X, "takes the address of")
					}
				}
				return true
			})
		}
	}
	if t.Failed() {
		keys := make([]string, 0, len(vars))
		for k := range vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Logf("package-level variables found: %s", strings.Join(keys, ", "))
	}
}

// mentionsSync reports whether e names a type of package sync or
// sync/atomic.
func mentionsSync(e ast.Expr) bool {
	found := false
	if e == nil {
		return false
	}
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "sync" || id.Name == "atomic") {
				found = true
			}
		}
		return !found
	})
	return found
}

func isOnceCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && onceInitialised.MatchString(id.Name+"."+sel.Sel.Name)
}

// declaredIn returns the names a function declares anywhere inside:
// receiver, parameters, results, variables, constants, and those of the
// function literals it holds; for a declaration other than a function, the
// names its function literals declare.
func declaredIn(decl ast.Decl) map[string]bool {
	names := map[string]bool{}
	fields := func(l *ast.FieldList) {
		if l == nil {
			return
		}
		for _, f := range l.List {
			for _, n := range f.Names {
				names[n.Name] = true
			}
		}
	}
	var scopes []ast.Node
	if fn, ok := decl.(*ast.FuncDecl); ok {
		fields(fn.Recv)
		scopes = append(scopes, fn)
	} else {
		ast.Inspect(decl, func(n ast.Node) bool {
			if fl, ok := n.(*ast.FuncLit); ok {
				scopes = append(scopes, fl)
				return false
			}
			return true
		})
	}
	for _, scope := range scopes {
		inspectDecls(scope, names, fields)
	}
	return names
}

func inspectDecls(scope ast.Node, names map[string]bool, fields func(*ast.FieldList)) {
	ast.Inspect(scope, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncType:
			fields(x.Params)
			fields(x.Results)
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						names[id.Name] = true
					}
				}
			}
		case *ast.RangeStmt:
			if x.Tok == token.DEFINE {
				for _, e := range []ast.Expr{x.Key, x.Value} {
					if id, ok := e.(*ast.Ident); ok {
						names[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range x.Names {
				names[id.Name] = true
			}
		case *ast.TypeSwitchStmt:
			if a, ok := x.Assign.(*ast.AssignStmt); ok {
				for _, l := range a.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						names[id.Name] = true
					}
				}
			}
		}
		return true
	})
}
