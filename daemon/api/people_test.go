package api

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTokenFile(t *testing.T) {
	cases := []struct {
		name, line string
		agents     []string
		person     Person
		err        string
	}{
		{"agents only", "tok a,b", []string{"a", "b"}, Person{ID: TokenID("tok")}, ""},
		{"a person", `tok * name="Ada Lovelace" email=ada@example.com id=ada`, []string{"*"}, Person{ID: "ada", Name: "Ada Lovelace", Email: "ada@example.com"}, ""},
		{"a name without email", `tok bot name=Bob`, []string{"bot"}, Person{ID: TokenID("tok"), Name: "Bob"}, ""},
		{"no agents", `tok name=Bob`, nil, Person{}, "want a token followed by the agents"},
		{"an unknown field", `tok * role=admin`, nil, Person{}, `unknown field "role"`},
		{"an open quote", `tok * name="Ada`, nil, Person{}, "not closed"},
		{"an empty token", `"" *`, nil, Person{}, "a token or an agent is empty"},
		{"an empty agent", `tok a,""`, nil, Person{}, "a token or an agent is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			toks, people, err := ParseTokenFile(strings.NewReader("# comment\n\n" + c.line + "\n"))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(toks["tok"], c.agents) {
				t.Errorf("agents %v, want %v", toks["tok"], c.agents)
			}
			if p, ok := people.Person("tok"); !ok || p != c.person {
				t.Errorf("person %+v, want %+v", p, c.person)
			}
		})
	}
	if _, ok := (People{"tok": {ID: "x"}}).Person("other"); ok {
		t.Error("a person for an unknown token")
	}
}
