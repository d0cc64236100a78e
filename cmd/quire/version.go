package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/quirehq/quire/prompt"
)

// The release stamp: `make dist` (internal/dist) sets these with
//
//	-ldflags "-X main.version=v1.2.3 -X main.commit=<sha> -X main.date=<RFC 3339>"
//
// and builds with -buildvcs=false, so the binary does not depend on the
// checkout it was built in. A plain `go build` or `go install` leaves them
// empty, and the version command reads what Go recorded instead.
var (
	version = ""
	commit  = ""
	date    = ""
)

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print Quire's version, commit, build date and toolchain",
		flags:   func(*flag.FlagSet) any { return nil },
		run: func(ctx context.Context, e *env, _ any, args []string) error {
			if len(args) > 0 {
				return usagef("version takes no arguments")
			}
			s := buildStamp()
			fmt.Fprintf(e.stdout, "quire %s\n", s.version)
			fmt.Fprintf(e.stdout, "commit %s\n", s.commit)
			fmt.Fprintf(e.stdout, "date %s\n", s.date)
			fmt.Fprintf(e.stdout, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(e.stdout, "tokenizer %s\n", prompt.DefaultEncoding)
			return nil
		},
	}
}

// buildStamp is this binary's stamp: what `quire version` prints and
// the language server reports as its version.
func buildStamp() stamp {
	info, _ := debug.ReadBuildInfo()
	return stampOf(version, commit, date, info)
}

// stamp is what `quire version` says about the build.
type stamp struct {
	version, commit, date string
}

// stampOf combines the -X stamp with what Go recorded in info (nil when
// the binary has no build information): a stamped field wins, then the
// module version and the vcs.* settings, then "devel" and "unknown". A
// commit built from a modified tree says so.
func stampOf(v, c, d string, info *debug.BuildInfo) stamp {
	s := stamp{version: v, commit: c, date: d}
	var modified bool
	if info != nil {
		if s.version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			s.version = info.Main.Version
		}
		for _, kv := range info.Settings {
			switch kv.Key {
			case "vcs.revision":
				if s.commit == "" {
					s.commit = kv.Value
				}
			case "vcs.time":
				if s.date == "" {
					s.date = kv.Value
				}
			case "vcs.modified":
				modified = c == "" && kv.Value == "true"
			}
		}
	}
	if s.version == "" {
		s.version = "devel"
	}
	if s.commit == "" {
		s.commit = "unknown"
	} else if modified {
		s.commit += " (modified)"
	}
	if s.date == "" {
		s.date = "unknown"
	}
	return s
}

// buildVersion is the version other commands report (the MCP server's
// and the daemon's).
func buildVersion() string {
	info, _ := debug.ReadBuildInfo()
	return stampOf(version, commit, date, info).version
}
