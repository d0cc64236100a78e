// Command dist builds Quire's release files and checks them. `make dist`
// and `make test-dist` run it from the repository's root:
//
//	go run ./internal/dist build [-out dist] [-targets linux/amd64,...] [-vsix=false] [-version v1.2.3]
//	go run ./internal/dist check [-dir dist] [-version V] [-targets ...] [-vsix=false]
//	go run ./internal/dist test  [-out dist] [-targets ...] [-vsix=false]
//
// build cross-compiles quire for every target (-trimpath, the version
// stamp), writes quire_<version>_<os>_<arch>.tar.gz (.zip for Windows)
// with the binary, README.md and LICENSE, the VS Code packages
// (quire-vscode_<version>_<platform>.vsix with the binary, and _universal
// without), and SHA256SUMS. check verifies such a directory: checksums,
// every archive's and package's binary format and architecture (ELF,
// Mach-O, PE). test builds twice — the second time from a copy of the
// tree at another path, into a temporary directory — requires the same
// bytes, checks the first, and, when $CODE_SERVER names code-server,
// installs the host's package in it and runs the binary it unpacked.
//
// The version is the commit's v* tag, else a Go pseudo-version, with
// "+dirty" when git sees changes; the date is the commit's time, or
// SOURCE_DATE_EPOCH when set.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", "dist")
	if err := run(ctx, os.Args[1:], os.Stdout, log); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

// flags common to the three commands.
type flags struct {
	out, version, targets string
	vsix                  bool
}

func run(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		return errors.New("usage: dist build|check|test [flags] (see go doc ./internal/dist)")
	}
	fs := flag.NewFlagSet("dist "+args[0], flag.ContinueOnError)
	var f flags
	fs.StringVar(&f.out, "out", "dist", "the release directory")
	fs.StringVar(&f.out, "dir", "dist", "the release directory (check)")
	fs.StringVar(&f.version, "version", "", "the version (default: from git)")
	fs.StringVar(&f.targets, "targets", "", "os/arch,... (default: every release target)")
	fs.BoolVar(&f.vsix, "vsix", true, "also the VS Code packages")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ts, err := parseTargets(f.targets)
	if err != nil {
		return err
	}
	if f.version != "" && !validVersion.MatchString(f.version) {
		return fmt.Errorf("version %q: use letters, digits and . + - only", f.version)
	}
	src, err := filepath.Abs(".")
	if err != nil {
		return err
	}
	s, err := gitStamp(ctx, src, stampOptions{Version: f.version, SourceDateEpoch: os.Getenv("SOURCE_DATE_EPOCH")})
	if err != nil {
		return err
	}
	bo := buildOptions{Src: src, Out: f.out, Stamp: s, Targets: ts, VSIX: f.vsix, Log: log}
	co := checkOptions{Dir: f.out, Src: src, Version: s.Version, Targets: ts, VSIX: f.vsix}
	switch args[0] {
	case "build":
		log.Info("release", "version", s.Version, "commit", s.Commit, "date", s.Time, "out", f.out)
		return build(ctx, bo)
	case "check":
		return report(stdout, co)
	case "test":
		if err := reproduce(ctx, bo); err != nil {
			return err
		}
		if err := report(stdout, co); err != nil {
			return err
		}
		return installReport(ctx, stdout, f, co)
	}
	return fmt.Errorf("unknown command %q: want build, check or test", args[0])
}

// installReport runs installCheck when $CODE_SERVER names code-server
// and the packages were built.
func installReport(ctx context.Context, w io.Writer, f flags, o checkOptions) error {
	cs := os.Getenv("CODE_SERVER")
	if cs == "" || !f.vsix {
		fmt.Fprintln(w, "skipped: installing the host's .vsix in VS Code (set CODE_SERVER to code-server)")
		return nil
	}
	line, err := installCheck(ctx, cs, o.Dir, o.Version)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "ok", line)
	return nil
}

var validVersion = regexp.MustCompile(`^[A-Za-z0-9.+-]+$`)

func report(w io.Writer, o checkOptions) error {
	lines, err := check(o)
	for _, l := range lines {
		fmt.Fprintln(w, "ok", l)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "ok %s: %d files match %s\n", o.Dir, len(lines), sumsFile)
	return nil
}
