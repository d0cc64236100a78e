package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/lsp"
)

type lspOptions struct {
	logFile   string
	logFormat string
	root      string
	skills    string
	stdio     bool
}

func lspCommand() *command {
	return &command{
		name:    "lsp",
		summary: "run the language server on stdin and stdout (for editors)",
		help: `
Speaks the Language Server Protocol on stdin and stdout. Editors start it:
the VS Code extension in editors/vscode and the Neovim plugin in
editors/nvim. It reads the workspace from disk overlaid with the editor's
unsaved buffers, so its diagnostics and its prompt preview (the command
quire.previewPrompt) are exactly what the daemon serves once the files are
saved and pushed. It watches the workspace for changes made outside the
editor.

Logs go to stderr, or to --log FILE; never to stdout. The exit status is 0
after the client's shutdown and exit, 1 when the client exits without
shutdown or the stream ends.`,
		flags: func(fs *flag.FlagSet) any {
			o := &lspOptions{}
			fs.StringVar(&o.logFile, "log", "", "append the log to `file` instead of stderr")
			fs.StringVar(&o.logFormat, "log-format", "text", "log `format`: text or json")
			fs.StringVar(&o.root, "root", "", "workspace `directory` (default: the folder the editor opens)")
			fs.StringVar(&o.skills, "skills-dir", "", "managed skills `directory` shared by every agent, as the daemon's --skills-dir (also settable once as skills-dir: in the config file)")
			fs.BoolVar(&o.stdio, "stdio", true, "talk over stdin and stdout (the only transport; accepted for editors that pass it)")
			return o
		},
		run: runLSP,
	}
}

func runLSP(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*lspOptions)
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return usagef("--log-format %q: use text or json", o.logFormat)
	}
	logTo := e.stderr
	if o.logFile != "" {
		f, err := os.OpenFile(o.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--log: %w", err)
		}
		defer f.Close()
		logTo = f
	}
	log, err := newLogger(logTo, "info", o.logFormat)
	if err != nil {
		return err
	}
	err = lsp.Serve(ctx, stdioStream{r: e.stdin, w: e.stdout}, lsp.Options{Logger: log, Root: o.root, Watch: true, HomeDir: e.getenv("HOME"), SkillsDir: o.skills, Version: buildStamp().version})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lsp.ErrExitWithoutShutdown) && ctx.Err() != nil:
		log.Info("stopped", daemon.StopCause(ctx)...)
		return exitError{exitFindings}
	case errors.Is(err, lsp.ErrExitWithoutShutdown):
		log.Info("language server stopped without shutdown")
		return exitError{exitFindings}
	default:
		return err
	}
}

// stdioStream joins the command's stdin and stdout into the stream the
// server reads and writes.
type stdioStream struct {
	r io.Reader
	w io.Writer
}

func (s stdioStream) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s stdioStream) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s stdioStream) Close() error {
	var errs []error
	for _, c := range []any{s.r, s.w} {
		if closer, ok := c.(io.Closer); ok {
			errs = append(errs, closer.Close())
		}
	}
	return errors.Join(errs...)
}
