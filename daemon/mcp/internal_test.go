package mcp

import (
	"encoding/json"
	"io/fs"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// FuzzWindow: memory_get's window never returns more than MaxGetBytes,
// returns text of the file only, splits no character, and says where to
// go on whenever it stops early.
func FuzzWindow(f *testing.F) {
	f.Add("# Memory\n\nline one\nline two\n", 1, 0)
	f.Add("a\nb\nc", 2, 1)
	f.Add(strings.Repeat("é", MaxGetBytes), 1, 0)
	f.Add(strings.Repeat("x\n", MaxGetBytes), 3, 0)
	f.Add("", 5, 5)
	f.Fuzz(func(t *testing.T, content string, from, lines int) {
		if from < 0 || lines < 0 {
			return // refused before window is called
		}
		out := window(api.File{Content: content, ETag: "e"}, "MEMORY.md", getIn{From: from, Lines: lines})
		if len(out.Text) > MaxGetBytes {
			t.Fatalf("%d bytes returned, over the cap of %d", len(out.Text), MaxGetBytes)
		}
		if !strings.Contains(content, out.Text) {
			t.Fatalf("text %q is not part of the file", out.Text)
		}
		if utf8.ValidString(content) && !utf8.ValidString(out.Text) {
			t.Fatalf("text %q splits a character", out.Text)
		}
		if out.NextFrom != 0 && (!out.Truncated || out.NextFrom != out.To+1 || out.NextFrom > out.TotalLines) {
			t.Fatalf("next_from %d with truncated %v, to %d of %d lines", out.NextFrom, out.Truncated, out.To, out.TotalLines)
		}
		if from <= 1 && lines == 0 && !out.Truncated && out.Text != content {
			t.Fatalf("whole file asked, %q returned of %q without saying it was cut", out.Text, content)
		}
		if out.Truncated && out.NextFrom == 0 && out.To < out.TotalLines {
			t.Fatalf("cut at line %d of %d without next_from", out.To, out.TotalLines)
		}
	})
}

// FuzzResolve: a resource URI resolves to a clean path of the agent's
// workspace, and to users/ only through the session's own user.
func FuzzResolve(f *testing.F) {
	for _, uri := range []string{"quire://alpha/SOUL.md", "quire://alpha/users/alice/MEMORY.md", "quire://alpha/users/bob/MEMORY.md",
		"quire://alpha/users/alice/../bob/USER.md", "quire://alpha/users%2Fbob%2FUSER.md", "quire://beta/SOUL.md", "quire://alpha/../beta/SOUL.md", "quire://alpha/Users/bob/MEMORY.md"} {
		f.Add(uri, "alice")
		f.Add(uri, "")
	}
	f.Fuzz(func(t *testing.T, uri, user string) {
		s := &server{id: Identity{Agent: "alpha", User: user}}
		who, p, err := s.resolve(uri)
		if err != nil {
			return
		}
		if !fs.ValidPath(p) || p == "." || strings.Contains(p, `\`) {
			t.Fatalf("%s resolved to unclean path %q", uri, p)
		}
		if first, _, _ := strings.Cut(p, "/"); strings.EqualFold(first, "users") {
			t.Fatalf("%s resolved to %q under users/", uri, p)
		}
		if who != "" && who != user {
			t.Fatalf("%s resolved to user %q in %q's session", uri, who, user)
		}
	})
}

// TestSDKInfoIsDebug: the SDK's routine INFO lines do not reach an
// operator's INFO log; its warnings do.
func TestSDKInfoIsDebug(t *testing.T) {
	var buf strings.Builder
	log := sdkLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	log.Info("server session connected")
	log.With("k", "v").Warn("something to act on")
	if out := buf.String(); strings.Contains(out, "session connected") || !strings.Contains(out, "level=WARN msg=\"something to act on\" k=v") {
		t.Errorf("log:\n%s", out)
	}
}

// MCP dates a hit exactly when the shared daily-log table says its path
// is a daily log.
func TestLogDate(t *testing.T) {
	for _, c := range testenv.DailyLogCases(t) {
		want := ""
		if c.IsLog() {
			want = c.Day.Format(time.DateOnly)
		}
		if got := logDate(c.Path); got != want {
			t.Errorf("logDate(%q) = %q, want %q", c.Path, got, want)
		}
	}
}

// quickChecks are the quick checks of every tool's arguments and the
// validators they stand in for.
func quickChecks() map[string]struct {
	quick *flatSchema
	full  *jsonschema.Resolved
} {
	type pair = struct {
		quick *flatSchema
		full  *jsonschema.Resolved
	}
	return map[string]pair{
		"memory_search": {searchArgs.quick, searchArgs.resolved},
		"memory_get":    {getArgs.quick, getArgs.resolved},
		"memory_append": {appendArgs.quick, appendArgs.resolved},
		"memory_write":  {writeArgs.quick, writeArgs.resolved},
		"skill_search":  {skillSearchArgs.quick, skillSearchArgs.resolved},
		"skill_get":     {skillGetArgs.quick, skillGetArgs.resolved},
	}
}

// TestQuickCheck: every tool's arguments have the quick check, which
// passes ordinary arguments and leaves the rest to the validator.
func TestQuickCheck(t *testing.T) {
	for tool, c := range quickChecks() {
		if c.quick == nil {
			t.Errorf("%s: no quick check; its schema says more than flatSchema covers", tool)
		}
	}
	q := searchArgs.quick
	for raw, want := range map[string]bool{
		`{"query":"printer"}`:                            true,
		`{"query":"printer","limit":50,"min_score":0.2}`: true,
		`{"query":"printer","limit":51}`:                 false,
		`{"query":"printer","limit":0}`:                  false,
		`{"query":"printer","limit":2.5}`:                false,
		`{"query":"printer","limit":"2"}`:                false,
		`{"query":null}`:                                 false,
		`{"query":3}`:                                    false,
		`{"query":"x","colour":"red"}`:                   false,
		`{}`:                                             false,
		`null`:                                           false,
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		if got := q.valid(m); got != want {
			t.Errorf("valid(%s) = %v, want %v", raw, got, want)
		}
	}
	var m map[string]any
	json.Unmarshal([]byte(`{"path":"MEMORY.md","scope":"user","from":3}`), &m)
	if !getArgs.quick.valid(m) {
		t.Errorf("memory_get %v: not passed", m)
	}
	m["scope"] = "alice"
	if getArgs.quick.valid(m) {
		t.Errorf("memory_get %v: passed a scope outside the enum", m)
	}
}

// FuzzQuickCheck: arguments the quick check passes are arguments the
// schema's validator passes.
func FuzzQuickCheck(f *testing.F) {
	for _, raw := range []string{`{"query":"printer"}`, `{"query":"x","limit":50,"min_score":-1}`, `{"path":"MEMORY.md","scope":"agent","from":1,"lines":1e3}`,
		`{"path":"a","content":"","if_match":"*"}`, `{"name":"greeting"}`, `{"text":"tea"}`, `{"query":"x","limit":1.0}`, `{"scope":null}`} {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var m map[string]any
		if json.Unmarshal([]byte(raw), &m) != nil {
			return
		}
		for tool, c := range quickChecks() {
			if c.quick.valid(m) {
				if err := c.full.Validate(m); err != nil {
					t.Fatalf("%s %s: quick check passed, validator refused: %v", tool, raw, err)
				}
			}
		}
	})
}

// TestNullIsAbsent: null for an argument is the argument left out, for
// optional and required ones alike, and never an <invalid reflect.Value>.
func TestNullIsAbsent(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want getIn
		err  string
	}{
		{`{"path":"MEMORY.md","scope":null,"from":null,"lines":null}`, getIn{Path: "MEMORY.md"}, ""},
		{`{"path":"MEMORY.md","from":2,"scope":"agent"}`, getIn{Path: "MEMORY.md", From: 2, Scope: "agent"}, ""},
		{`{"path":null}`, getIn{}, `missing properties: ["path"]`},
		{`null`, getIn{}, `missing properties: ["path"]`},
		{`{"path":"MEMORY.md","colour":null}`, getIn{Path: "MEMORY.md"}, ""},
	} {
		got, err := getArgs.decode(json.RawMessage(c.raw))
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %+v, %v; want %+v", c.raw, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want an error saying %s", c.raw, err, c.err)
		case err != nil && strings.Contains(err.Error(), "invalid reflect.Value"):
			t.Errorf("%s: %v", c.raw, err)
		}
	}
}
