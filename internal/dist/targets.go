package main

import (
	"fmt"
	"strings"
)

// target is one platform a release is built for.
type target struct {
	GOOS, GOARCH string
}

// targets are the platforms `make dist` builds, in the order it builds
// them (issue #25: linux, darwin and windows on amd64 and arm64, and
// freebsd/amd64).
var targets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
	{"freebsd", "amd64"},
}

func (t target) String() string { return t.GOOS + "/" + t.GOARCH }

// exe is the binary's file name on the target.
func (t target) exe() string {
	if t.GOOS == "windows" {
		return "quire.exe"
	}
	return "quire"
}

// archiveExt is ".zip" for Windows, ".tar.gz" for the others.
func (t target) archiveExt() string {
	if t.GOOS == "windows" {
		return ".zip"
	}
	return ".tar.gz"
}

// archiveBase is the archive's name without its extension, and the
// directory its files are in: quire_<version>_<os>_<arch>.
func (t target) archiveBase(version string) string {
	return fmt.Sprintf("quire_%s_%s_%s", version, t.GOOS, t.GOARCH)
}

// vsceTarget is the VS Code platform the target's binary serves
// (`vsce package --target`), "" when VS Code has none (FreeBSD).
func (t target) vsceTarget() string {
	os := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[t.GOOS]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[t.GOARCH]
	if os == "" || arch == "" {
		return ""
	}
	return os + "-" + arch
}

// vsixName is the name of the extension package for a VS Code platform,
// "universal" for the one without a binary.
func vsixName(version, vsceTarget string) string {
	return fmt.Sprintf("quire-vscode_%s_%s.vsix", version, vsceTarget)
}

// universal names the extension package that carries no binary.
const universal = "universal"

// parseTargets reads a comma-separated list of os/arch pairs; "" is every
// target.
func parseTargets(s string) ([]target, error) {
	if s == "" {
		return targets, nil
	}
	var out []target
	for _, f := range strings.Split(s, ",") {
		os, arch, ok := strings.Cut(strings.TrimSpace(f), "/")
		t := target{os, arch}
		if !ok || !known(t) {
			return nil, fmt.Errorf("target %q: not one of %v (write os/arch, comma-separated)", f, targets)
		}
		out = append(out, t)
	}
	return out, nil
}

func known(t target) bool {
	for _, k := range targets {
		if k == t {
			return true
		}
	}
	return false
}
