package skills

import (
	"strings"
	"testing"
)

func TestParseDocument(t *testing.T) {
	long := strings.Repeat("x", MaxNameChars+1)
	tests := []struct {
		name     string
		slug     string
		in       string
		wantLine int // line of the first problem (0: none expected)
		wantSev  Severity
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
		{name: "bare JSON", slug: "pdf", in: "{\"name\": \"pdf\", \"description\": \"x\"}\n", wantLine: 1, wantSev: Error, wantMsg: "not a bare JSON object"},
		{name: "missing front matter", slug: "pdf", in: "# Just a body\n", wantLine: 1, wantSev: Error, wantMsg: "no front matter"},
		{name: "empty file", slug: "pdf", in: "", wantLine: 1, wantSev: Error, wantMsg: "empty"},
		{name: "unclosed", slug: "pdf", in: "---\nname: pdf\ndescription: d\n", wantLine: 1, wantSev: Error, wantMsg: "never closed"},
		{name: "malformed YAML", slug: "pdf", in: "---\nname: pdf\ndescription: [unclosed\nlicense: x\n---\n", wantLine: 3, wantSev: Error, wantMsg: "not valid YAML"},
		{name: "YAML error on the first key", slug: "pdf", in: "---\nname: }\ndescription: d\n---\n", wantLine: 2, wantSev: Error, wantMsg: "not valid YAML"},
		{name: "YAML scanner error", slug: "pdf", in: "---\nname: pdf\ndescription: a: b\n---\n", wantLine: 3, wantSev: Error, wantMsg: "mapping values are not allowed"},
		{name: "tab indentation", slug: "pdf", in: "---\nname: pdf\nmetadata:\n\tx: 1\n---\n", wantLine: 4, wantSev: Error, wantMsg: "not valid YAML"},
		{name: "scalar document", slug: "pdf", in: "---\njust words\n---\n", wantLine: 2, wantSev: Error, wantMsg: "must be a YAML mapping"},
		{name: "empty front matter", slug: "pdf", in: "---\n---\nbody\n", wantLine: 1, wantSev: Error, wantMsg: "front matter is empty"},
		{name: "name differs from slug", slug: "pdf", in: "---\nname: pdf-tools\ndescription: d\n---\n", wantLine: 2, wantSev: Error, wantMsg: `differs from its directory "pdf"`},
		{name: "name too long", slug: long, in: "---\nname: " + long + "\ndescription: d\n---\n", wantLine: 2, wantSev: Error, wantMsg: "65 characters; the limit is 64"},
		{name: "name upper case", slug: "PDF", in: "---\nname: PDF\ndescription: d\n---\n", wantLine: 2, wantSev: Error, wantMsg: "lower-case letters"},
		{name: "name not a string", slug: "pdf", in: "---\nname: [pdf]\ndescription: d\n---\n", wantLine: 2, wantSev: Error, wantMsg: "name must be a string"},
		{name: "missing name", slug: "pdf", in: "---\ndescription: d\n---\n", wantLine: 1, wantSev: Error, wantMsg: "no name; add name: pdf"},
		{name: "missing description", slug: "pdf", in: "---\nname: pdf\n---\n", wantLine: 1, wantSev: Error, wantMsg: "no description"},
		{name: "empty description", slug: "pdf", in: "---\nname: pdf\ndescription: \"  \"\n---\n", wantLine: 3, wantSev: Error, wantMsg: "description is empty"},
		{name: "description too long", slug: "pdf", in: "---\nname: pdf\ndescription: " + strings.Repeat("é", MaxDescriptionChars+1) + "\n---\n", wantLine: 3, wantSev: Error, wantMsg: "1025 characters; the limit is 1024"},
		{name: "description at the limit counts code points", slug: "pdf", in: "---\nname: pdf\ndescription: " + strings.Repeat("é", MaxDescriptionChars) + "\n---\n"},
		{name: "unknown key warns", slug: "pdf", in: "---\nname: pdf\ndescription: d\nversion: 2\n---\n", wantLine: 4, wantSev: Warning, wantMsg: `unknown key "version"`},
		{name: "duplicate key", slug: "pdf", in: "---\nname: pdf\ndescription: d\nname: pdf\n---\n", wantLine: 4, wantSev: Error, wantMsg: "appears twice"},
		{name: "metadata not a mapping", slug: "pdf", in: "---\nname: pdf\ndescription: d\nmetadata: 3\n---\n", wantLine: 4, wantSev: Error, wantMsg: "metadata must be a mapping"},
		{name: "hyphen placement warns", slug: "pdf--x", in: "---\nname: pdf--x\ndescription: d\n---\n", wantLine: 2, wantSev: Warning, wantMsg: "hyphen"},
		{name: "not UTF-8", slug: "pdf", in: "---\nname: pdf\ndescription: \xff\n---\n", wantLine: 0, wantSev: Error, wantMsg: "not valid UTF-8"},
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
			if p.Message == "" || (p.Severity != Error && p.Severity != Warning) || p.Line < 0 {
				t.Fatalf("malformed problem %+v", p)
			}
		}
		if !hasError(probs) && (d.Name != slug || d.Description == "") {
			t.Fatalf("accepted a document with name %q for slug %q, description %q", d.Name, slug, d.Description)
		}
	})
}
