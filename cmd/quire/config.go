package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/quirehq/quire/internal/xdg"
	"github.com/quirehq/quire/workspace"
)

// applyDefaults fills flags that were not given on the command line from
// QUIRE_<FLAG> environment variables, then from the config file
// ($XDG_CONFIG_HOME/quire/config.yaml, or ~/.config/quire/config.yaml). The
// file holds flag names as top-level keys, or per command under the
// command's name:
//
//	user: alice
//	prompt:
//	  session: main
//
// A variable or a top-level key serves every command that has the flag
// and is ignored by the others (QUIRE_AGENT is no mistake for `quire
// serve`, which has no --agent); one that no command has, or a key under
// a command's name that the command lacks, is a warning on e.stderr with
// the likely intended name.
func applyDefaults(fs *flag.FlagSet, cmd string, e *env, cmds []*command) error {
	known := flagsByCommand(cmds)
	warnUnknownVariables(e, known)
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var fromFile map[string]string
	var fileErr error
	loaded := false
	var outErr error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || outErr != nil {
			return
		}
		envName := flagVariable(f.Name)
		if v := e.getenv(envName); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				outErr = fmt.Errorf("%s=%q: %w", envName, v, err)
			}
			return
		}
		if !loaded {
			fromFile, fileErr = loadConfigFile(cmd, e.getenv, e.stderr, known)
			loaded = true
		}
		if fileErr != nil {
			outErr = fileErr
			return
		}
		if v, ok := fromFile[f.Name]; ok {
			if err := fs.Set(f.Name, v); err != nil {
				outErr = fmt.Errorf("config file: %s: %w", f.Name, err)
			}
		}
	})
	return outErr
}

// flagVariable is the environment variable of flag name: QUIRE_<NAME>.
func flagVariable(name string) string {
	return "QUIRE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// flagsByCommand returns each command's flag names, in the order they
// are printed.
func flagsByCommand(cmds []*command) map[string][]string {
	out := map[string][]string{}
	for _, c := range cmds {
		fs := newFlagSet(c, io.Discard)
		if c.flags != nil {
			c.flags(fs)
		}
		names := []string{}
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		out[c.name] = names
	}
	return out
}

// allFlags returns the flag names of every command, sorted, once each.
func allFlags(known map[string][]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, names := range known {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// otherVariable reports whether a QUIRE_ variable is read by something
// other than a flag: by quire itself (QUIRE_CONFIG, QUIRE_EMBED_KEY, QUIRE_LLM_KEY,
// QUIRE_UPSTREAM_TOKEN), by the MCP client configurations the README
// shows (QUIRE_TOKEN), or by Quire's own tests, Makefile and .ci scripts
// (QUIRE_TEST_*, QUIRE_PG_*, QUIRE_LSP, QUIRE_BIN, QUIRE_GLOVE_FILE,
// QUIRE_LOCOMO_DIR), which pass their environment on to quire.
func otherVariable(name string) bool {
	switch name {
	case "QUIRE_CONFIG", "QUIRE_EMBED_KEY", "QUIRE_LLM_KEY", "QUIRE_UPSTREAM_TOKEN", "QUIRE_TOKEN",
		"QUIRE_LSP", "QUIRE_BIN", "QUIRE_GLOVE_FILE", "QUIRE_LOCOMO_DIR":
		return true
	}
	return strings.HasPrefix(name, "QUIRE_TEST_") || strings.HasPrefix(name, "QUIRE_PG_")
}

// warnUnknownVariables warns about each QUIRE_ variable of the
// environment (set and not empty) that no flag of any command and
// nothing else reads: a misspelt one would be ignored without a word.
func warnUnknownVariables(e *env, known map[string][]string) {
	if e.environ == nil {
		return
	}
	vars := map[string]bool{}
	candidates := []string{"CONFIG", "EMBED_KEY"} // after QUIRE_, which all share
	for _, n := range allFlags(known) {
		v := flagVariable(n)
		vars[v] = true
		candidates = append(candidates, strings.TrimPrefix(v, "QUIRE_"))
	}
	var unknown []string
	for _, kv := range e.environ() {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "QUIRE_") || value == "" || vars[name] || otherVariable(name) {
			continue
		}
		unknown = append(unknown, name)
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		msg := "quire: warning: unknown environment variable " + name
		if s := suggest(strings.TrimPrefix(name, "QUIRE_"), candidates); s != "" {
			msg += " (did you mean QUIRE_" + s + "?)"
		}
		fmt.Fprintln(e.stderr, msg)
	}
}

// configPath returns the config file's path, or "" when there is no home.
func configPath(getenv func(string) string) string {
	if p := getenv("QUIRE_CONFIG"); p != "" {
		return p
	}
	dir := xdg.ConfigDir(getenv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "config.yaml")
}

// loadConfigFile returns the flag values the config file holds for cmd,
// and warns on warn about the keys no command reads.
func loadConfigFile(cmd string, getenv func(string) string, warn io.Writer, known map[string][]string) (map[string]string, error) {
	p := configPath(getenv)
	if p == "" {
		return nil, nil
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	var doc yaml.Node
	var raw map[string]any
	err = yaml.Unmarshal(data, &doc)
	if err == nil && doc.Kind != 0 {
		err = doc.Decode(&raw)
	}
	if err != nil {
		_, msg := workspace.YAMLMessage(err, 0)
		return nil, fmt.Errorf("config file %s: %s", p, msg)
	}
	for _, w := range unknownConfigKeys(&doc, known) {
		fmt.Fprintf(warn, "quire: warning: config file %s: %s\n", p, w)
	}
	out := map[string]string{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, isMap := raw[k].(map[string]any); !isMap {
			out[k] = fmt.Sprint(raw[k])
		}
	}
	if sub, ok := raw[cmd].(map[string]any); ok {
		for k, v := range sub {
			out[k] = fmt.Sprint(v)
		}
	}
	return out, nil
}

// unknownConfigKeys names, with their lines, the keys of a config file
// no command reads: a top-level key that is no command's flag (nor a
// command holding flags), a key under a command that it has no flag for.
func unknownConfigKeys(doc *yaml.Node, known map[string][]string) []string {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	flags := allFlags(known)
	isFlag := map[string]bool{}
	for _, f := range flags {
		isFlag[f] = true
	}
	var cmdNames []string
	for name := range known {
		cmdNames = append(cmdNames, name)
	}
	sort.Strings(cmdNames)
	var out []string
	top := doc.Content[0].Content
	for i := 0; i+1 < len(top); i += 2 {
		k, v := top[i], top[i+1]
		cmdFlags, isCmd := known[k.Value]
		switch {
		case isCmd && v.Kind == yaml.MappingNode:
			has := map[string]bool{}
			for _, f := range cmdFlags {
				has[f] = true
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				sk := v.Content[j]
				if has[sk.Value] {
					continue
				}
				msg := fmt.Sprintf("line %d: unknown key \"%s.%s\"", sk.Line, k.Value, sk.Value)
				if s := suggest(sk.Value, cmdFlags); s != "" {
					msg += fmt.Sprintf(" (did you mean \"%s.%s\"?)", k.Value, s)
				} else if isFlag[sk.Value] {
					msg += fmt.Sprintf(": quire %s has no flag --%s", k.Value, sk.Value)
				}
				out = append(out, msg)
			}
		case isFlag[k.Value] && v.Kind != yaml.MappingNode:
		default:
			msg := fmt.Sprintf("line %d: unknown key %q", k.Line, k.Value)
			if s := suggest(k.Value, append(append([]string(nil), flags...), cmdNames...)); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			out = append(out, msg)
		}
	}
	return out
}
