package skills

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/workspace"
)

// shapesDir, when set, writes the generated collection there as well, so
// another build of quire can load the same files (`quire skills list
// --dir DIR --json`) and the load rates can be compared.
var shapesDir = flag.String("shapes.dir", "", "also write the generated SKILL.md collection to this directory")

// skillShape is one way SKILL.md files are written in public collections
// (Anthropic's skills, OpenClaw's bundled skills and ClawHub, Claude Code
// plugins): a layout, a front matter, and whether Quire must load it.
type skillShape struct {
	name  string
	files func(slug string) map[string]string // path in the tier → content
	loads bool
	clean bool // loads without any finding
}

func fm(lines ...string) string {
	return "---\n" + strings.Join(lines, "\n") + "\n---\n# Skill\n\nSteps.\n"
}

// ecosystemShapes are the shapes the generator mixes.
var ecosystemShapes = []skillShape{
	{name: "plain", loads: true, clean: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: "+s, "description: Use when the user asks about "+s+".")}
	}},
	{name: "spec keys (license, compatibility, allowed-tools, metadata)", loads: true, clean: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: "+s, "description: Convert files.", "license: Apache-2.0", "compatibility: Requires git and network access", "allowed-tools: Bash(git:*) Read", "metadata:", "  author: example-org", "  version: \"1.0\"")}
	}},
	{name: "Claude Code keys", loads: true, clean: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: "+s, "description: Review a pull request.", "argument-hint: \"[pr-number]\"", "disable-model-invocation: true", "user-invocable: true", "model: sonnet", "context: fork", "agent: Explore", "allowed-tools:", "  - Read", "  - Grep")}
	}},
	{name: "OpenClaw keys, one-line JSON metadata", loads: true, clean: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: "+s, "description: \"GitHub operations via `gh`: issues, PRs, CI runs.\"", "homepage: https://example.com/"+s, "user-invocable: true", "command-dispatch: tool", "command-tool: exec", "command-arg-mode: raw", `metadata: {"openclaw": {"emoji": "🐙", "requires": {"bins": ["gh"]}, "primaryEnv": "GH_TOKEN"}}`)}
	}},
	{name: "OpenClaw JSON5 metadata over several lines", loads: true, clean: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: "+s, "description: Generate images.", "metadata:", "  {", `    "openclaw":`, "      {", `        "requires": { "bins": ["uv"], "env": ["API_KEY"] },`, `        "primaryEnv": "API_KEY",`, "      },", "  }")}
	}},
	{name: "ClawHub version and surrogate-pair emoji", loads: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: "+s, "description: Analyse the architecture of a code base.", "version: 1.8.2", "triggers:", "  - architecture", `metadata: {"openclaw": {"homepage": "https://example.com", "emoji": "\ud83c\udfd7\ufe0f"}}`, "source: some-marketplace")}
	}},
	{name: "name differs from the directory", loads: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: "+s+"-skill", "description: Renamed in the front matter.")}
	}},
	{name: "title-case name", loads: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: "+strings.ToUpper(s[:1])+s[1:]+" Helper", "description: A human-readable name.")}
	}},
	{name: "grouped layout skills/<group>/<slug>", loads: true, clean: true, files: func(s string) map[string]string {
		return map[string]string{"group-" + s[len(s)-1:] + "/" + s + "/SKILL.md": fm("name: "+s, "description: Grouped by topic.")}
	}},
	{name: "lower-case skill.md", loads: true, files: func(s string) map[string]string {
		return map[string]string{s + "/skill.md": fm("name: "+s, "description: Named skill.md.")}
	}},
	{name: "folded description, quoted colon, CRLF and BOM", loads: true, clean: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": "\ufeff" + strings.ReplaceAll(fm("name: "+s, "description: >", "  Use when: the user wants", "  a long description.", "license: 'MIT'"), "\n", "\r\n")}
	}},
	{name: "unknown keys (tags, author)", loads: true, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: "+s, "description: Has tags.", "tags: [a, b]", "author: someone")}
	}},
	{name: "double hyphen in the name", loads: false, files: func(s string) map[string]string {
		return map[string]string{s + "--x/SKILL.md": fm("name: "+s+"--x", "description: Breaks the spec's name rule.")}
	}},
	{name: "no description", loads: false, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": fm("name: " + s)}
	}},
	{name: "no front matter", loads: false, files: func(s string) map[string]string {
		return map[string]string{s + "/SKILL.md": "# " + s + "\n\nJust instructions.\n"}
	}},
}

