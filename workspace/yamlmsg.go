package workspace

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	yamlLine       = regexp.MustCompile(`\bline (\d+)\b`)
	yamlUnmarshal  = regexp.MustCompile("cannot unmarshal (!!\\w+)(?: `([^`]*)`)? into (\\S+)")
	yamlDuplicate  = regexp.MustCompile(`mapping key "((?:[^"\\]|\\.)*)" already defined at line (\d+)`)
	yamlInvalidKey = regexp.MustCompile(`invalid map key: .*`)
	yamlTag        = regexp.MustCompile(`!!(str|seq|map|int|float|bool|null|binary|timestamp)\b`)
)

var yamlTagNames = map[string]string{
	"!!str": "text", "!!seq": "a list", "!!map": "a mapping", "!!int": "a whole number", "!!float": "a number",
	"!!bool": "true or false", "!!null": "nothing", "!!binary": "binary data", "!!timestamp": "a date",
}

var goTypeNames = map[string]string{
	"int": "a whole number", "int64": "a whole number", "uint": "a whole number", "float64": "a number",
	"string": "text", "bool": "true or false",
}

// YAMLMessage rewrites an error of the YAML parser into words a person
// editing the file can act on: no parser prefixes ("yaml: unmarshal
// errors:"), no Go types ("[]interface {}"), no YAML tags ("!!str"), and
// line numbers moved by offset (the front matter of a SKILL.md starts on
// the file's line 2: offset 1), so they name lines of the file. It returns
// the line of the first problem (0 when the message names none) and the
// message.
func YAMLMessage(err error, offset int) (int, string) {
	msg := strings.TrimSpace(strings.TrimPrefix(err.Error(), "yaml: "))
	msg = strings.TrimPrefix(msg, "unmarshal errors:")
	var parts []string
	first := 0
	for _, part := range strings.Split(msg, "\n") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if m := yamlLine.FindStringSubmatchIndex(part); m != nil && m[0] == 0 {
			n, _ := strconv.Atoi(part[m[2]:m[3]])
			if first == 0 {
				first = n + offset
			}
			part = strings.TrimPrefix(strings.TrimSpace(part[m[1]:]), ":")
			part = fmt.Sprintf("line %d: %s", n+offset, strings.TrimSpace(plainYAML(part, offset)))
		} else {
			part = plainYAML(part, offset)
		}
		parts = append(parts, part)
	}
	return first, strings.Join(parts, "; ")
}

func plainYAML(s string, offset int) string {
	s = yamlDuplicate.ReplaceAllStringFunc(s, func(m string) string {
		sub := yamlDuplicate.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		return fmt.Sprintf("key %q appears twice (first on line %d); keep one", sub[1], n+offset)
	})
	s = yamlUnmarshal.ReplaceAllStringFunc(s, func(m string) string {
		sub := yamlUnmarshal.FindStringSubmatch(m)
		got, want := yamlTagNames[sub[1]], goTypeNames[sub[3]]
		if got == "" {
			got = "a value"
		}
		if want == "" {
			switch {
			case strings.HasPrefix(sub[3], "[]"):
				want = "a list"
			case strings.HasPrefix(sub[3], "map["):
				want = "a mapping"
			default:
				want = "another kind of value"
			}
		}
		if sub[2] != "" {
			return fmt.Sprintf("%q is %s; %s is expected here", sub[2], got, want)
		}
		return fmt.Sprintf("found %s where %s is expected", got, want)
	})
	s = yamlInvalidKey.ReplaceAllString(s, "a key must be a plain word, not a list or a mapping")
	return yamlTag.ReplaceAllStringFunc(s, func(t string) string { return "a " + strings.TrimPrefix(t, "!!") + " tag" })
}
