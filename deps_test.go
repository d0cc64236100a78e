package quire_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/quirehq/quire"

// The import graph of Quire, as it is and must stay. Each unit is a
// top-level package tree, except that each package under internal/ is a
// unit of its own. Downward, with the edges within a layer:
//
//	cmd → daemon, lsp
//	daemon → gitsync, llm, agent (and everything below)
//	llm → agent (and everything below): a chat-completions client and
//	what Quire asks a model (llm/draft), never git
//	lsp → agent (and everything below), never gitsync: no git plumbing
//	agent → skills, memory, templates, prompt: what an agent is
//	gitsync → workspace: git only, policy comes in as functions
//	skills → memory (BM25), prompt → workspace
//	templates → prompt → workspace, the vocabulary, which imports nothing
//
// internal/fswatch (the one file-system watcher), internal/xdg (the
// machine's directories), internal/flock (locks on files) and
// internal/replace (a finished file put in another's place) and
// internal/mapfile (a file mapped or read whole) import
// nothing of Quire's; internal/testenv is
// for tests only, so no unit may import it. A unit may import only the
// units listed for it; anything not listed is a new unit and must be
// added here deliberately.
var allowed = map[string][]string{
	"workspace":        {},
	"internal/fswatch": {},
	"internal/xdg":     {},
	"internal/testenv": {},
	"internal/dist":    {}, // the release tool (make dist): imports nothing of Quire's
	"internal/flock":   {},
	"internal/replace": {},
	"internal/mapfile": {},
	"prompt":           {"workspace"},
	"templates":        {"prompt", "workspace"},
	"memory":           {"workspace", "internal/replace", "internal/mapfile"},
	"skills":           {"memory", "prompt", "workspace", "internal/fswatch", "internal/replace", "internal/mapfile"},
	"agent":            {"skills", "memory", "prompt", "templates", "workspace", "internal/replace", "internal/mapfile"},
	"gitsync":          {"workspace", "internal/fswatch", "internal/flock", "internal/replace", "internal/mapfile"},
	"llm":              {"agent", "skills", "memory", "prompt", "templates", "workspace", "internal/replace", "internal/mapfile"},
	"lsp":              {"agent", "skills", "memory", "prompt", "templates", "workspace", "internal/fswatch", "internal/xdg", "internal/replace", "internal/mapfile"},
	"daemon":           {"gitsync", "llm", "agent", "skills", "memory", "prompt", "templates", "workspace", "internal/fswatch", "internal/xdg", "internal/flock", "internal/replace", "internal/mapfile"},
	"cmd":              {"daemon", "lsp", "gitsync", "llm", "agent", "skills", "memory", "prompt", "templates", "workspace", "internal/fswatch", "internal/xdg", "internal/flock", "internal/replace", "internal/mapfile"},
}

// pure units may not reach the network, a database driver or other
// programs. memory/openai (HTTP embedders) and memory/pgstore (PostgreSQL)
// are the sanctioned exceptions inside memory.
var pure = map[string]bool{"workspace": true, "prompt": true, "skills": true, "memory": true, "templates": true, "agent": true}

