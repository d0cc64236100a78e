package daemon

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"testing"
)

// TestOpenAPIWebhookSchemas: openapi.json's schemas of the push webhook,
// which package api's tests cannot see the types of, have exactly the
// JSON fields of hookAnswer (the answer) and pushPayload (what the
// daemon reads of a push event).
func TestOpenAPIWebhookSchemas(t *testing.T) {
	b, err := os.ReadFile("api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]schemaProps `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"HookAnswer": hookAnswer{}, "PushEvent": pushPayload{}} {
		fields := jsonKeys(t, v)
		s := doc.Components.Schemas[name]
		if got := sortedKeys(s.Properties); !slices.Equal(got, sortedKeys(fields)) {
			t.Errorf("schema %s has properties %v; %T has the JSON fields %v", name, got, v, sortedKeys(fields))
		}
		for k, sub := range fields {
			if sub, ok := sub.(map[string]any); ok {
				if got := sortedKeys(s.Properties[k].Properties); !slices.Equal(got, sortedKeys(sub)) {
					t.Errorf("schema %s.%s has properties %v; %T has %v", name, k, got, v, sortedKeys(sub))
				}
			}
		}
	}
}

type schemaProps struct {
	Properties map[string]schemaProps `json:"properties"`
}

func jsonKeys(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
