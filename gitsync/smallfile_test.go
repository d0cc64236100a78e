package gitsync

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadSmallFile: readSmallFile reads what os.ReadFile reads, across
// its buffer's growth, and fails as it does.
func TestReadSmallFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 41, 127, 128, 129, 256, 5000} {
		p := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readSmallFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: read %d bytes, %v", n, len(got), err)
		}
	}
	for _, tc := range []struct {
		name  string
		path  string
		check func(error) bool
	}{
		{"missing", filepath.Join(dir, "missing"), func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
		{"under a file", filepath.Join(dir, "f", "x"), func(err error) bool { return isNotDirErr(err) || errors.Is(err, fs.ErrNotExist) }},
		{"directory", dir, func(err error) bool { return err != nil }},
	} {
		_, err := readSmallFile(tc.path)
		_, osErr := os.ReadFile(tc.path)
		if !tc.check(err) || (err == nil) != (osErr == nil) {
			t.Errorf("%s: %v (os.ReadFile: %v)", tc.name, err, osErr)
		}
	}
}

// TestCreateTemp: createTemp makes new files of its own, named with its
// prefix, and a lock taken by openFile is exclusive.
func TestCreateTemp(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	for range 20 {
		f, err := createTemp(dir, ownTemporary+"pack_")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("x"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		name := filepath.Base(f.Name())
		if seen[name] || !strings.HasPrefix(name, ownTemporary+"pack_") || filepath.Dir(f.Name()) != dir {
			t.Errorf("made %s again or elsewhere", f.Name())
		}
		seen[name] = true
	}
	if _, err := createTemp(filepath.Join(dir, "missing"), "x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("in a missing directory: %v", err)
	}
	lock := filepath.Join(dir, "main.lock")
	f, err := openFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := openFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second lock: %v", err)
	}
	if err := syncDir(dir); err != nil {
		t.Errorf("syncDir: %v", err)
	}
	if err := syncDir(lock); err == nil && filepath.Separator == '/' {
		t.Errorf("syncDir of a file succeeds")
	}
}

// TestRenameFile: renameFile replaces a file and fails as os.Rename
// does on a missing source.
func TestRenameFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeFiles(t, dir, map[string]string{"a": "new", "b": "old"})
	if err := renameFile(a, b); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(b); err != nil || string(got) != "new" {
		t.Errorf("b is %q, %v", got, err)
	}
	if err := renameFile(a, b); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("renaming a missing file: %v", err)
	}
}
