package skills

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/quirehq/quire/workspace"
)

func TestParseDocument(t *testing.T) {
	long := strings.Repeat("x", MaxNameChars+1)
	tests := []struct {
		name     string
		slug     string
		in       string
		wantLine int // line of the first problem (0: none expected)
		wantSev  workspace.Severity
		wantMsg  string // substring of the first problem's message
		check    func(t *testing.T, d Document)
	}{
		{name: "valid", slug: "pdf", in: "---\nname: pdf\ndescription: Convert PDFs.\nlicense: MIT\nallowed-tools: read_file exec\nmetadata:\n  author: dana\n---\n# Body\n",
			check: func(t *testing.T, d Document) {
				if d.Name != "pdf" || d.Description != "Convert PDFs." || d.License != "MIT" || d.Body != "# Body\n" || d.BodyLine != 9 {
					t.Errorf("document = %+v", d)
				}
				if len(d.AllowedTools) != 2 || d.AllowedTools[1] != "exec" || d.Metadata["author"] != "dana" {
					t.Errorf("allowed-tools %v, metadata %v", d.AllowedTools, d.Metadata)
				}
			}},
		{name: "allowed-tools list", slug: "pdf", in: "---\nname: pdf\ndescription: d\nallowed-tools: [a, b]\n---\n",
			check: func(t *testing.T, d Document) {
				if len(d.AllowedTools) != 2 || d.AllowedTools[0] != "a" {
					t.Errorf("allowed-tools = %v", d.AllowedTools)
				}
			}},
		{name: "control character in description", slug: "pdf", in: "---\nname: pdf\ndescription: \"Convert\\e[31m PDFs.\"\n---\n",
			wantLine: 3, wantSev: workspace.SeverityError, wantMsg: "control character U+001B"},
		{name: "BOM and CRLF", slug: "pdf", in: "\ufeff---\r\nname: pdf\r\ndescription: Convert PDFs.\r\n---\r\nbody\r\n",
			check: func(t *testing.T, d Document) {
				if d.Name != "pdf" || d.Description != "Convert PDFs." || d.Body != "body\n" {
					t.Errorf("document = %+v", d)
				}
			}},
		{name: "JSON-ish flow mapping is YAML", slug: "pdf", in: "---\n{\"name\": \"pdf\", \"description\": \"Convert PDFs.\"}\n---\n",
			check: func(t *testing.T, d Document) {
				if d.Name != "pdf" {
					t.Errorf("name = %q", d.Name)
				}
			}},
		{name: "bare JSON", slug: "pdf", in: "{\"name\": \"pdf\", \"description\": \"x\"}\n", wantLine: 1, wantSev: workspace.SeverityError, wantMsg: "not a bare JSON object"},
		{name: "missing front matter", slug: "pdf", in: "# Just a body\n", wantLine: 1, wantSev: workspace.SeverityError, wantMsg: "no front matter"},
		{name: "empty file", slug: "pdf", in: "", wantLine: 1, wantSev: workspace.SeverityError, wantMsg: "empty"},
		{name: "unclosed", slug: "pdf", in: "---\nname: pdf\ndescription: d\n", wantLine: 1, wantSev: workspace.SeverityError, wantMsg: "never closed"},
		{name: "malformed YAML", slug: "pdf", in: "---\nname: pdf\ndescription: [unclosed\nlicense: x\n---\n", wantLine: 3, wantSev: workspace.SeverityError, wantMsg: "not valid YAML"},
		{name: "YAML error on the first key", slug: "pdf", in: "---\nname: }\ndescription: d\n---\n", wantLine: 2, wantSev: workspace.SeverityError, wantMsg: "not valid YAML"},
		{name: "YAML scanner error", slug: "pdf", in: "---\nname: pdf\ndescription: a: b\n---\n", wantLine: 3, wantSev: workspace.SeverityError, wantMsg: "mapping values are not allowed"},
		{name: "tab indentation", slug: "pdf", in: "---\nname: pdf\nmetadata:\n\tx: 1\n---\n", wantLine: 4, wantSev: workspace.SeverityError, wantMsg: "not valid YAML"},
		{name: "scalar document", slug: "pdf", in: "---\njust words\n---\n", wantLine: 2, wantSev: workspace.SeverityError, wantMsg: "must be a YAML mapping"},
		{name: "empty front matter", slug: "pdf", in: "---\n---\nbody\n", wantLine: 1, wantSev: workspace.SeverityError, wantMsg: "front matter is empty"},
		{name: "name differs from slug: the directory wins", slug: "pdf", in: "---\nname: pdf-tools\ndescription: d\n---\n", wantLine: 2, wantSev: workspace.SeverityWarning, wantMsg: `differs from its directory "pdf"; the skill loads as "pdf"`},
		{name: "name differs from an invalid directory", slug: "PDF", in: "---\nname: pdf\ndescription: d\n---\n", wantLine: 2, wantSev: workspace.SeverityError, wantMsg: `directory name "PDF" may only hold lower-case`},
		{name: "name too long", slug: long, in: "---\nname: " + long + "\ndescription: d\n---\n", wantLine: 2, wantSev: workspace.SeverityError, wantMsg: "65 characters; the limit is 64"},
		{name: "name upper case", slug: "PDF", in: "---\nname: PDF\ndescription: d\n---\n", wantLine: 2, wantSev: workspace.SeverityError, wantMsg: "lower-case letters"},
		{name: "name not a string", slug: "pdf", in: "---\nname: [pdf]\ndescription: d\n---\n", wantLine: 2, wantSev: workspace.SeverityError, wantMsg: "name must be a string"},
		{name: "missing name", slug: "pdf", in: "---\ndescription: d\n---\n", wantLine: 1, wantSev: workspace.SeverityError, wantMsg: "no name; add name: pdf"},
		{name: "missing description", slug: "pdf", in: "---\nname: pdf\n---\n", wantLine: 1, wantSev: workspace.SeverityError, wantMsg: "no description"},
		{name: "empty description", slug: "pdf", in: "---\nname: pdf\ndescription: \"  \"\n---\n", wantLine: 3, wantSev: workspace.SeverityError, wantMsg: "description is empty"},
		{name: "description too long", slug: "pdf", in: "---\nname: pdf\ndescription: " + strings.Repeat("é", MaxDescriptionChars+1) + "\n---\n", wantLine: 3, wantSev: workspace.SeverityError, wantMsg: "1025 characters; the limit is 1024"},
		{name: "description at the limit counts code points", slug: "pdf", in: "---\nname: pdf\ndescription: " + strings.Repeat("é", MaxDescriptionChars) + "\n---\n"},
		{name: "unknown key warns", slug: "pdf", in: "---\nname: pdf\ndescription: d\ntriggers: 2\n---\n", wantLine: 4, wantSev: workspace.SeverityWarning, wantMsg: `unknown key "triggers"`},
		{name: "duplicate key", slug: "pdf", in: "---\nname: pdf\ndescription: d\nname: pdf\n---\n", wantLine: 4, wantSev: workspace.SeverityError, wantMsg: "appears twice"},
		{name: "metadata not a mapping", slug: "pdf", in: "---\nname: pdf\ndescription: d\nmetadata: 3\n---\n", wantLine: 4, wantSev: workspace.SeverityError, wantMsg: "metadata must be a mapping"},
		{name: "double hyphen is an error", slug: "pdf--x", in: "---\nname: pdf--x\ndescription: d\n---\n", wantLine: 2, wantSev: workspace.SeverityError, wantMsg: "two hyphens in a row"},
		{name: "leading hyphen is an error", slug: "-pdf", in: "---\nname: -pdf\ndescription: d\n---\n", wantLine: 2, wantSev: workspace.SeverityError, wantMsg: "start or end with a hyphen"},
		{name: "trailing hyphen is an error", slug: "pdf-", in: "---\nname: pdf-\ndescription: d\n---\n", wantLine: 2, wantSev: workspace.SeverityError, wantMsg: "start or end with a hyphen"},
		{name: "known keys of the ecosystem are no warning", slug: "pdf", in: "---\nname: pdf\ndescription: d\ncompatibility: Needs poppler\nhomepage: https://example.com\nversion: 1.2.0\nuser-invocable: true\ndisable-model-invocation: false\nargument-hint: \"[file]\"\nmodel: sonnet\ncontext: fork\nagent: Explore\nhooks: {}\ncommand-dispatch: tool\ncommand-tool: exec\ncommand-arg-mode: raw\nmetadata: {\"openclaw\": {\"emoji\": \"📄\", \"requires\": {\"bins\": [\"pdftotext\"]}}}\n---\n",
			check: func(t *testing.T, d Document) {
				if d.Compatibility != "Needs poppler" || d.Metadata["openclaw"] == nil {
					t.Errorf("compatibility %q, metadata %v", d.Compatibility, d.Metadata)
				}
			}},
		{name: "JSON surrogate escapes in metadata", slug: "gh", in: "---\nname: gh\ndescription: d\nmetadata: {\"openclaw\": {\"emoji\": \"\\ud83d\\udc19\"}}\n---\n",
			check: func(t *testing.T, d Document) {
				if oc, _ := d.Metadata["openclaw"].(map[string]any); oc["emoji"] != "🐙" {
					t.Errorf("metadata = %v", d.Metadata)
				}
			}},
		{name: "lone surrogate stays an error", slug: "gh", in: "---\nname: gh\ndescription: \"\\ud83d\"\n---\n", wantLine: 3, wantSev: workspace.SeverityError, wantMsg: "invalid Unicode character escape"},
		{name: "JSON5 metadata over several lines with trailing commas", slug: "gh", in: "---\nname: gh\ndescription: d\nmetadata:\n  {\n    \"openclaw\": { \"requires\": { \"bins\": [\"gh\"] }, },\n  }\n---\n",
			check: func(t *testing.T, d Document) {
				if d.Metadata["openclaw"] == nil {
					t.Errorf("metadata = %v", d.Metadata)
				}
			}},
		{name: "metadata as a quoted JSON string", slug: "gh", in: "---\nname: gh\ndescription: d\nmetadata: '{\"openclaw\": {\"emoji\": \"x\"}}'\n---\n",
			check: func(t *testing.T, d Document) {
				if d.Metadata["openclaw"] == nil {
					t.Errorf("metadata = %v", d.Metadata)
				}
			}},
		{name: "compatibility over the limit warns", slug: "pdf", in: "---\nname: pdf\ndescription: d\ncompatibility: " + strings.Repeat("x", MaxCompatibilityChars+1) + "\n---\n", wantLine: 4, wantSev: workspace.SeverityWarning, wantMsg: "compatibility is 501 characters"},
		{name: "not UTF-8", slug: "pdf", in: "---\nname: pdf\ndescription: \xff\n---\n", wantLine: 0, wantSev: workspace.SeverityError, wantMsg: "not valid UTF-8"},
		{name: "baseDir in front matter stays", slug: "pdf", in: "---\nname: pdf\ndescription: see {baseDir}\n---\nrun {baseDir}/x\n",
			check: func(t *testing.T, d Document) {
				if d.Description != "see {baseDir}" || d.Body != "run {baseDir}/x\n" {
					t.Errorf("document = %+v", d)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, probs := ParseDocument("skills/"+tt.slug+"/SKILL.md", tt.slug, []byte(tt.in))
			if tt.wantMsg == "" {
				if len(probs) != 0 {
					t.Fatalf("unexpected problems: %v", probs)
				}
			} else {
				if len(probs) == 0 {
					t.Fatalf("no problem reported; want %q", tt.wantMsg)
				}
				p := probs[0]
				if p.Line != tt.wantLine || p.Severity != tt.wantSev || !strings.Contains(p.Message, tt.wantMsg) {
					t.Fatalf("first problem = %v; want line %d %s containing %q", p, tt.wantLine, tt.wantSev, tt.wantMsg)
				}
				if p.Path != "skills/"+tt.slug+"/SKILL.md" {
					t.Errorf("problem path = %q", p.Path)
				}
			}
			if tt.check != nil {
				tt.check(t, d)
			}
		})
	}
}

func FuzzParseDocument(f *testing.F) {
	for _, s := range []string{
		"---\nname: pdf\ndescription: Convert PDFs.\n---\nbody {baseDir}\n",
		"\ufeff---\r\nname: pdf\r\ndescription: d\r\n---\r\n",
		"---\n{\"name\": \"pdf\"}\n---\n",
		"---\nname: &a [*a]\n---\n",
		"---\nmetadata: {a: [1, {b: c}]}\nallowed-tools: [x, [y]]\n---\n",
		"---\n- a\n- b\n---\n",
		"{}",
	} {
		f.Add("pdf", []byte(s))
	}
	f.Fuzz(func(t *testing.T, slug string, data []byte) {
		d, probs := ParseDocument("SKILL.md", slug, data)
		for _, p := range probs {
			if p.Message == "" || (p.Severity != workspace.SeverityError && p.Severity != workspace.SeverityWarning) || p.Line < 0 {
				t.Fatalf("malformed problem %+v", p)
			}
		}
		if !hasError(probs) && (nameRule(slug) != "" || d.Name == "" || d.Description == "") {
			t.Fatalf("accepted a document with name %q for slug %q, description %q", d.Name, slug, d.Description)
		}
	})
}

// FuzzScanMatchesYAML holds the front-matter scanner to the YAML decoder:
// whatever the input, ParseDocument (scanner first) and the decoder alone
// give the same Document and the same problems.
func FuzzScanMatchesYAML(f *testing.F) {
	for _, s := range []string{
		"---\nname: pdf\ndescription: Convert PDFs.\n---\nbody\n",
		"---\nname: 'pdf'\ndescription: \"Convert: PDFs\" # c\n---\n",
		"---\n# comment\nname: pdf\n\ndescription: it's {baseDir} [x], y\nlicense: MIT\n---\n",
		"---\nname: pdf\ndescription: a #b\nallowed-tools: Read Write\nversion: 1.0\n---\n",
		"---\nname: pdf\ndescription: 'it''s'\ncompatibility: ~\n---\n",
		"---\nname: pdf\nname: pdf\ndescription: x\n---\n",
		"---\nname: pdf\ndescription: x\nmetadata: '{\"a\": 1}'\n---\n",
		"---\nname: pdf\ndescription: é ü 🐙\n---\n",
		"---\nname: pdf\ndescription: true\nextra: 3\n---\n",
		"---\nname: pdf\ndescription: x\n  more\n---\n",
	} {
		f.Add("pdf", []byte(s))
	}
	f.Fuzz(func(t *testing.T, slug string, data []byte) {
		d1, p1 := parseDocument("SKILL.md", slug, data, true)
		d2, p2 := parseDocument("SKILL.md", slug, data, false)
		if !reflect.DeepEqual(d1, d2) || !reflect.DeepEqual(p1, p2) {
			t.Fatalf("scanner and YAML decoder disagree on %q:\nscanner %+v %v\nyaml    %+v %v", data, d1, p1, d2, p2)
		}
	})
}

// FuzzScanLinesMatchYAML builds the front matter from "key: value" lines
// of the fuzzer's strings, the only shape the scanner reads itself, so its
// fast paths (quotes, comments, ':' and '#' found eight bytes at a time,
// printable ASCII checked a word at a time) are what the fuzzer explores,
// and holds the result to the YAML decoder's.
func FuzzScanLinesMatchYAML(f *testing.F) {
	f.Add("name", "pdf", "description", "Convert PDFs: text, tables # and more", "license", "'it''s MIT'")
	f.Add("name", "'pdf'", "description", "a:b c#d e #f", "compatibility", "\"x\" # y")
	f.Add("name", "pdf", "description", "0123456789abcdef:", "allowed-tools", "Read Bash(git:*)  ")
	f.Add("name", "pdf", "description", "été \u00a0 🐙 — ok", "x-key", "~")
	f.Add("name", "pdf", "description", "tab\there and \x7f del", "metadata", "'{\"a\": 1}'")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		data := []byte("---\n" + k1 + ": " + v1 + "\n" + k2 + ": " + v2 + "\n" + k3 + ": " + v3 + "\n---\nbody\n")
		d1, p1 := parseDocument("SKILL.md", "pdf", data, true)
		d2, p2 := parseDocument("SKILL.md", "pdf", data, false)
		if !reflect.DeepEqual(d1, d2) || !reflect.DeepEqual(p1, p2) {
			t.Fatalf("scanner and YAML decoder disagree on %q:\nscanner %+v %v\nyaml    %+v %v", data, d1, p1, d2, p2)
		}
	})
}

