package prompt

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits of the agent.yaml files parseSimpleYAML reads: larger keys and
// files are left to yaml.v3.
const (
	maxSimpleKey  = 64
	maxSimpleYAML = 16 << 10
)

// parseSimpleYAML parses agent.yaml written in the plain subset of YAML
// agents are written in, several times faster than yaml.v3 (which a first
// prompt pays for every agent of a workspace): lines of "key: value" at
// column 1, a key with no value followed by lines of "key: value" all
// indented alike (a mapping), blank lines and comment lines. A value is a
// plain scalar of letters, digits and ._/+- (starting with a letter or a
// digit), a double-quoted scalar on one line without escapes, or a flow
// sequence of such plain scalars on one line. It returns the root mapping
// as yaml.Unmarshal builds it, without comments (ParseConfig reads none),
// or false for anything else, which yaml.v3 then parses.
func parseSimpleYAML(data []byte) (*yaml.Node, bool) {
	if len(data) > maxSimpleYAML || !simpleYAMLText(data) {
		return nil, false
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	var pending, nested *yaml.Node // a key awaiting its mapping, the mapping
	indent := 0                    // of nested's keys
	for line, rest := 1, data; len(rest) > 0; line++ {
		var l []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			l, rest = rest, nil
		}
		sp := 0
		for sp < len(l) && l[sp] == ' ' {
			sp++
		}
		if sp == len(l) || l[sp] == '#' {
			continue // blank, or a comment
		}
		key, val, ok := simpleEntry(l, sp, line)
		if !ok {
			return nil, false
		}
		switch {
		case sp == 0 && pending == nil:
			nested = nil
			if root.Line == 0 {
				root.Line, root.Column = line, 1
			}
			if val == nil {
				pending = key
				continue
			}
			root.Content = append(root.Content, key, val)
		case sp > 0 && pending != nil && val != nil:
			indent = sp
			nested = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line, Column: sp + 1, Content: []*yaml.Node{key, val}}
			root.Content = append(root.Content, pending, nested)
			pending = nil
		case sp > 0 && nested != nil && sp == indent && val != nil:
			nested.Content = append(nested.Content, key, val)
		default:
			return nil, false
		}
	}
	if pending != nil || len(root.Content) == 0 {
		return nil, false
	}
	return root, true
}

// simpleEntry parses the line l, "key: value" or "key:" from column
// sp+1, into its key and value nodes (val nil for no value).
func simpleEntry(l []byte, sp, line int) (key, val *yaml.Node, ok bool) {
	k := sp
	for k < len(l) && k-sp < maxSimpleKey && (l[k] >= 'a' && l[k] <= 'z' || l[k] == '_' || k > sp && l[k] >= '0' && l[k] <= '9') {
		k++
	}
	if k == sp || k == len(l) || l[k] != ':' {
		return nil, nil, false
	}
	key = plainNode(string(l[sp:k]), line, sp+1)
	v := k + 1
	if v == len(l) {
		return key, nil, true
	}
	if l[v] != ' ' {
		return nil, nil, false
	}
	for v < len(l) && l[v] == ' ' {
		v++
	}
	if v == len(l) {
		return nil, nil, false // trailing spaces: left to yaml.v3
	}
	val, ok = simpleValue(l[v:], line, v+1)
	return key, val, ok
}

// simpleValue parses s, a whole value at column col of line.
func simpleValue(s []byte, line, col int) (*yaml.Node, bool) {
	switch s[0] {
	case '"':
		end := bytes.IndexByte(s[1:], '"') + 1
		if end == 0 || end != len(s)-1 || bytes.IndexByte(s, '\\') >= 0 {
			return nil, false
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: string(s[1:end]), Line: line, Column: col}, true
	case '[':
		return simpleSeq(s, line, col)
	}
	if !plainScalar(s) {
		return nil, false
	}
	return plainNode(string(s), line, col), true
}

// simpleSeq parses s, "[a, b]", at column col of line.
func simpleSeq(s []byte, line, col int) (*yaml.Node, bool) {
	if s[len(s)-1] != ']' {
		return nil, false
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line, Column: col}
	inner := s[1 : len(s)-1]
	if len(bytes.TrimLeft(inner, " ")) == 0 {
		return seq, true
	}
	for start := 0; ; {
		end := bytes.IndexByte(inner[start:], ',')
		if end < 0 {
			end = len(inner)
		} else {
			end += start
		}
		item := inner[start:end]
		lead := len(item) - len(bytes.TrimLeft(item, " "))
		item = bytes.TrimRight(item[lead:], " ")
		if !plainScalar(item) {
			return nil, false
		}
		seq.Content = append(seq.Content, plainNode(string(item), line, col+1+start+lead))
		if end == len(inner) {
			return seq, true
		}
		start = end + 1
	}
}

// plainScalar reports whether s is a plain scalar of the subset: letters,
// digits and ._/+-, starting with a letter or a digit.
func plainScalar(s []byte) bool {
	if len(s) == 0 || !isAlnum(s[0]) {
		return false
	}
	for _, b := range s {
		if !isAlnum(b) && b != '.' && b != '_' && b != '/' && b != '+' && b != '-' {
			return false
		}
	}
	return true
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// plainNode is the node yaml.v3 makes of the plain scalar s at column col
// of line: tagged as YAML resolves it (!!str, !!int, !!float, !!bool…).
func plainNode(s string, line, col int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: s, Line: line, Column: col}
	n.Tag = plainTag(n)
	return n
}

// plainTag is n.ShortTag() for n, a plain scalar starting with a letter
// or a digit, without its allocations for the common case: yaml.v3
// resolves a scalar starting with a letter to a string unless it is one
// of a few spellings of true, false and null.
func plainTag(n *yaml.Node) string {
	switch n.Value {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	case "null", "Null", "NULL":
		return "!!null"
	}
	if c := n.Value[0]; c >= '0' && c <= '9' {
		return n.ShortTag() // a number, a timestamp or a string
	}
	return "!!str"
}

// simpleYAMLText reports whether data holds only line feeds and the
// printable characters YAML reads as such: no tab, carriage return, byte
// order mark, nor any of YAML's other line breaks (U+0085, U+2028,
// U+2029), so that a line is what parseSimpleYAML takes it for.
func simpleYAMLText(data []byte) bool {
	for i := 0; i < len(data); {
		if i+8 <= len(data) {
			// Eight bytes of printable ASCII (the common case) at once:
			// no high bit set, no byte below 0x20 (+0x60 sets the high
			// bit of the others) nor 0x7f (+1 sets only its high bit).
			// A line feed takes the byte path.
			w := binary.LittleEndian.Uint64(data[i:])
			if (w|^(w+0x6060606060606060)|(w+loBits))&hiBits == 0 {
				i += 8
				continue
			}
		}
		b := data[i]
		if b < utf8.RuneSelf {
			if b != '\n' && (b < 0x20 || b == 0x7f) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff,
			r >= 0xd800 && r < 0xe000, r == 0xfffe, r == 0xffff:
			return false
		}
		i += size
	}
	return true
}
