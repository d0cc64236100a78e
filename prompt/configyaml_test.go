package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/quirehq/quire/workspace"
)

// simpleYAMLCases are agent.yaml texts parseSimpleYAML takes (true) or
// leaves to yaml.v3 (false).
var simpleYAMLCases = []struct {
	text   string
	simple bool
}{
	{"name: a\n", true},
	{"name: a", true},
	{"# only\nname: a\n\n   \n# more\ntype: open\n", true},
	{"name:    spaced\n", true},
	{"identity: \"You are Lúcia, #1 in Graça.\"\n", true},
	{"identity: \"  padded  \"\n", true},
	{"identity: \"\"\n", true},
	{"order: [AGENTS.md, SOUL.md,USER.md ,  TOOLS.md]\n", true},
	{"order: []\nskills: [ ]\n", true},
	{"skills: [1, 2.5, true, null, 0x1f, 2001-12-14]\n", true},
	{"budget:\n  per_file: 12000\n  # a comment\n\n  total: 24000\nname: x\n", true},
	{"budget:\n    per_file: 1\n    head_ratio: 0.7\nconsolidate:\n # c\n  every: 2h\n", true},
	{"write_limit_bytes: 16384\nmemory_text_weight: 0.5e1\nx1: 3\n", true},
	{"name: a\nname: b\n", true},
	{"unknown_key: yes\n", true},
	{"a: True\nb: FALSE\nc: Null\nd: no\ne: y\nf: On\ng: nULL\nh: tRUE\n", true},
	{"true: 1\nnull: 2\nname: 0b101\ntype: 0o17\npolicy: 1_000\n", true},
	{"", false},
	{"# only a comment\n", false},
	{"name: a # comment\n", false},
	{"name: a \n", false},
	{"name:\tb\n", false},
	{"name: a\r\n", false},
	{"\ufeffname: a\n", false},
	{"name: 'a'\n", false},
	{"name: \"a\\tb\"\n", false},
	{"name: \"a\" \n", false},
	{"name: \"\n", false},
	{"name: \"", false},
	{"name: \"a\nb\"\n", false},
	{"name: ~\n", false},
	{"name: .inf\n", false},
	{"name: -1\n", false},
	{"name: a b\n", false},
	{"name: a:b\n", false},
	{"name: &x a\n", false},
	{"name: *x\n", false},
	{"name: !!str 1\n", false},
	{"name: |\n  a\n", false},
	{"name: {a: b}\n", false},
	{"order: [a, ]\n", false},
	{"order: [a, [b]]\n", false},
	{"order: [\"a\"]\n", false},
	{"order: [a\n", false},
	{"  name: a\n", false},
	{"name:\n", false},
	{"name:\n# c\n", false},
	{"budget:\ntotal: 1\n", false},
	{"budget:\n  total:\n    x: 1\n", false},
	{"budget:\n  a: 1\n   b: 2\n", false},
	{"budget:\n   a: 1\n  b: 2\n", false},
	{"name: a\n  more: b\n", false},
	{"skills:\n  - a\n", false},
	{"Name: a\n", false},
	{"9name: a\n", false},
	{"---\nname: a\n", false},
	{"name: a\n...\n", false},
	{"? name\n: a\n", false},
	{"name: a\u2028b\n", false},
	{"name: \"a\u0085b\"\n", false},
	{"name: \"a\x7fb\"\n", false},
	{"name: \"\xff\"\n", false},
	{"# \x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\nname: a\n", false},
	{"# \x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\nname: a\n", false},
	{"# a comment long enough for eight bytes at once ~!@$%^&*()\nname: a\n", true},
}

func TestSimpleYAML(t *testing.T) {
	for _, c := range simpleYAMLCases {
		got, ok := parseSimpleYAML([]byte(c.text))
		if ok != c.simple {
			t.Errorf("parseSimpleYAML(%q) took it: %v, want %v", c.text, ok, c.simple)
		}
		if ok {
			checkSimpleYAML(t, c.text, got)
		}
	}
}

