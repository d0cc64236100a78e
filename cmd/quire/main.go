// Command quire keeps AI agents' workspaces in git and turns them into
// what a chat client needs: assembled system prompts, memory and skill
// search, and a daemon that deploys on git push.
//
// Run `quire help` for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}
