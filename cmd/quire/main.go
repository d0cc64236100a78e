// Command quire keeps AI agents' workspaces in git and turns them into
// what a chat client needs: assembled system prompts, memory and skill
// search, and a daemon that deploys on git push.
//
// Run `quire help` for the commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// stopGrace is how long a command may take to return after SIGINT or
// SIGTERM before the process exits anyway; a second signal exits at once.
// The daemon and the language server shut down within it (the daemon's
// in-flight requests get their own, longer, grace once asked to stop, and
// a second signal cuts that short).
const stopGrace = time.Second

func main() {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(context.Background())
	graceful := len(os.Args) > 1 && (os.Args[1] == "serve" || os.Args[1] == "lsp")
	go func() {
		sig := <-signals
		cancel(signalStop{sig})
		wait := time.After(stopGrace)
		if graceful {
			wait = nil // only a second signal
		}
		select {
		case <-signals:
		case <-wait:
		}
		fmt.Fprintf(os.Stderr, "quire: stopped by %v\n", sig)
		os.Exit(130)
	}()
	code := run(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, environ: os.Environ})
	os.Exit(code)
}

// signalStop is the cause of the context's end when a signal stopped
// the process: the daemon logs "stopped" with the signal, at INFO, as
// the end of a clean stop.
type signalStop struct{ sig os.Signal }

func (s signalStop) Error() string     { return "stopped by " + s.sig.String() }
func (s signalStop) Signal() os.Signal { return s.sig }
func (s signalStop) Unwrap() error     { return context.Canceled }