// TestEcosystemShapes loads a generated collection with every shape and
// holds each to its expected outcome; with -v it prints the load rate
// (issue 16: report the load rate before and after).
func TestEcosystemShapes(t *testing.T) {
	const perShape = 20
	ws := fstest.MapFS{}
	want := map[string]skillShape{} // slug → shape
	total := 0
	for i, sh := range ecosystemShapes {
		for j := range perShape {
			slug := fmt.Sprintf("s%02d-%02d", i, j)
			for p, content := range sh.files(slug) {
				ws["skills/"+p] = &fstest.MapFile{Data: []byte(content)}
			}
			want[slug] = sh
			total++
		}
	}
	if *shapesDir != "" {
		for p, f := range ws {
			full := filepath.Join(*shapesDir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	set := Load(1, Options{Workspace: ws, NoBuiltin: true}.Sources())
	findings := map[string]int{}
	for _, p := range set.Problems() {
		findings[strings.Split(strings.TrimPrefix(p.Path, "skills/"), "/")[0]]++
	}
	loaded := 0
	for _, sk := range set.Skills() {
		loaded++
		slug := strings.TrimSuffix(sk.Slug, "--x")
		if sh := want[slug]; !sh.loads {
			t.Errorf("%s (%s) loaded; it should not", sk.Slug, sh.name)
		}
	}
	byShape := map[string]int{}
	for _, sk := range set.Skills() {
		byShape[want[sk.Slug].name]++
	}
	var lines []string
	for _, sh := range ecosystemShapes {
		n := byShape[sh.name]
		if sh.loads && n != perShape {
			t.Errorf("shape %q: %d of %d loaded", sh.name, n, perShape)
		}
		if sh.clean {
			for j := range perShape {
				dir := fmt.Sprintf("s%02d-%02d", indexOf(sh.name), j)
				if strings.HasPrefix(sh.name, "grouped") {
					dir = "group-" + dir[len(dir)-1:]
				}
				if findings[dir] > 0 {
					t.Errorf("shape %q: %d findings on %s, want none: %v", sh.name, findings[dir], dir, set.Problems())
					break
				}
			}
		}
		lines = append(lines, fmt.Sprintf("%-60s %2d/%d", sh.name, n, perShape))
	}
	sort.Strings(lines)
	t.Logf("loaded %d of %d SKILL.md files (%.1f %%):\n%s", loaded, total, 100*float64(loaded)/float64(total), strings.Join(lines, "\n"))
}

func indexOf(shape string) int {
	for i, sh := range ecosystemShapes {
		if sh.name == shape {
			return i
		}
	}
	return -1
}

// Reading a tier straight from disk gives what reading it through its
// fs.FS gives: the same skills, bodies and problems, an oversized file
// included.
func TestDiskReadMatchesFS(t *testing.T) {
	dir := t.TempDir()
	for i, sh := range ecosystemShapes {
		for p, content := range sh.files(fmt.Sprintf("s%02d", i)) {
			full := filepath.Join(dir, "skills", filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	big := filepath.Join(dir, "skills", "big", "SKILL.md")
	os.MkdirAll(filepath.Dir(big), 0o755)
	os.WriteFile(big, []byte(skillMD("big", "Large.", strings.Repeat("x", MaxSkillBytes))), 0o644)
	exact := filepath.Join(dir, "skills", "exact", "SKILL.md") // ends exactly at the read buffer's size
	os.MkdirAll(filepath.Dir(exact), 0o755)
	head := skillMD("exact", "Exactly 8 KiB.", "")
	os.WriteFile(exact, []byte(head+strings.Repeat("y", 8<<10-len(head))), 0o644)

	disk := Options{WorkspaceDir: dir, NoBuiltin: true}.Sources()
	if !disk[0].disk {
		t.Fatal("the workspace tier is not read from disk")
	}
	viaFS := Options{Workspace: os.DirFS(dir), WorkspaceDir: dir, NoBuiltin: true}.Sources()
	a, b := Load(1, disk), Load(1, viaFS)
	if len(a.Skills()) != len(b.Skills()) || len(a.Skills()) < len(ecosystemShapes)-3 {
		t.Fatalf("disk loaded %d skills, fs.FS %d", len(a.Skills()), len(b.Skills()))
	}
	for i := range a.Skills() {
		x, y := *a.Skills()[i], *b.Skills()[i]
		if !reflect.DeepEqual(x, y) {
			t.Errorf("skill %s differs:\n%+v\n%+v", x.Slug, x, y)
		}
	}
	if !reflect.DeepEqual(a.Problems(), b.Problems()) {
		t.Errorf("problems differ:\n%v\n%v", a.Problems(), b.Problems())
	}
	if sk, ok := a.Skill("exact"); !ok || len(sk.Body) != 8<<10-len(head) {
		t.Errorf("a file of exactly 8 KiB: %v", ok)
	}
	if !slices.ContainsFunc(a.Problems(), func(p workspace.Problem) bool { return p.Code == "skill-too-large" }) {
		t.Errorf("the oversized file is not reported")
	}
}
