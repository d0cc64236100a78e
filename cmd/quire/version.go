package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/quirehq/quire/prompt"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version or "devel" is shown.
var version = ""

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print Quire's version and build information",
		flags:   func(*flag.FlagSet) any { return nil },
		run: func(ctx context.Context, e *env, _ any, args []string) error {
			if len(args) > 0 {
				return usagef("version takes no arguments")
			}
			fmt.Fprintf(e.stdout, "quire %s\n", buildVersion())
			fmt.Fprintf(e.stdout, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if info, ok := debug.ReadBuildInfo(); ok {
				for _, s := range info.Settings {
					if s.Key == "vcs.revision" || s.Key == "vcs.time" || s.Key == "vcs.modified" {
						fmt.Fprintf(e.stdout, "%s %s\n", s.Key, s.Value)
					}
				}
			}
			fmt.Fprintf(e.stdout, "tokenizer %s\n", prompt.DefaultEncoding)
			return nil
		},
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
