package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// installCheck installs the host's platform package in a real VS Code
// (code-server, the one make test-vscode drives) and runs the binary it
// unpacked: VS Code keeps the package's layout and the binary's mode, so
// the extension finds bin/quire and can run it. It returns what it saw.
func installCheck(ctx context.Context, codeServer, dir, version string) (string, error) {
	host := target{runtime.GOOS, runtime.GOARCH}
	if !known(host) || host.vsceTarget() == "" {
		return fmt.Sprintf("no install check: %s has no VS Code package", host), nil
	}
	vsix := filepath.Join(dir, vsixName(version, host.vsceTarget()))
	tmp, err := os.MkdirTemp("", "quire-vsix-install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ext := filepath.Join(tmp, "extensions")
	cmd := exec.CommandContext(ctx, codeServer, "--user-data-dir", filepath.Join(tmp, "user"),
		"--extensions-dir", ext, "--install-extension", vsix)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("code-server --install-extension %s: %w: %s", vsix, err, out)
	}
	bins, err := filepath.Glob(filepath.Join(ext, "*", bundledDir, host.exe()))
	if err != nil || len(bins) != 1 {
		return "", fmt.Errorf("installing %s left %d %s/%s in %s, want 1", filepath.Base(vsix), len(bins), bundledDir, host.exe(), ext)
	}
	out, err := exec.CommandContext(ctx, bins[0], "version").Output()
	if err != nil {
		return "", fmt.Errorf("the installed %s: %w", bins[0], err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	if first != "quire "+version {
		return "", fmt.Errorf("the installed %s says %q, want %q", bins[0], first, "quire "+version)
	}
	rel, _ := filepath.Rel(ext, bins[0])
	return fmt.Sprintf("%s installs in code-server; its %s runs: %s", filepath.Base(vsix), rel, first), nil
}
