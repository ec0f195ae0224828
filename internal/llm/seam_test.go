package llm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOneSeam: in this package's code, StatLogger.Record and
// Processor.Process are called from pipeline.handle and nowhere else, and
// both front ends' step paths call it, so the two cannot drift apart in
// what they record.
func TestOneSeam(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := map[string][]string{} // method → enclosing functions
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil {
				name = types(fn.Recv.List[0].Type) + "." + name
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Record" || sel.Sel.Name == "Process" || sel.Sel.Name == "handle") {
						calls[sel.Sel.Name] = append(calls[sel.Sel.Name], name)
					}
				}
				return true
			})
		}
	}
	for _, m := range []string{"Record", "Process"} {
		if got := calls[m]; len(got) != 1 || got[0] != "pipeline.handle" {
			t.Errorf("%s is called from %v; only pipeline.handle may call it", m, got)
		}
	}
	// Both front ends go through it.
	for _, caller := range []string{"Engine.Step", "AsyncEngine.handle"} {
		if !slices.Contains(calls["handle"], caller) {
			t.Errorf("%s does not call the seam (handle callers: %v)", caller, calls["handle"])
		}
	}
}

func types(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}
