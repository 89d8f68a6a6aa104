package fakeserver

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"strings"
	"testing"
)

// TestHandlersConsultNoSwitch: the route handlers (routeTable's) and
// invoke, which both invoke routes end in, consult no switch themselves:
// each decision a switch can bend is a policy function named for it, and
// each deviation that only changes what is read or written is a row of a
// rewrite table (docs/architecture.md, "Where a new thing goes"). So a
// handler reads as the spec's steps.
func TestHandlersConsultNoSwitch(t *testing.T) {
	funcs := map[string]*ast.FuncDecl{}
	var table *ast.CompositeLit
	fset := gotoken.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				funcs[d.Name.Name] = d
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if vs, ok := sp.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "routeTable" {
						table, _ = vs.Values[0].(*ast.CompositeLit)
					}
				}
			}
		}
	}
	if table == nil {
		t.Fatal("no routeTable")
	}
	handlers := map[string]bool{"invoke": true}
	for _, el := range table.Elts {
		if row, ok := el.(*ast.CompositeLit); ok && len(row.Elts) == 2 {
			if sel, ok := row.Elts[1].(*ast.SelectorExpr); ok {
				handlers[sel.Sel.Name] = true
			}
		}
	}
	if len(handlers) < 10 {
		t.Fatalf("found only %d handlers in routeTable", len(handlers))
	}
	for name := range handlers {
		fd := funcs[name]
		if fd == nil {
			t.Errorf("handler %s not found", name)
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "defect" || sel.Sel.Name == "variant") {
					t.Errorf("%s: handler %s consults a switch itself; make it a policy function's decision or a rewrite row",
						fset.Position(c.Pos()), name)
				}
			}
			return true
		})
	}
}
