package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// reproduce builds the release into o.Out, then again from a copy of the
// tree at another path into a temporary directory, and fails unless both
// hold the same files with the same bytes. The second build shares the Go
// build cache: what it proves is that nothing of the checkout's path, the
// time of the build or the order of work reaches the files.
func reproduce(ctx context.Context, o buildOptions) error {
	start := time.Now()
	if err := build(ctx, o); err != nil {
		return err
	}
	first := time.Since(start)
	tmp, err := os.MkdirTemp("", "quire-dist-again-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	again := o
	again.Src, again.Out = filepath.Join(tmp, "src"), filepath.Join(tmp, "dist")
	if err := copyTree(ctx, o.Src, again.Src, o.VSIX); err != nil {
		return err
	}
	start = time.Now()
	if err := build(ctx, again); err != nil {
		return fmt.Errorf("the second build, from %s: %w", again.Src, err)
	}
	o.Log.Info("built twice", "first", first.Round(time.Second), "second", time.Since(start).Round(time.Second))
	return sameFiles(o.Out, again.Out)
}

// copyTree copies the files git tracks or would track (so: the tree as it
// is, changes included, nothing ignored) from src to dst, and the
// extension's node_modules when the packages are built.
func copyTree(ctx context.Context, src, dst string, nodeModules bool) error {
	list, err := git(ctx, src, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	for _, name := range strings.Split(list, "\x00") {
		if name == "" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(src, name))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil || !fi.Mode().IsRegular() {
			if err == nil {
				err = fmt.Errorf("not a regular file")
			}
			return fmt.Errorf("copy %s: %w", name, err)
		}
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(name)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	if !nodeModules {
		return nil
	}
	// cp -a, not a symlink: esbuild resolves links, and the bundle would
	// name the first tree's path.
	nm := filepath.Join(extensionDir, "node_modules")
	cmd := exec.CommandContext(ctx, "cp", "-a", filepath.Join(src, nm), filepath.Join(dst, nm))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s: %w: %s", nm, err, out)
	}
	return nil
}

// sameFiles fails unless directories a and b hold the same regular files
// with the same bytes.
func sameFiles(a, b string) error {
	as, err := releaseFiles(a)
	if err != nil {
		return err
	}
	bs, err := releaseFiles(b)
	if err != nil {
		return err
	}
	if !slices.Equal(as, bs) {
		return fmt.Errorf("two builds made different files: %q and %q", as, bs)
	}
	var differ []string
	for _, n := range append(as, sumsFile) {
		x, err := os.ReadFile(filepath.Join(a, n))
		if err != nil {
			return err
		}
		y, err := os.ReadFile(filepath.Join(b, n))
		if err != nil {
			return err
		}
		if !bytes.Equal(x, y) {
			differ = append(differ, n)
		}
	}
	if len(differ) > 0 {
		return fmt.Errorf("not reproducible: two builds of one tree give different bytes for %s", strings.Join(differ, ", "))
	}
	return nil
}
