package workspace

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The parser's own words never reach a person: no Go types, no tags, no
// "unmarshal errors", and line numbers of the file, not of the fragment.
func TestYAMLMessage(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		into   any
		offset int
		line   int
		want   string
	}{
		{"a list as a key", "[touch]: 1\n", &map[string]any{}, 0, 1, "line 1: found a list where text is expected"},
		{"a nested list as a key", "a:\n  [touch]: 1\n", &map[string]any{}, 0, 0, "a key must be a plain word"},
		{"text for a number", "n: !!str 5\n", &struct{ N int }{}, 0, 1, `line 1: "5" is text; a whole number is expected here`},
		{"a list for text", "- a\n", &map[string]string{}, 0, 1, "line 1: found a list where a mapping is expected"},
		{"duplicate key in front matter", "name: x\nmetadata:\n  a: 1\n  a: 2\n", &map[string]any{}, 1, 5, `line 5: key "a" appears twice (first on line 4)`},
		{"bad base64", "a: !!binary x\n", &map[string]any{}, 0, 0, "a binary tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := yaml.Unmarshal([]byte(tt.text), tt.into)
			if err == nil {
				t.Fatal("no error")
			}
			line, msg := YAMLMessage(err, tt.offset)
			if line != tt.line || !strings.Contains(msg, tt.want) {
				t.Fatalf("YAMLMessage(%q) = %d, %q; want %d, %q", err, line, msg, tt.line, tt.want)
			}
			for _, leak := range []string{"interface {}", "!!", "unmarshal errors", "yaml:"} {
				if strings.Contains(msg, leak) {
					t.Errorf("%q leaks %q", msg, leak)
				}
			}
		})
	}
	if _, msg := YAMLMessage(errors.New("yaml: line 3: did not find expected key"), 0); msg != "line 3: did not find expected key" {
		t.Errorf("syntax error: %q", msg)
	}
}
