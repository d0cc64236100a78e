package gitsync

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// benchRepo is a packed repository with a 20 KB file and 2,000 files
// spread over 20 directories.
func benchRepo(b *testing.B) *Repository {
	b.Helper()
	files := map[string]string{"memory/notes.md": strings.Repeat("a line of memory text, fifty bytes long, ends her\n", 400)}
	for i := range 2000 {
		files[fmt.Sprintf("skills/d%02d/f%04d.md", i%20, i)] = fmt.Sprintf("file %d\n", i)
	}
	dir := newWorkRepo(b, files)
	git(b, dir, "gc", "-q")
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkSnapshot(b *testing.B) {
	r := benchRepo(b)
	b.Run("ReadFile20KB", func(b *testing.B) {
		s, err := r.Snapshot("HEAD")
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			data, err := s.ReadFile("memory/notes.md")
			if err != nil || len(data) != 20000 {
				b.Fatalf("ReadFile: %d bytes, %v", len(data), err)
			}
		}
	})
	b.Run("ResolveAndReadFile20KB", func(b *testing.B) {
		for b.Loop() {
			s, err := r.Snapshot("HEAD")
			if err != nil {
				b.Fatal(err)
			}
			data, err := s.ReadFile("memory/notes.md")
			if err != nil || len(data) != 20000 {
				b.Fatalf("ReadFile: %d bytes, %v", len(data), err)
			}
		}
	})
	b.Run("List2000FilesColdOpen", func(b *testing.B) {
		// A freshly opened repository: no decoded trees cached.
		for b.Loop() {
			r2, err := Open(r.Path())
			if err != nil {
				b.Fatal(err)
			}
			s, err := r2.Snapshot("HEAD")
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			err = fs.WalkDir(s, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					n++
				}
				return err
			})
			if err != nil || n != 2001 {
				b.Fatalf("walk: %d files, %v", n, err)
			}
		}
	})
	b.Run("List2000FilesUncachedTrees", func(b *testing.B) {
		// An open repository, but every tree decoded afresh (a new commit
		// whose trees all changed).
		for b.Loop() {
			r.trees.mu.Lock()
			r.trees.m = nil
			r.trees.mu.Unlock()
			s, err := r.Snapshot("HEAD")
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			err = fs.WalkDir(s, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					n++
				}
				return err
			})
			if err != nil || n != 2001 {
				b.Fatalf("walk: %d files, %v", n, err)
			}
		}
	})
	b.Run("List2000Files", func(b *testing.B) {
		for b.Loop() {
			s, err := r.Snapshot("HEAD")
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			err = fs.WalkDir(s, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					n++
				}
				return err
			})
			if err != nil || n != 2001 {
				b.Fatalf("walk: %d files, %v", n, err)
			}
		}
	})
}
