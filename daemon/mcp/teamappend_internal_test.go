package mcp

import (
	"encoding/json"
	"testing"
)

// TestQuickCheckStringList: memory_append's agents, a list of strings
// (or null), passes the quick check; anything else goes to the
// validator.
func TestQuickCheckStringList(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"text":"x"}`:                    true,
		`{"text":"x","agents":["a","b"]}`: true,
		`{"text":"x","agents":[]}`:        true,
		`{"text":"x","agents":null}`:      true,
		`{"text":"x","agents":"a"}`:       false,
		`{"text":"x","agents":[1]}`:       false,
		`{"text":"x","agents":[["a"]]}`:   false,
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		if got := appendArgs.quick.valid(m); got != want {
			t.Errorf("%s: quick check %v, want %v", raw, got, want)
		}
		if want {
			if err := appendArgs.resolved.Validate(m); err != nil {
				t.Errorf("%s: the quick check passes what the validator refuses: %v", raw, err)
			}
		}
	}
}
