package quire_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/quirehq/quire"

// layers lists, for each top-level package tree, which other Quire trees it
// may import. Imports flow downward: cmd → daemon, lsp → gitsync → skills →
// memory → templates → prompt. Anything not listed here is a new top-level
// tree and must be added deliberately.
var layers = map[string][]string{
	"prompt":    {},
	"templates": {"prompt"},
	"memory":    {"prompt", "templates"},
	"skills":    {"prompt", "templates", "memory"},
	"gitsync":   {"prompt", "templates", "memory", "skills"},
	"lsp":       {"prompt", "templates", "memory", "skills", "gitsync"},
	"daemon":    {"prompt", "templates", "memory", "skills", "gitsync"},
	"cmd":       {"prompt", "templates", "memory", "skills", "gitsync", "lsp", "daemon"},
}

// pure trees may not reach the network, a database driver or other programs.
// memory/openai (HTTP embedders) and memory/pgstore (PostgreSQL) are the
// sanctioned exceptions inside memory.
var pure = map[string]bool{"prompt": true, "skills": true, "memory": true, "templates": true}

var impureImports = []string{"net", "net/http", "os/exec", "database/sql", "github.com/jackc/pgx/v5", "github.com/pgvector/pgvector-go"}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func TestImportLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		seen++
		tree := treeOf(p.ImportPath)
		if tree == "" {
			continue // the module root: only tests live there
		}
		allowed, ok := layers[tree]
		if !ok {
			t.Errorf("%s: top-level tree %q is not in the layer table of deps_test.go", p.ImportPath, tree)
			continue
		}
		for _, imp := range p.Imports {
			other := treeOf(imp)
			if other == "" || other == tree {
				continue
			}
			if !contains(allowed, other) {
				t.Errorf("%s imports %s: %s may only import %v", p.ImportPath, imp, tree, allowed)
			}
		}
		if pure[tree] && !sanctioned(p.ImportPath) {
			for _, dep := range p.Deps {
				for _, bad := range impureImports {
					if dep == bad {
						t.Errorf("%s depends on %s, but %s must stay pure (no network, database or os/exec)", p.ImportPath, dep, tree)
					}
				}
			}
		}
	}
	if seen < 2 {
		t.Fatalf("go list returned %d packages; expected the whole module", seen)
	}
}

// sanctioned reports whether pkg is a package allowed to break purity.
func sanctioned(pkg string) bool {
	return strings.HasPrefix(pkg, module+"/memory/pgstore") || strings.HasPrefix(pkg, module+"/memory/openai")
}

// treeOf returns the top-level folder of a Quire import path, or "" for
// anything outside the module (or the module root itself).
func treeOf(path string) string {
	if !strings.HasPrefix(path, module+"/") {
		return ""
	}
	rest := strings.TrimPrefix(path, module+"/")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
