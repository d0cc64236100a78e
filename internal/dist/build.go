package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// buildOptions say what one release build makes and where.
type buildOptions struct {
	Src     string // the repository's root
	Out     string // the directory the release files go to (emptied first)
	Stamp   stamp
	Targets []target
	VSIX    bool // also the VS Code packages
	Log     *slog.Logger
}

// build makes the release files: per target the binary's archive, the VS
// Code packages (one per platform with its binary, and the universal one),
// and SHA256SUMS of them all.
func build(ctx context.Context, o buildOptions) error {
	if err := safeOut(o.Src, o.Out); err != nil {
		return err
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	bins := filepath.Join(o.Out, ".bin")
	defer os.RemoveAll(bins)
	built := map[target]string{}
	for _, t := range o.Targets {
		start := time.Now()
		bin, err := buildBinary(ctx, o, t, filepath.Join(bins, t.GOOS+"_"+t.GOARCH))
		if err != nil {
			return err
		}
		built[t] = bin
		name, err := writeArchive(o, t, bin)
		if err != nil {
			return err
		}
		o.Log.Info("built", "target", t.String(), "archive", name, "binary_bytes", fileSize(bin), "took", time.Since(start).Round(time.Millisecond))
	}
	if o.VSIX {
		if err := packageExtension(ctx, o, built); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(bins); err != nil {
		return err
	}
	return writeSums(o.Out)
}

// buildBinary cross-compiles cmd/quire for t into dir: -trimpath and
// -buildvcs=false keep the checkout's path and state out of the binary,
// CGO_ENABLED=0 the host's C toolchain, and the GOFLAGS and microarchitecture
// levels of the environment are replaced by fixed ones.
func buildBinary(ctx context.Context, o buildOptions, t target, dir string) (string, error) {
	out := filepath.Join(dir, t.exe())
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags="+o.Stamp.ldflags(), "-o", out, "./cmd/quire")
	cmd.Dir = o.Src
	cmd.Env = append(os.Environ(), "GOOS="+t.GOOS, "GOARCH="+t.GOARCH, "CGO_ENABLED=0",
		"GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/quire for %s: %w", t, err)
	}
	return out, nil
}

// writeArchive writes quire_<version>_<os>_<arch>.tar.gz (or .zip) with
// the binary, README.md and LICENSE in a directory of the same name.
func writeArchive(o buildOptions, t target, bin string) (string, error) {
	base := t.archiveBase(o.Stamp.Version)
	var files []file
	for _, f := range []struct {
		src, name string
		mode      os.FileMode
	}{{bin, t.exe(), 0o755}, {filepath.Join(o.Src, "README.md"), "README.md", 0o644}, {filepath.Join(o.Src, "LICENSE"), "LICENSE", 0o644}} {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return "", fmt.Errorf("archive %s: %w", base, err)
		}
		files = append(files, file{inDir(base, f.name), f.mode, data})
	}
	name := base + t.archiveExt()
	write := func(w io.Writer) error { return writeTarGz(w, files, o.Stamp.Time) }
	if t.archiveExt() == ".zip" {
		write = func(w io.Writer) error { return writeZip(w, files, o.Stamp.Time) }
	}
	return name, writeFile(filepath.Join(o.Out, name), write)
}

// safeOut refuses an output directory that holds the sources, since build
// empties it first.
func safeOut(src, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(abs, src); err == nil && !strings.HasPrefix(rel, "..") {
		return fmt.Errorf("output directory %s holds the sources %s: build empties it first, so name a directory of its own (dist)", out, src)
	}
	return nil
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return -1
	}
	return fi.Size()
}
