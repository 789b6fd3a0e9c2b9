// Package wirevectors locates the externalgrpc wire vectors for tests. They
// are made with the upstream client's own generated code and live in the
// shared folder beside the repository, not in it.
//
// Each directory comes from an environment variable, with a default beside
// the module root. go test caches a result together with the variables the
// test read through os.Getenv/LookupEnv, so a skip cached while the folder
// was missing is redone once the variable is set; .ci/run sets both whenever
// the shared folder is there. A directory named by the variable must exist:
// the test fails instead of skipping.
package wirevectors

import (
	"os"
	"path/filepath"
	"testing"
)

// Set is one generation of vectors.
type Set struct {
	// Env names the variable that overrides the directory.
	Env string
	// Default is the directory relative to the parent of the module root.
	Default string
}

var (
	// Current are the vectors of CA 1.35 and later (34 messages).
	Current = Set{Env: "CAP_WIRE_VECTORS", Default: "shared/testdata/externalgrpc"}
	// Legacy are the five messages as CA 1.34.1 and older encode them (CA 1.33.6).
	Legacy = Set{Env: "CAP_WIRE_VECTORS_LEGACY", Default: "shared/testdata/externalgrpc-legacy"}
)

// Dir returns the directory holding s's cases.json. It skips t when the
// default directory is absent and fails t when the one named by s.Env is.
func Dir(t testing.TB, s Set) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, explicit := os.LookupEnv(s.Env)
	switch {
	case !explicit || dir == "":
		dir, explicit = filepath.Join(filepath.Dir(root), s.Default), false
	case !filepath.IsAbs(dir):
		dir = filepath.Join(root, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "cases.json")); err != nil {
		if explicit {
			t.Fatalf("%s=%s: %v", s.Env, dir, err)
		}
		t.Skipf("wire vectors not found at %s (the shared folder beside the repository; or set %s); skipping", dir, s.Env)
	}
	return dir
}

// moduleRoot is the nearest directory above the test's working directory
// (its package) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
