// Package wirevectors locates the externalgrpc wire vectors for tests. They
// are data made with the upstream client's own generated code and live in the
// repository's testdata/, so every clone runs the compatibility tests.
//
// An environment variable names another vector set (a newer CA's, say)
// instead; a relative path is taken from the module root. A directory that
// holds no cases.json fails the test: the vectors are never skipped.
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
	// Default is the directory relative to the module root.
	Default string
}

var (
	// Current are the vectors of CA 1.35 and later (34 messages).
	Current = Set{Env: "CAP_WIRE_VECTORS", Default: "testdata/externalgrpc"}
	// Legacy are the five messages as CA 1.34.1 and older encode them (CA 1.33.6).
	Legacy = Set{Env: "CAP_WIRE_VECTORS_LEGACY", Default: "testdata/externalgrpc-legacy"}
)

// Dir returns the directory holding s's cases.json: the one named by s.Env,
// or the repository's own. It fails t when that directory has no cases.json.
func Dir(t testing.TB, s Set) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv(s.Env)
	what := s.Env + "=" + dir
	switch {
	case dir == "":
		dir, what = filepath.Join(root, s.Default), "wire vectors"
	case !filepath.IsAbs(dir):
		dir = filepath.Join(root, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "cases.json")); err != nil {
		t.Fatalf("%s: %v", what, err)
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