var impureImports = []string{"net", "net/http", "os/exec", "database/sql", "github.com/jackc/pgx/v5", "github.com/pgvector/pgvector-go"}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func TestImportGraph(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []listedPackage
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list returned %d packages; expected the whole module", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// The check itself: each kind of violating import is reported.
func TestImportGraphViolations(t *testing.T) {
	tests := []struct {
		name string
		pkg  listedPackage
		want string
	}{
		{"the vocabulary imports prompt", listedPackage{ImportPath: module + "/workspace", Imports: []string{module + "/prompt"}}, "workspace may only import []"},
		{"the watcher imports skills", listedPackage{ImportPath: module + "/internal/fswatch", Imports: []string{module + "/skills"}}, "internal/fswatch may only import []"},
		{"prompt imports gitsync", listedPackage{ImportPath: module + "/prompt", Imports: []string{module + "/gitsync"}}, "prompt may only import [workspace]"},
		{"gitsync imports daemon", listedPackage{ImportPath: module + "/gitsync", Imports: []string{module + "/daemon/api"}}, "gitsync may only import"},
		{"gitsync imports prompt", listedPackage{ImportPath: module + "/gitsync", Imports: []string{module + "/prompt"}}, "gitsync may only import"},
		{"gitsync imports agent", listedPackage{ImportPath: module + "/gitsync", Imports: []string{module + "/agent"}}, "gitsync may only import"},
		{"agent imports gitsync", listedPackage{ImportPath: module + "/agent", Imports: []string{module + "/gitsync"}}, "agent may only import"},
		{"lsp imports gitsync", listedPackage{ImportPath: module + "/lsp", Imports: []string{module + "/gitsync"}}, "lsp may only import"},
		{"memory imports skills", listedPackage{ImportPath: module + "/memory", Imports: []string{module + "/skills"}}, "memory may only import"},
		{"lsp imports daemon", listedPackage{ImportPath: module + "/lsp", Imports: []string{module + "/daemon"}}, "lsp may only import"},
		{"a package imports the test helpers", listedPackage{ImportPath: module + "/daemon", Imports: []string{module + "/internal/testenv"}}, "daemon may only import"},
		{"a new tree", listedPackage{ImportPath: module + "/extra"}, `unit "extra" is not in the table`},
		{"a new internal package", listedPackage{ImportPath: module + "/internal/extra"}, `unit "internal/extra" is not in the table`},
		{"skills reaches the network", listedPackage{ImportPath: module + "/skills", Deps: []string{"net/http"}}, "must stay pure"},
		{"agent runs programs", listedPackage{ImportPath: module + "/agent", Deps: []string{"os/exec"}}, "must stay pure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := violations([]listedPackage{tt.pkg})
			if len(got) != 1 || !strings.Contains(got[0], tt.want) {
				t.Fatalf("violations = %q, want one containing %q", got, tt.want)
			}
		})
	}
	ok := listedPackage{ImportPath: module + "/gitsync", Imports: []string{module + "/workspace", module + "/internal/fswatch", "fmt"}}
	if got := violations([]listedPackage{ok}); len(got) != 0 {
		t.Fatalf("an allowed import is reported: %q", got)
	}
}

// violations lists every import of pkgs the graph does not allow.
func violations(pkgs []listedPackage) []string {
	var out []string
	for _, p := range pkgs {
		unit := unitOf(p.ImportPath)
		if unit == "" {
			continue // the module root: only tests live there
		}
		ok, known := allowed[unit]
		if !known {
			out = append(out, fmt.Sprintf("%s: unit %q is not in the table of deps_test.go", p.ImportPath, unit))
			continue
		}
		for _, imp := range p.Imports {
			other := unitOf(imp)
			if other == "" || other == unit || slices.Contains(ok, other) {
				continue
			}
			out = append(out, fmt.Sprintf("%s imports %s: %s may only import %v", p.ImportPath, imp, unit, ok))
		}
		if pure[unit] && !sanctioned(p.ImportPath) {
			for _, dep := range p.Deps {
				if slices.Contains(impureImports, dep) {
					out = append(out, fmt.Sprintf("%s depends on %s, but %s must stay pure (no network, database or os/exec)", p.ImportPath, dep, unit))
				}
			}
		}
	}
	return out
}

// sanctioned reports whether pkg is a package allowed to break purity.
func sanctioned(pkg string) bool {
	return strings.HasPrefix(pkg, module+"/memory/pgstore") || strings.HasPrefix(pkg, module+"/memory/openai")
}

// unitOf returns the unit of a Quire import path: its top-level folder,
// or internal/<name> for a package under internal/; "" for anything
// outside the module (or the module root itself).
func unitOf(path string) string {
	rest, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return ""
	}
	top, below, _ := strings.Cut(rest, "/")
	if top == "internal" {
		name, _, _ := strings.Cut(below, "/")
		return top + "/" + name
	}
	return top
}
