package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit codes (interfaces.md): 0 ok, 1 findings or errors, 2 usage.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
)

// env is what a command may touch of the process: its streams and its
// environment. Tests substitute their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// environ lists the environment as KEY=VALUE, to warn about QUIRE_
	// variables no flag reads; nil: no warnings.
	environ func() []string
}

// command is one `quire` subcommand.
type command struct {
	name    string
	args    string // synopsis of the arguments after the flags
	summary string // one line for `quire help`
	help    string // paragraphs for `quire help NAME`, after the synopsis
	flags   func(fs *flag.FlagSet) any
	run     func(ctx context.Context, e *env, opts any, args []string) error
}

// commands returns the command table: the one place subcommands are listed.
func commands() []*command {
	return []*command{
		initCommand(),
		checkCommand(),
		promptCommand(),
		skillsCommand(),
		searchCommand(),
		summonCommand(),
		consolidateCommand(),
		mcpCommand(),
		serveCommand(),
		indexCommand(),
		statusCommand(),
		uiCommand(),
		doctorCommand(),
		credentialCommand(),
		lspCommand(),
		versionCommand(),
		helpCommand(),
	}
}

// usageError makes run exit with code 2 and print the command's synopsis.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitError carries an exit code for a command that has already printed
// what went wrong (e.g. `quire check` with findings).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// run runs the command args name. What goes wrong is printed once, as
// "quire NAME: what", so errors returned by a command never start with
// that prefix themselves.
func run(ctx context.Context, args []string, e *env) int {
	cmds := commands()
	if len(args) == 0 {
		printOverview(e.stderr, cmds)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	c := find(cmds, name)
	if c == nil {
		unknownCommand(e.stderr, name, cmds)
		return exitUsage
	}
	// flag's own messages are not printed: a parse error is said below,
	// with a suggestion and the synopsis, and -help prints the help once.
	fs := newFlagSet(c, io.Discard)
	var opts any
	if c.flags != nil {
		opts = c.flags(fs)
	}
	fs.Usage = func() {}
	positional, err := parseInterspersed(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(e.stdout, c, fs)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "quire %s: %s\n", c.name, flagError(err, fs))
		printUsageLine(e.stderr, c, fs)
		return exitUsage
	}
	if err := applyDefaults(fs, c.name, e, cmds); err != nil {
		fmt.Fprintf(e.stderr, "quire %s: %v\n", c.name, err)
		return exitUsage
	}
	err = c.run(ctx, e, opts, positional)
	var ue usageError
	var xe exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "quire %s: %s\n", c.name, ue.msg)
		printUsageLine(e.stderr, c, fs)
		return exitUsage
	case errors.As(err, &xe):
		return xe.code
	default:
		fmt.Fprintf(e.stderr, "quire %s: %v\n", c.name, err)
		return exitFindings
	}
}

// flagError says what flag.Parse refused, naming an unknown flag's
// likely intended one.
func flagError(err error, fs *flag.FlagSet) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err.Error()
	}
	name = strings.TrimPrefix(name, "-")
	msg := "unknown flag --" + name
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := suggest(name, names); s != "" {
		msg += " (did you mean --" + s + "?)"
	}
	return msg
}

// printUsageLine prints the command's synopsis in one line and where the
// rest is, after a usage error.
func printUsageLine(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n", synopsis(c, fs))
	if hasFlags(fs) {
		fmt.Fprintf(w, "Run 'quire help %s' for the flags.\n", c.name)
	} else {
		fmt.Fprintf(w, "Run 'quire help %s' for usage.\n", c.name)
	}
}

// unknownCommand says that name is no command, and which one it may be.
func unknownCommand(w io.Writer, name string, cmds []*command) {
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	msg := fmt.Sprintf("quire: unknown command %q", name)
	if s := suggest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	fmt.Fprintf(w, "%s\nRun 'quire help' for the commands.\n", msg)
}

func helpCommand() *command {
	return &command{
		name:    "help",
		args:    "[COMMAND]",
		summary: "list the commands, or print a command's usage, examples and flags",
		help: `
Without COMMAND, lists the commands. With one, prints its synopsis, what it
does, its examples and its flags; 'quire COMMAND --help' prints the same.

Examples:
  quire help
  quire help prompt`,
		flags: func(*flag.FlagSet) any { return nil },
		run:   runHelp,
	}
}

func runHelp(ctx context.Context, e *env, _ any, args []string) error {
	cmds := commands()
	switch len(args) {
	case 0:
		printOverview(e.stdout, cmds)
		return nil
	case 1:
	default:
		return usagef("name one command, got %d arguments", len(args))
	}
	c := find(cmds, args[0])
	if c == nil {
		unknownCommand(e.stderr, args[0], cmds)
		return exitError{exitUsage}
	}
	fs := newFlagSet(c, io.Discard)
	if c.flags != nil {
		c.flags(fs)
	}
	printCommandHelp(e.stdout, c, fs)
	return nil
}

// parseInterspersed parses flags wherever they appear among the
// arguments, as people expect ("quire init ws --agent bot"); everything
// after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func find(cmds []*command, name string) *command {
	for _, c := range cmds {
		if c.name == name {
			return c
		}
	}
	return nil
}

func newFlagSet(c *command, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("quire "+c.name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}

func printOverview(w io.Writer, cmds []*command) {
	fmt.Fprint(w, `Quire keeps AI agents' workspaces (AGENTS.md, SOUL.md, MEMORY.md, skills …) in git
and turns them into system prompts, memory search and skill search.

Usage:
  quire <command> [flags] [arguments]

Commands:
`)
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprint(w, `
Run 'quire help <command>' for a command's flags and examples.
Flags can also be set with QUIRE_<FLAG> environment variables (e.g. QUIRE_AGENT)
or in $XDG_CONFIG_HOME/quire/config.yaml; flags win over the environment,
which wins over the file. A variable or a top-level key of the file serves
every command that has the flag; a key under a command's name (prompt:
session: cron) serves that command only. Unknown ones are warned about.
`)
}

// synopsis is "quire NAME [flags] ARGS", without what the command lacks.
func synopsis(c *command, fs *flag.FlagSet) string {
	s := "quire " + c.name
	if hasFlags(fs) {
		s += " [flags]"
	}
	if c.args != "" {
		s += " " + c.args
	}
	return s
}

func hasFlags(fs *flag.FlagSet) bool {
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	return has
}

func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", synopsis(c, fs), c.summary)
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.help))
	}
	if hasFlags(fs) {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

// writeJSON prints v as indented JSON for scripts and people: <, > and &
// as themselves, not \u003c escapes (nothing here is HTML).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
