package cloudprovider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// outcomeFreeSentinels are the sentinels an error may wrap without stating
// an outcome: ErrConfig ends the process at start-up, never a mutation.
var outcomeFreeSentinels = map[string]bool{"ErrConfig": true}

// TestErrorsStateTheirOutcome walks the non-test code under cloudprovider/
// and fails on the two shapes that make an error whose outcome is unknown by
// omission: fmt.Errorf wrapping one of our class sentinels without
// Refusal or WithOutcome around it (use Errorf, which states refused, or
// state the outcome), and an APIError built outside cloudhttp (use
// cloudhttp.AnswerError, which states the answer's outcome).
func TestErrorsStateTheirOutcome(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		for _, problem := range outcomeProblems(f, filepath.Dir(path) == ".", filepath.ToSlash(filepath.Dir(path)) == "cloudhttp") {
			t.Errorf("%s: %s", fset.Position(problem.pos), problem.msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("walked %d files; the walk is not reading the providers", files)
	}
}

type outcomeProblem struct {
	pos token.Pos
	msg string
}

// outcomeProblems finds the shapes TestErrorsStateTheirOutcome refuses in
// f; inContract says f is package cloudprovider itself (its sentinels are
// bare names), inHTTP that f is package cloudhttp (where AnswerError lives).
func outcomeProblems(f *ast.File, inContract, inHTTP bool) []outcomeProblem {
	sentinel := func(e ast.Expr) (string, bool) {
		var name string
		switch x := e.(type) {
		case *ast.SelectorExpr:
			if pkg, ok := x.X.(*ast.Ident); !ok || pkg.Name != "cloudprovider" {
				return "", false
			}
			name = x.Sel.Name
		case *ast.Ident:
			if !inContract {
				return "", false
			}
			name = x.Name
		default:
			return "", false
		}
		return name, strings.HasPrefix(name, "Err") && !outcomeFreeSentinels[name]
	}
	calls := func(e ast.Expr, pkg string, names ...string) bool {
		c, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		var fn string
		switch x := c.Fun.(type) {
		case *ast.SelectorExpr:
			if p, ok := x.X.(*ast.Ident); !ok || p.Name != pkg {
				return false
			}
			fn = x.Sel.Name
		case *ast.Ident:
			if pkg != "cloudprovider" || !inContract {
				return false
			}
			fn = x.Name
		}
		for _, n := range names {
			if fn == n {
				return true
			}
		}
		return false
	}
	var out []outcomeProblem
	stated := map[ast.Expr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			if calls(x, "cloudprovider", "Refusal", "WithOutcome") && len(x.Args) > 0 {
				stated[x.Args[0]] = true
			}
			if calls(x, "fmt", "Errorf") && !stated[x] {
				for _, a := range x.Args[1:] {
					if name, ok := sentinel(a); ok {
						out = append(out, outcomeProblem{x.Pos(), "fmt.Errorf wraps " + name + " without stating an outcome: use cloudprovider.Errorf (refused: made without the cloud) or wrap it in cloudprovider.Refusal/WithOutcome"})
					}
				}
			}
		case *ast.CompositeLit:
			if inHTTP {
				return true
			}
			if s, ok := x.Type.(*ast.SelectorExpr); ok && s.Sel.Name == "APIError" {
				if p, ok := s.X.(*ast.Ident); ok && p.Name == "cloudhttp" {
					out = append(out, outcomeProblem{x.Pos(), "cloudhttp.APIError built by hand: use cloudhttp.AnswerError, the one constructor that states the answer's outcome"})
				}
			}
		}
		return true
	})
	return out
}

// TestOutcomeProblemsFindsBothShapes: the check itself flags what it must
// and passes what states an outcome.
func TestOutcomeProblemsFindsBothShapes(t *testing.T) {
	t.Parallel()
	src := `package p
func f() {
	_ = fmt.Errorf("x: %w", cloudprovider.ErrInvalidArgument)
	_ = cloudprovider.Refusal(fmt.Errorf("x: %w", cloudprovider.ErrInvalidArgument))
	_ = cloudprovider.WithOutcome(fmt.Errorf("x: %w: %w", mine, cloudprovider.ErrUnavailable), cloudprovider.MutationUnknown)
	_ = cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "x")
	_ = fmt.Errorf("x: %w", err)
	_ = fmt.Errorf("x: %w", cloudprovider.ErrConfig)
	_ = &cloudhttp.APIError{Status: 400}
}`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := outcomeProblems(f, false, false)
	if len(got) != 2 || !strings.Contains(got[0].msg, "ErrInvalidArgument") || !strings.Contains(got[1].msg, "APIError") {
		t.Fatalf("found %d problems %+v, want the bare wrap and the hand-built APIError", len(got), got)
	}
	if n := len(outcomeProblems(f, false, true)); n != 1 {
		t.Fatalf("inside cloudhttp: %d problems, want only the bare wrap", n)
	}
}
