package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/internal/testenv"
)

// TestDiskFullClassified: a write that failed for want of space is a
// *DiskFullError naming the path, however it is wrapped, and git's words
// for it are recognised; other failures are not.
func TestDiskFullClassified(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		err   error
		path  string // "" for not disk full
		errno syscall.Errno
	}{
		{"ENOSPC in a path error", fmt.Errorf("commit: %w", fmt.Errorf("write pack: %w", &fs.PathError{Op: "write", Path: "/r/objects/pack/tmp_quire_pack_1", Err: syscall.ENOSPC})),
			"/r/objects/pack/tmp_quire_pack_1", syscall.ENOSPC},
		{"EDQUOT", &fs.PathError{Op: "sync", Path: "/r/refs/heads/live.lock", Err: syscall.EDQUOT}, "/r/refs/heads/live.lock", syscall.EDQUOT},
		{"a rename", &os.LinkError{Op: "rename", Old: "/r/a", New: "/r/b", Err: syscall.ENOSPC}, "/r/b", syscall.ENOSPC},
		{"already one", fmt.Errorf("x: %w", &DiskFullError{Path: "/r", Err: syscall.ENOSPC}), "/r", syscall.ENOSPC},
		{"git's words", gitDiskFull("fatal: sha1 file 'objects/pack/tmp_pack_1QKPMa' write error. Out of diskspace\n", "/r"), "/r", syscall.ENOSPC},
		{"git's errno", gitDiskFull("fatal: unable to write file: No space left on device", "/r"), "/r", syscall.ENOSPC},
		{"git's quota", gitDiskFull("error: Disk quota exceeded", "/r"), "/r", syscall.EDQUOT},
		{"another errno", &fs.PathError{Op: "open", Path: "/r", Err: syscall.EACCES}, "", 0},
		{"no errno", errors.New("no space left on device"), "", 0},
		{"nil", nil, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.err
			df := DiskFull(err)
			if c.path == "" {
				if df != nil {
					t.Fatalf("DiskFull(%v) = %v", err, df)
				}
				return
			}
			if df == nil || df.Path != c.path || !errors.Is(df, c.errno) || !errors.Is(df, ErrDiskFull) {
				t.Fatalf("DiskFull(%v) = %#v, want %s at %s", err, df, c.errno, c.path)
			}
			if want := c.errno.Error() + " writing " + c.path + ": free space on its file system, then retry"; df.Error() != want {
				t.Errorf("message %q, want %q", df.Error(), want)
			}
		})
	}
}

// TestDiskFull: on a full file system a commit fails with a
// *DiskFullError naming the repository's path, a push is refused with
// the same reason in git's output, a repack fails and leaves no
// temporary pack; once space is freed, all of them work.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	disk := testenv.SmallDisk(t, 4<<20)
	h, err := NewHost(disk, HostOptions{AllowCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Create("ws")
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "a", 12)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	srv := hs.URL
	src := newWorkRepo(t, map[string]string{"big.md": randomText(300 << 10)})
	filler := testenv.Fill(t, disk)
	packDir := filepath.Join(disk, "ws.git", "objects", "pack")
	temporaries := func() []string {
		des, _ := os.ReadDir(packDir)
		var out []string
		for _, de := range des {
			if isTemporary(de.Name()) {
				out = append(out, de.Name())
			}
		}
		return out
	}

	_, err = r.Commit(context.Background(), CommitRequest{Ref: "main", Author: object.Signature{Name: "A", Email: "a@agents.invalid"},
		Writes: []FileWrite{{Path: "x.md", Content: []byte(randomText(64 << 10))}}})
	df := DiskFull(err)
	if df == nil || !strings.HasPrefix(df.Path, filepath.Join(disk, "ws.git")+"/") {
		t.Fatalf("commit on a full disk: %v, want a DiskFullError in the repository", err)
	}
	out, err := gitTry(src, "push", srv+"/ws.git", "main:refs/heads/other")
	if err == nil || !strings.Contains(out, "remote unpack failed: no space left on device writing "+filepath.Join(disk, "ws.git")+": free space on its file system, then retry") {
		t.Fatalf("push to a full disk: %v\n%s", err, out)
	}
	if err := r.Repack(); err == nil {
		t.Fatal("a repack on a full disk worked")
	}
	if tmp := temporaries(); len(tmp) > 0 {
		t.Fatalf("failures on a full disk left temporary files: %v", tmp)
	}
	if q, _ := filepath.Glob(filepath.Join(disk, "ws.git", quarantinePrefix+"*")); len(q) > 0 {
		t.Fatalf("a refused push left its quarantine: %v", q)
	}

	os.Remove(filler)
	commitPacks(t, r, "b", 1)
	git(t, src, "push", "-q", srv+"/ws.git", "main:refs/heads/other")
	if err := r.Repack(); err != nil {
		t.Fatal(err)
	}
	git(t, filepath.Join(disk, "ws.git"), "fsck", "--strict", "--no-dangling")
}
