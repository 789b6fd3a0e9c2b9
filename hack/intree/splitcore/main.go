// Command splitcore writes the in-tree module (intree/) for a split-core
// Cluster Autoscaler tree, whose provider-agnostic packages live in the
// module sigs.k8s.io/cluster-autoscaler under pkg/. The rewrite is the one
// upstream made: an import of k8s.io/autoscaler/cluster-autoscaler/X moves
// to sigs.k8s.io/cluster-autoscaler/pkg/X unless the CA tree still holds
// package X itself (its providers, router, apis, version). Only import
// paths change, so intree/ stays the one adapter source for both
// generations.
//
//	splitcore -src intree -ca _out/ca-src -out _out/intree-split -root .
//
// It writes the Go files with import paths rewritten and a go.mod that
// requires the CA tree's own versions, including its replace directives;
// the caller gives it a go.sum and runs go mod tidy there (prepare.sh).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const (
	treeModule = "k8s.io/autoscaler/cluster-autoscaler"
	coreModule = "sigs.k8s.io/cluster-autoscaler"
	rootModule = "github.com/ca-providers/cluster-autoscaler-provider"
	ourModule  = rootModule + "/intree"
)

func main() {
	src := flag.String("src", "intree", "the in-tree module to rewrite")
	ca := flag.String("ca", "", "the split-core Cluster Autoscaler tree (required)")
	out := flag.String("out", "", "where to write the rewritten module (required; replaced)")
	root := flag.String("root", ".", "this repository's root module")
	query := flag.Bool("core", false, "print the core version the -ca tree requires and its replacement, if any, on one line each (nothing for a 1.36 tree), and write nothing")
	flag.Parse()
	if *query && *ca != "" {
		if err := printCore(*ca); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(2)
		}
		return
	}
	if *ca == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "error: -ca and -out are required: splitcore -src intree -ca <split-core CA tree> -out <dir>")
		os.Exit(2)
	}
	if err := run(*src, *ca, *out, *root); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(src, ca, out, root string) error {
	mod, err := readModFile(filepath.Join(ca, "go.mod"))
	if err != nil {
		return err
	}
	if mod.Module.Path != treeModule {
		return fmt.Errorf("%s: module %q, want %s", ca, mod.Module.Path, treeModule)
	}
	coreVersion := ""
	for _, r := range mod.Require {
		if r.Path == coreModule {
			coreVersion = r.Version
		}
	}
	if coreVersion == "" {
		return fmt.Errorf("%s/go.mod does not require %s: not a split-core tree", ca, coreModule)
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	moved := map[string]bool{}
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		b, err := rewriteFile(path, filepath.ToSlash(filepath.Join(filepath.Base(src), rel)), ca, moved)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return err
	}
	gomod, err := goMod(mod, ca, out, root)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "go.mod"), gomod, 0o644); err != nil {
		return err
	}
	paths := make([]string, 0, len(moved))
	for p := range moved {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	fmt.Printf("wrote %s from %s for %s %s: %d imports moved to %s/pkg (%s)\n",
		out, src, coreModule, coreVersion, len(paths), coreModule, strings.Join(paths, ", "))
	return nil
}

// printCore prints the core version ca's go.mod requires and the target of
// its replace directive for the core ("" for none), or nothing for a tree
// that does not require the core.
func printCore(ca string) error {
	mod, err := readModFile(filepath.Join(ca, "go.mod"))
	if err != nil {
		return err
	}
	for _, r := range mod.Require {
		if r.Path != coreModule {
			continue
		}
		replacement := ""
		for _, rp := range mod.Replace {
			if rp.Old.Path == coreModule {
				replacement = strings.TrimSpace(rp.New.Path + " " + rp.New.Version)
			}
		}
		fmt.Printf("%s\n%s\n", r.Version, replacement)
	}
	return nil
}

// rewriteFile returns the file with each moved import rewritten and a
// generated-code header; name is how the header names the source.
func rewriteFile(path, name, ca string, moved map[string]bool) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, err
		}
		np, ok := newPath(p, ca)
		if !ok {
			continue
		}
		spec.Path.Value = strconv.Quote(np)
		moved[strings.TrimPrefix(p, treeModule+"/")] = true
	}
	ast.SortImports(fset, f)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "// Code generated by hack/intree/splitcore from %s for a split-core Cluster Autoscaler. DO NOT EDIT.\n\n", name)
	if err := format.Node(&buf, fset, f); err != nil {
		return nil, err
	}
	return format.Source(buf.Bytes())
}

// newPath is p's path in a split-core tree, and whether it moved.
func newPath(p, ca string) (string, bool) {
	rel, ok := strings.CutPrefix(p, treeModule+"/")
	if !ok || holdsPackage(filepath.Join(ca, filepath.FromSlash(rel))) {
		return p, false
	}
	return coreModule + "/pkg/" + rel, true
}

// holdsPackage tells whether dir holds a Go package (a non-test .go file).
func holdsPackage(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			return true
		}
	}
	return false
}

type modFile struct {
	Module  struct{ Path string }
	Go      string
	Require []struct {
		Path     string
		Version  string
		Indirect bool
	}
	Replace []struct {
		Old struct{ Path, Version string }
		New struct{ Path, Version string }
	}
}

func readModFile(path string) (modFile, error) {
	var m modFile
	cmd := exec.Command("go", "mod", "edit", "-json", path)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return m, fmt.Errorf("go mod edit -json %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// goMod is the rewritten module's go.mod: our root module, the CA tree's
// requirements at its versions (so the tests see what the CA binary
// links), and its replace directives with local paths re-rooted at out.
func goMod(mod modFile, ca, out, root string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by hack/intree/splitcore from intree/go.mod for a split-core Cluster Autoscaler. DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "module %s\n\ngo %s\n\nrequire (\n\t%s v0.0.0\n", ourModule, mod.Go, rootModule)
	for _, r := range mod.Require {
		if r.Path == rootModule || r.Path == ourModule {
			continue
		}
		fmt.Fprintf(&b, "\t%s %s\n", r.Path, r.Version)
	}
	rootRel, err := relFrom(out, root)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, ")\n\nreplace %s => %s\n", rootModule, rootRel)
	for _, r := range mod.Replace {
		if r.Old.Path == rootModule || r.Old.Path == ourModule {
			continue
		}
		old := r.Old.Path
		if r.Old.Version != "" {
			old += " " + r.Old.Version
		}
		nw := r.New.Path
		if r.New.Version != "" {
			nw += " " + r.New.Version
		} else {
			// A local path, relative to the CA tree.
			abs := nw
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(ca, nw)
			}
			if nw, err = relFrom(out, abs); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(&b, "replace %s => %s\n", old, nw)
	}
	return b.Bytes(), nil
}

// relFrom is target as a local module path relative to dir.
func relFrom(dir, target string) (string, error) {
	ad, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	at, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(ad, at)
	if err != nil {
		return "", err
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, "../") && rel != ".." {
		rel = "./" + rel
	}
	return rel, nil
}
