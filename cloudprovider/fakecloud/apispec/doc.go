// Package apispec checks what our thin clients send and what our fake clouds
// answer against the clouds' own published API descriptions, kept in
// testdata (sources and licenses in testdata/SOURCES.md): OpenAPI 3.0 for
// Vultr and Exoscale, validated with github.com/getkin/kin-openapi, and
// Volcengine's SDK metadata (parameter names and response fields, no types).
//
// A fake's Observe hook hands every exchange to Watch, so the tests that
// already drive each client check both directions. Schemas count as closed,
// and every known difference between a description and the live API is an
// Allowance in this package's <cloud>.go, with its source.
//
// Test code only: the production binary must not link it (deps_test.go).
package apispec

import "embed"

// descriptions are the clouds' API descriptions, embedded so the checks run
// from any directory.
//
//go:embed testdata/*.json testdata/*.yaml
var descriptions embed.FS