// TestSimpleYAMLFiles checks that the example and test agent.yaml files
// take the quick path, and that it reads them as yaml.v3 does.
func TestSimpleYAMLFiles(t *testing.T) {
	paths, _ := filepath.Glob("../examples/agents/*/agent.yaml")
	more, _ := filepath.Glob("testdata/*/*/agent.yaml")
	if len(paths) < 2 {
		t.Fatalf("found %d example agent.yaml files", len(paths))
	}
	for _, p := range append(paths, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseSimpleYAML(data)
		if !ok {
			if strings.HasPrefix(p, "../examples") {
				t.Errorf("%s: not parsed by parseSimpleYAML", p)
			}
			continue
		}
		checkSimpleYAML(t, string(data), got)
	}
}

// FuzzSimpleYAML checks that what parseSimpleYAML takes, yaml.v3 parses
// to the same nodes.
func FuzzSimpleYAML(f *testing.F) {
	for _, c := range simpleYAMLCases {
		f.Add(c.text)
	}
	paths, _ := filepath.Glob("../examples/agents/*/agent.yaml")
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(string(data))
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, ok := parseSimpleYAML([]byte(text)); ok {
			checkSimpleYAML(t, text, got)
		}
	})
}

// checkSimpleYAML checks that got, what parseSimpleYAML made of text, is
// the root yaml.v3 makes of it, comments aside.
func checkSimpleYAML(t *testing.T, text string, got *yaml.Node) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("parseSimpleYAML took %q, which yaml.v3 rejects: %v", text, err)
	}
	if len(doc.Content) != 1 {
		t.Fatalf("parseSimpleYAML took %q, in which yaml.v3 finds %d documents", text, len(doc.Content))
	}
	want := doc.Content[0]
	dropComments(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseSimpleYAML(%q):\n got %s\nwant %s", text, dumpNode(got), dumpNode(want))
	}
	gotCfg, gotProbs := ParseConfig("a/agent.yaml", "a", []byte(text))
	wantCfg, wantProbs := parseConfigYAMLv3(text)
	if !reflect.DeepEqual(gotProbs, wantProbs) || !reflect.DeepEqual(gotCfg, wantCfg) {
		t.Errorf("ParseConfig(%q) = %+v, %v; with yaml.v3 %+v, %v", text, gotCfg, gotProbs, wantCfg, wantProbs)
	}
}

// parseConfigYAMLv3 is ParseConfig with yaml.v3's nodes.
func parseConfigYAMLv3(text string) (Config, []workspace.Problem) {
	return parseConfig("a/agent.yaml", "a", []byte(text), false)
}

func dropComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		dropComments(c)
	}
}

func dumpNode(n *yaml.Node) string {
	s := fmt.Sprintf("{%d %s %q style %d at %d:%d", n.Kind, n.Tag, n.Value, n.Style, n.Line, n.Column)
	for _, c := range n.Content {
		s += " " + dumpNode(c)
	}
	return s + "}"
}

// TestDecodeScalarString checks decodeScalar's shortcut for strings
// against yaml.v3's Decode.
func TestDecodeScalarString(t *testing.T) {
	for _, text := range []string{"a", "concierge", "\"Lúcia\"", "'it''s'", "\"\"", "\"a\\tb\"", "!!str 12", "yes", "Europe/Lisbon"} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("k: "+text), &doc); err != nil {
			t.Fatal(err)
		}
		v := doc.Content[0].Content[1]
		var want string
		if err := v.Decode(&want); err != nil {
			t.Fatal(err)
		}
		var got string
		if !decodeScalar(v, &got, func(int, int, string, string, ...any) { t.Errorf("%s: reported", text) }, "k") || got != want {
			t.Errorf("decodeScalar(%s) = %q, Decode makes %q", text, got, want)
		}
	}
}
