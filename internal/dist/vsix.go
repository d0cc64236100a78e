package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// The extension's directory, and where a platform package carries the
// binary inside it (the extension looks there: editors/vscode/src).
const (
	extensionDir = "editors/vscode"
	bundledDir   = "bin"
)

// packageExtension makes the VS Code packages: one per VS Code platform of
// the built targets, with that target's binary in bin/, and the universal
// one with none. vsce runs in the extension's directory (its
// vscode:prepublish script bundles the extension); each package is then
// rewritten with sorted entries and the commit's time, so that it is
// reproducible like the archives.
func packageExtension(ctx context.Context, o buildOptions, built map[target]string) error {
	ext := filepath.Join(o.Src, extensionDir)
	tmp, err := os.MkdirTemp("", "quire-vsix-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, t := range o.Targets {
		if t.vsceTarget() == "" {
			continue
		}
		start := time.Now()
		name := vsixName(o.Stamp.Version, t.vsceTarget())
		if err := vscePackage(ctx, ext, tmp, t, built[t], filepath.Join(o.Out, name), o.Stamp.Time); err != nil {
			return err
		}
		o.Log.Info("packaged", "vsix", name, "took", time.Since(start).Round(time.Millisecond))
	}
	name := vsixName(o.Stamp.Version, universal)
	if err := vscePackage(ctx, ext, tmp, target{}, "", filepath.Join(o.Out, name), o.Stamp.Time); err != nil {
		return err
	}
	o.Log.Info("packaged", "vsix", name)
	return nil
}

// vscePackage runs vsce package for t (the zero target: universal), with
// bin copied to bin/ in the extension for the time it runs.
func vscePackage(ctx context.Context, ext, tmp string, t target, bin, out string, mtime time.Time) error {
	raw := filepath.Join(tmp, filepath.Base(out))
	args := []string{"package", "--no-dependencies", "-o", raw}
	if bin != "" {
		ignore, err := platformIgnoreFile(ext, tmp, t)
		if err != nil {
			return err
		}
		clean, err := placeBinary(ext, t, bin)
		if err != nil {
			return err
		}
		defer clean()
		args = append(args, "--target", t.vsceTarget(), "--ignoreFile", ignore)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(ext, "node_modules", ".bin", "vsce"), args...)
	cmd.Dir = ext
	// vsce lists every file it packages: shown only when it fails.
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		return fmt.Errorf("vsce package %v in %s (npm ci there first: make %s/node_modules/.installed): %w", args, ext, extensionDir, err)
	}
	return rezip(raw, out, mtime)
}

// platformIgnoreFile is the extension's .vscodeignore with the bundled
// binary let in.
func platformIgnoreFile(ext, tmp string, t target) (string, error) {
	base, err := os.ReadFile(filepath.Join(ext, ".vscodeignore"))
	if err != nil {
		return "", err
	}
	name := filepath.Join(tmp, t.vsceTarget()+".vscodeignore")
	data := append(base, fmt.Sprintf("\n!%s/%s\n", bundledDir, t.exe())...)
	return name, os.WriteFile(name, data, 0o644)
}

// placeBinary copies bin into the extension's bin/ (mode 0755, which vsce
// keeps and VS Code restores on install) and returns what removes it.
func placeBinary(ext string, t target, bin string) (func(), error) {
	dir := filepath.Join(ext, bundledDir)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	clean := func() { os.RemoveAll(dir) }
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, t.exe()), data, 0o755); err != nil {
		clean()
		return nil, err
	}
	return clean, nil
}
