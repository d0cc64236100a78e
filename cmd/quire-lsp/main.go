// Command quire-lsp runs Quire's language server on stdin and stdout, for
// editors and the editor integration tests until `quire lsp` takes its place.
//
//	quire-lsp [--log FILE] [--root DIR]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/quirehq/quire/lsp"
)

func main() {
	os.Exit(run())
}

func run() int {
	logFile := flag.String("log", "", "write the log to `FILE` instead of stderr")
	root := flag.String("root", "", "workspace `DIR` (default: the root the editor names)")
	flag.Parse()

	var out io.Writer = os.Stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "quire-lsp: open log: %v\n", err)
			return 2
		}
		defer f.Close()
		out = f
	}
	log := slog.New(slog.NewTextHandler(out, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := lsp.Serve(ctx, lsp.Stdio(), lsp.Options{Logger: log, Root: *root, Watch: true})
	if err != nil {
		log.Info("language server stopped", "err", err)
	}
	return lsp.ExitCode(err)
}
