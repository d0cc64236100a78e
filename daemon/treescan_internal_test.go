package daemon

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/workspace"
)

// TestScanTreeIsTheWalk: scanTree's id is the hash one fs.WalkDir of the
// tree writes (the id before the walk went concurrent: a restart after
// an upgrade finds its index current), for recent and old files, with
// .git skipped and links and empty directories in the tree, and its
// listings are what fs.ReadDir lists; a tree it cannot read is an error.
func TestScanTreeIsTheWalk(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   time.Duration // the scan's time after the files' change
	}{
		{name: "recent files, hashed by their bytes"},
		{name: "old files, keyed by their stat data", at: time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"AGENTS.md": "a\n", ".git/HEAD": "ref: x\n", "agents/b/agent.yaml": "name: b\n", "agents/b/empty.md": ""}
			for i := range 40 {
				files[fmt.Sprintf("agents/a%02d/memory/2026-01-%02d.md", i, i%28+1)] = fmt.Sprint(i)
				files[fmt.Sprintf("agents/a%02d/agent.yaml", i)] = fmt.Sprintf("name: a%02d\n", i)
			}
			testenv.WriteFiles(t, dir, files)
			if err := os.MkdirAll(filepath.Join(dir, "empty/inner"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("AGENTS.md", filepath.Join(dir, "agents/link.md")); err != nil {
				t.Fatal(err)
			}
			fsys := workspace.DirFS(dir)
			now := time.Now().Add(tc.at)
			scan, err := scanTree(fsys, now)
			if err != nil {
				t.Fatal(err)
			}
			if want := walkID(t, fsys, now); scan.id != want {
				t.Errorf("id %s, the walk's %s", scan.id, want)
			}
			walked := map[string][]fs.DirEntry{}
			err = fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
				if err != nil || !e.IsDir() {
					return err
				}
				if e.Name() == ".git" {
					return fs.SkipDir
				}
				walked[p], err = fs.ReadDir(fsys, p)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(scan.dirs) != len(walked) {
				t.Errorf("%d listings, the walk entered %d directories", len(scan.dirs), len(walked))
			}
			for p, es := range walked {
				if got, want := names(scan.dirs[p]), names(es); !reflect.DeepEqual(got, want) {
					t.Errorf("listing of %s: %v, want %v", p, got, want)
				}
			}
		})
	}
	if _, err := scanTree(workspace.DirFS(filepath.Join(t.TempDir(), "missing")), time.Now()); err == nil {
		t.Error("a missing tree scanned")
	}
}

func names(es []fs.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name()+" "+e.Type().String())
	}
	return out
}

// walkID is contentID as one fs.WalkDir computed it.
func walkID(t *testing.T, fsys fs.FS, now time.Time) string {
	h := sha256.New()
	racy := now.Add(-racyWindow)
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if e.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			fmt.Fprintf(h, "%s\x00%s\x00", p, e.Type())
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		st := statOf(info)
		if !st.mtime.Before(racy) || !st.ctime.Before(racy) {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00b%d\x00", p, len(b))
			h.Write(b)
			return nil
		}
		fmt.Fprintf(h, "%s\x00s\x00", p)
		var b [40]byte
		binary.LittleEndian.PutUint64(b[0:], uint64(info.Size()))
		binary.LittleEndian.PutUint64(b[8:], uint64(st.mtime.UnixNano()))
		binary.LittleEndian.PutUint64(b[16:], uint64(st.ctime.UnixNano()))
		binary.LittleEndian.PutUint64(b[24:], st.ino)
		binary.LittleEndian.PutUint64(b[32:], st.dev)
		h.Write(b[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return "worktree:" + hex.EncodeToString(h.Sum(nil))[:20]
}
