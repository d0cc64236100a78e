package mcp

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// args is the input schema of a tool taking T, derived from T once and
// resolved for validating the arguments of every call.
type args[T any] struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	// quick, when not nil, tells arguments that are valid without the
	// resolved schema's validator: see flatSchema.
	quick *flatSchema
}

// argsOf derives T's schema; scope, when T has it, is an enum.
func argsOf[T any]() args[T] {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", *new(T), err)) // a programming error, caught by every test
	}
	if p := s.Properties["scope"]; p != nil {
		p.Enum = []any{scopeAgent, scopeUser}
	}
	for _, name := range []string{"limit", "from", "lines"} {
		if p := s.Properties[name]; p != nil {
			one := 1.0
			p.Minimum = &one
			p.Type = "integer"
		}
	}
	if p := s.Properties["limit"]; p != nil {
		most := float64(MaxLimit)
		p.Maximum = &most
	}
	r, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: resolve the schema of %T: %v", *new(T), err))
	}
	return args[T]{schema: s, resolved: r, quick: flatOf(s)}
}

// decode validates raw against the schema and decodes it: arguments the
// schema refuses are the API's bad_request. A null argument is an absent
// one (clients that make every property nullable send null for "not
// given"), and so are null arguments as a whole.
func (a args[T]) decode(raw json.RawMessage) (T, error) {
	var in T
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return in, badRequest("validating \"arguments\": unmarshaling arguments: %v", err)
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	for name, v := range m {
		if v == nil {
			delete(m, name)
		}
	}
	if !a.quick.valid(m) {
		if err := a.resolved.Validate(m); err != nil {
			return in, badRequest("validating \"arguments\": %v", err)
		}
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return in, badRequest("validating \"arguments\": %v", err)
		}
	}
	return in, nil
}

// flatSchema is a tool's input schema when it is an object of scalar
// properties (or lists of strings), each with at most a type, an enum, a
// minimum and a maximum, with required properties and no others: what
// every tool here takes. Checking that by hand costs a fraction of the general validator
// (7% of a memory_search call's CPU in the daemon went to it, most
// of it growing the stack of the goroutine the SDK starts for each
// request), so the validator runs only for arguments the quick check
// does not pass, and says what is wrong with them.
type flatSchema struct {
	props    map[string]flatProp
	required []string
}

type flatProp struct {
	typ      string // "string", "integer", "number", "boolean" or "array" (of strings)
	enum     []any
	min, max *float64
}

// flatOf returns s as a flatSchema, or nil when s says more than one can
// (then every call is validated in full).
func flatOf(s *jsonschema.Schema) *flatSchema {
	if s.Type != "object" || s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil {
		return nil // additional properties allowed, or not as jsonschema.For says none are
	}
	f := &flatSchema{props: map[string]flatProp{}, required: s.Required}
	// What the check covers, described again: if s says anything else,
	// the two differ.
	covered := &jsonschema.Schema{Type: s.Type, Required: s.Required, AdditionalProperties: s.AdditionalProperties, Properties: map[string]*jsonschema.Schema{}, PropertyOrder: s.PropertyOrder}
	for name, p := range s.Properties {
		typ, types, items := p.Type, []string(nil), (*jsonschema.Schema)(nil)
		switch {
		case typ == "string" || typ == "integer" || typ == "number" || typ == "boolean":
		case slices.Equal(p.Types, []string{"null", "array"}) && p.Items != nil && p.Items.Type == "string":
			// A []string field: a list of strings, or null.
			typ, types, items = "array", p.Types, &jsonschema.Schema{Type: "string"}
		default:
			return nil
		}
		f.props[name] = flatProp{typ: typ, enum: p.Enum, min: p.Minimum, max: p.Maximum}
		covered.Properties[name] = &jsonschema.Schema{Type: p.Type, Types: types, Title: p.Title, Description: p.Description, Enum: p.Enum, Minimum: p.Minimum, Maximum: p.Maximum, Items: items}
	}
	for _, name := range s.Required {
		if _, ok := f.props[name]; !ok {
			return nil
		}
	}
	want, err1 := json.Marshal(s)
	got, err2 := json.Marshal(covered)
	if err1 != nil || err2 != nil || string(want) != string(got) {
		return nil
	}
	return f
}

// valid reports whether m, arguments decoded from JSON, certainly
// satisfy f; false means "ask the validator".
func (f *flatSchema) valid(m map[string]any) bool {
	if f == nil || m == nil {
		return false
	}
	for name, v := range m {
		p, ok := f.props[name]
		if !ok {
			return false
		}
		var n float64
		switch p.typ {
		case "string":
			if _, ok := v.(string); !ok {
				return false
			}
		case "boolean":
			if _, ok := v.(bool); !ok {
				return false
			}
		case "array":
			if v != nil && !stringList(v) {
				return false
			}
		case "integer", "number":
			if n, ok = v.(float64); !ok || math.IsInf(n, 0) || math.IsNaN(n) || p.typ == "integer" && n != math.Trunc(n) {
				return false
			}
			if p.min != nil && n < *p.min || p.max != nil && n > *p.max {
				return false
			}
		default:
			return false
		}
		if p.enum != nil && !slices.Contains(p.enum, v) {
			return false
		}
	}
	for _, name := range f.required {
		if _, ok := m[name]; !ok {
			return false
		}
	}
	return true
}

// stringList reports whether v, decoded from JSON, is a list of strings.
func stringList(v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range l {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}