// TestScannerTakesCommonShapes makes sure the fast path is the one taken
// for the shapes most SKILL.md files have (a fallback for them would keep
// results right but lose the speed).
func TestScannerTakesCommonShapes(t *testing.T) {
	for _, head := range []string{
		"name: pdf\ndescription: Convert PDFs to Markdown. Use when the user sends a PDF.\n",
		"name: pdf\ndescription: \"Convert PDFs: text, tables\"\nlicense: Apache-2.0\n",
		"# note\nname: pdf\ndescription: 'It''s fast'\nallowed-tools: Read Bash(pdftotext:*)\n",
	} {
		p := &docParser{path: "SKILL.md"}
		if !p.scan(head) {
			t.Errorf("scan fell back to YAML for %q", head)
		}
	}
}

func TestControlAt(t *testing.T) {
	isControl := func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' }
	for _, s := range []string{"", "plain", "tab\tand\nbreak\r\n", "bell\a", "esc \x1b[31m", "del\x7f", "c1 \u0085 next", "c1 \u009b", "ünï \u00a0 nbsp", "\xff bad", "日本\x00"} {
		if got, want := controlAt(s), strings.IndexFunc(s, isControl); got != want {
			t.Errorf("controlAt(%q) = %d, want %d", s, got, want)
		}
	}
}

// BenchmarkParseDocument parses the SKILL.md shape most skills have: name
// and a one-line description between --- lines, then a short body.
func BenchmarkParseDocument(b *testing.B) {
	data := []byte(skillMD("skill-0042", "Convert markdown files to pdf and write a daily log entry with the summary of what was converted.", "# Steps\n\nRun the converter.\n"))
	b.ReportAllocs()
	for b.Loop() {
		if _, probs := ParseDocument("skills/skill-0042/SKILL.md", "skill-0042", data); len(probs) != 0 {
			b.Fatal(probs)
		}
	}
}
