package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestArchitectureImports: docs/architecture.md's package table has a row
// for every package of the module, and each row's "depends on" names
// exactly what the package's non-test files import: the module's packages
// by their path, other modules by a path element (`yaml`, `godog`), "-" for
// none. A parenthesis after a name is a remark.
func TestArchitectureImports(t *testing.T) {
	const root = "../.."
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module := regexp.MustCompile(`(?m)^module (\S+)$`).FindSubmatch(gomod)
	if module == nil {
		t.Fatal("go.mod names no module")
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs/architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := packageTable(string(doc))
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md has no table \"| package | holds | depends on |\"")
	}
	imports := moduleImports(t, root)
	for pkg := range imports {
		if _, ok := rows[pkg]; !ok {
			t.Errorf("docs/architecture.md's package table has no row for %s", pkg)
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(rows)) {
		imps, ok := imports[pkg]
		if !ok {
			t.Errorf("docs/architecture.md's package table has a row for %s, which is no package of the module", pkg)
			continue
		}
		if diff := dependsDiff(rows[pkg], imps, string(module[1])+"/", imports); diff != "" {
			t.Errorf("docs/architecture.md: %s depends on %s", pkg, diff)
		}
	}
}

// packageTable reads the rows of the package table: each package named in
// a row's first cell, with the names of its last cell.
func packageTable(doc string) map[string][]string {
	_, table, ok := strings.Cut(doc, "\n| package | holds | depends on |\n")
	if !ok {
		return nil
	}
	rows := map[string][]string{}
	remark := regexp.MustCompile(`\([^)]*\)`)
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(cells[1], "---") {
			continue
		}
		var deps []string
		for _, d := range strings.FieldsFunc(remark.ReplaceAllString(cells[len(cells)-2], ""), func(r rune) bool { return r == ',' || r == ';' }) {
			if d = strings.Trim(strings.TrimSpace(d), "`*"); d != "-" && d != "" {
				deps = append(deps, d)
			}
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			rows[m[1]] = deps
		}
	}
	return rows
}

// moduleImports parses the imports of every package's non-test files, by
// the package's directory relative to root (testdata, hidden directories
// and nested modules left out).
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if !slices.Contains(out[pkg], p) {
				out[pkg] = append(out[pkg], p)
			}
		}
		if out[pkg] == nil {
			out[pkg] = []string{}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dependsDiff compares a row's names with a package's imports: "" when
// they agree, else what the row lacks and what it names in vain. Standard
// library imports are left out; a name that is a package of the module
// stands for that package, any other for the imports of other modules that
// have it as a path element.
func dependsDiff(names, imports []string, prefix string, packages map[string][]string) string {
	var lacks, vain []string
	used := map[string]bool{}
	for _, imp := range imports {
		if own, ok := strings.CutPrefix(imp, prefix); ok {
			if !slices.Contains(names, own) {
				lacks = append(lacks, own)
			}
			used[own] = true
			continue
		}
		if !strings.Contains(strings.Split(imp, "/")[0], ".") {
			continue // the standard library
		}
		found := false
		for _, n := range names {
			if _, own := packages[n]; !own && strings.Contains("/"+imp+"/", "/"+n+"/") {
				found, used[n] = true, true
			}
		}
		if !found {
			lacks = append(lacks, imp)
		}
	}
	for _, n := range names {
		if !used[n] {
			vain = append(vain, n)
		}
	}
	if len(lacks) == 0 && len(vain) == 0 {
		return ""
	}
	slices.Sort(lacks)
	var parts []string
	if len(lacks) > 0 {
		parts = append(parts, "imports the row does not name: "+strings.Join(slices.Compact(lacks), ", "))
	}
	if len(vain) > 0 {
		parts = append(parts, "the row names what it does not import: "+strings.Join(vain, ", "))
	}
	return strings.Join(parts, "; ")
}
