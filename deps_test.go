package main

import (
	"os/exec"
	"strings"
	"testing"
)

// testOnlyPackage reports whether the production binary must not link path:
// the standard library's test packages, the conformance kit, the test-only
// gRPC clients, and the API-description checks with their OpenAPI library.
// The fakes --simulate serves live in cloudprovider/fakecloud and the
// providers' fakeapi packages, which import none of them.
func testOnlyPackage(path string) bool {
	return path == "testing" || strings.HasPrefix(path, "testing/") ||
		path == "net/http/httptest" ||
		strings.HasSuffix(path, "/cloudprovidertest") ||
		strings.Contains(path, "/grpctest") ||
		strings.HasSuffix(path, "/fakecloud/apispec") ||
		strings.HasPrefix(path, "github.com/getkin/kin-openapi/")
}

// TestBinaryLinksNoTestCode lists what the default build (every provider
// compiled in, so a superset of each single-provider build) links, and fails
// on any test-only package, naming the packages that import it.
func TestBinaryLinksNoTestCode(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH, so the binary's dependencies cannot be listed; run this test with a Go toolchain on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + strings.TrimSpace(string(ee.Stderr))
		}
		t.Fatalf("go list -deps .: %s", msg)
	}
	importers := map[string][]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for _, imp := range fields[1:] {
			if testOnlyPackage(imp) {
				importers[imp] = append(importers[imp], fields[0])
			}
		}
		if _, seen := importers[fields[0]]; testOnlyPackage(fields[0]) && !seen {
			importers[fields[0]] = nil
		}
	}
	for pkg, by := range importers {
		t.Errorf("the binary links test-only package %s (imported by %s); move that use into a _test.go file or a test-only package", pkg, strings.Join(by, ", "))
	}
}

// toolOnlyModules are modules the providers must not require, not even
// through another module: the upstream Cluster Autoscaler can build our
// packages in with this module as a dependency, and Go's version selection
// then takes every requirement of our module graph into CA's build. Each
// value says why it must stay out.
func toolOnlyModules() map[string]string {
	return map[string]string{
		"helm.sh/helm/":                          "Helm raises controller-runtime and client-go for CA; only hack/chart and test/ use it",
		"sigs.k8s.io/kustomize/":                 "only the examples' tests in test/ use it",
		"sigs.k8s.io/controller-runtime":         "its releases need the newest client-go, which breaks CA's",
		"k8s.io/client-go":                       "CA brings its own, at the release it is built with",
		"github.com/google/go-containerregistry": "only hack/container uses it",
	}
}

// TestModuleGraphHoldsNoToolDependencies reads this module's requirement
// graph, the one a module requiring ours takes into its version selection,
// and fails on a module of toolOnlyModules, naming the requirement that
// brings it in.
func TestModuleGraphHoldsNoToolDependencies(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH, so the module graph cannot be read; run this test with a Go toolchain on PATH")
	}
	out, err := exec.Command(goTool, "mod", "graph").Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + strings.TrimSpace(string(ee.Stderr))
		}
		t.Fatalf("go mod graph: %s", msg)
	}
	edges := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(edges) < 10 {
		t.Fatalf("go mod graph lists only %d requirements", len(edges))
	}
	for _, edge := range edges {
		from, to, ok := strings.Cut(edge, " ")
		if !ok {
			t.Fatalf("go mod graph: unexpected line %q", edge)
		}
		for prefix, why := range toolOnlyModules() {
			if strings.HasPrefix(to, prefix) {
				t.Errorf("%s requires %s: %s; move the code that needs it into a nested module (see MODULES in the Makefile)", from, to, why)
			}
		}
	}
}
