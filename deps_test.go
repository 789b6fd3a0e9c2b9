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
