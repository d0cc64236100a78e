package quire_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Workspace file names have one owner, the workspace package: elsewhere a
// name is spelled through its constants (workspace.SoulFile,
// workspace.DailyLog …), so a rule about a file is changed in one place.
// This test finds the string literals outside workspace that spell one:
// a workspace file name, or a path or path element that starts with one
// of its directories (in a path.Join or filepath.Join, or with a slash).

// fileNames are the literals no package but workspace may hold.
var fileNames = []string{"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "USER_PREDEFINED.md",
	"HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md", "memory.md", "SKILL.md", "agent.yaml", "agent.yml", ".agents/skills",
	"DELEGATION.md", "TEAM.md", "AVAILABILITY.md", "CULTURE.md"}

// dirNames are workspace directories: a literal "memory/…" or a "memory"
// passed to a Join is one of them spelled again.
var dirNames = []string{"memory", "users", "rooms", "skills", ".agents", "_shared"}

// nameExempt are the files whose literals are data, not rules: test
// fixtures shared by tests (prompttest, storetest) and the workspace
// package itself.
func nameExempt(rel string) bool {
	return strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "workspace/") ||
		strings.HasPrefix(rel, "prompt/prompttest/") || strings.HasPrefix(rel, "memory/storetest/") ||
		strings.Contains(rel, "node_modules/") || strings.HasPrefix(rel, "editors/")
}

func TestNoWorkspaceNameLiterals(t *testing.T) {
	var found []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || nameExempt(filepath.ToSlash(p)) {
			return err
		}
		found = append(found, nameLiterals(t, p)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// nameLiterals lists the workspace names spelled as literals in the Go
// file p, as "file:line: literal".
func nameLiterals(t *testing.T, p string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	report := func(lit *ast.BasicLit) {
		out = append(out, fset.Position(lit.Pos()).String()+": "+lit.Value+" spells a workspace name: use the workspace package's constant")
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if n.Tag != nil { // a JSON key "skills" is not a directory
				inspectType(n.Type, report)
				return false
			}
		case *ast.CallExpr:
			if isJoin(n.Fun) {
				for _, a := range n.Args {
					if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, _ := strconv.Unquote(lit.Value); contains(dirNames, s) {
							report(lit)
						}
					}
				}
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING && spellsName(n.Value) {
				report(n)
			}
		}
		return true
	})
	return out
}

// inspectType reports the names spelled in a field's type, not its tag.
func inspectType(typ ast.Expr, report func(*ast.BasicLit)) {
	ast.Inspect(typ, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && spellsName(lit.Value) {
			report(lit)
		}
		return true
	})
}

func spellsName(quoted string) bool {
	s, err := strconv.Unquote(quoted)
	if err != nil {
		return false
	}
	if contains(fileNames, s) {
		return true
	}
	for _, d := range dirNames {
		if strings.HasPrefix(s, d+"/") {
			return true
		}
	}
	return false
}

func isJoin(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Join" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "path" || pkg.Name == "filepath")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
