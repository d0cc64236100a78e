package gitsync

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// fastImport makes a work repository with n commits (one small file
// each) and one 400 KB incompressible file, quickly.
func fastImport(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	var b strings.Builder
	big := randomText(400 << 10)
	fmt.Fprintf(&b, "blob\nmark :1\ndata %d\n%s\n", len(big), big)
	for i := range n {
		content := fmt.Sprintf("entry %d\n", i)
		fmt.Fprintf(&b, "commit refs/heads/main\ncommitter T <t@example.com> %d +0000\ndata 7\ncommit\n", 1700000000+i)
		if i == 0 {
			b.WriteString("M 100644 :1 big.bin\n")
		}
		fmt.Fprintf(&b, "M 100644 inline memory/%d.md\ndata %d\n%s\n", i%50, len(content), content)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	git(t, dir, "checkout", "-q", "-f", "main")
	return dir
}

// TestFetchLargeHistory: a 1,000-commit history with a 400 KB file
// (packs far over 64 KiB) clones and pulls with the git CLI over protocol
// v0 and v2 (answered in v0) and with go-git's client; shallow clones work; an object no
// ref reaches is refused.
func TestFetchLargeHistory(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{})
	src := fastImport(t, 1000)
	// A 400 KB file is under the file limit but the pack is far over
	// one side-band packet.
	git(t, src, "push", "-q", url+"/ws.git", "main")
	head := git(t, src, "rev-parse", "HEAD")
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"0", "2"} {
		t.Run("protocol v"+v, func(t *testing.T) {
			c := filepath.Join(t.TempDir(), "c")
			git(t, t.TempDir(), "-c", "protocol.version="+v, "clone", "-q", url+"/ws.git", c)
			if got := git(t, c, "rev-parse", "HEAD"); got != head {
				t.Fatalf("clone at %s, want %s", got, head)
			}
			if n, want := git(t, c, "rev-list", "--count", "HEAD"), git(t, filepath.Join(dir, "ws.git"), "rev-list", "--count", "main"); n != want {
				t.Fatalf("clone has %s commits, want %s", n, want)
			}
			if st, err := os.Stat(filepath.Join(c, "big.bin")); err != nil || st.Size() != 400<<10 {
				t.Fatalf("big.bin: %v %v", st, err)
			}
			// Pull after the daemon committed.
			nh, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Author: object.Signature{Name: "Ada", Email: "a@x"},
				Writes: []FileWrite{{Path: "memory/pull-" + v + ".md", Content: []byte(randomText(300 << 10))}}})
			if err != nil {
				t.Fatal(err)
			}
			git(t, c, "-c", "protocol.version="+v, "pull", "-q", "--ff-only")
			if got := git(t, c, "rev-parse", "HEAD"); got != nh.String() {
				t.Fatalf("pull at %s, want %s", got, nh)
			}
			head = nh.String()
			// A shallow clone (CI checkouts).
			s := filepath.Join(t.TempDir(), "s")
			git(t, t.TempDir(), "-c", "protocol.version="+v, "clone", "-q", "--depth", "1", url+"/ws.git", s)
			if n := git(t, s, "rev-list", "--count", "HEAD"); n != "1" {
				t.Fatalf("shallow clone has %s commits", n)
			}
			if got := git(t, s, "rev-parse", "HEAD"); got != head {
				t.Fatalf("shallow clone at %s, want %s", got, head)
			}
		})
	}
	t.Run("go-git client", func(t *testing.T) {
		g, err := gogit.PlainClone(filepath.Join(t.TempDir(), "g"), true, &gogit.CloneOptions{URL: url + "/ws.git"})
		if err != nil {
			t.Fatal(err)
		}
		ref, err := g.Reference(plumbing.NewBranchReferenceName("main"), true)
		if err != nil || ref.Hash().String() != head {
			t.Fatalf("go-git clone main = %v, %v; want %s", ref, err, head)
		}
	})
	t.Run("unreachable want", func(t *testing.T) {
		lost, err := r.Commit(context.Background(), CommitRequest{Ref: "refs/heads/tmp", Create: true, Start: "main",
			Author: object.Signature{Name: "Ada", Email: "a@x"}, Writes: []FileWrite{{Path: "secret.md", Content: []byte("dropped\n")}}})
		if err != nil {
			t.Fatal(err)
		}
		git(t, filepath.Join(dir, "ws.git"), "update-ref", "-d", "refs/heads/tmp")
		for _, v := range []string{"0", "2"} {
			c := filepath.Join(t.TempDir(), "c")
			git(t, t.TempDir(), "init", "-q", c)
			if out, err := gitTry(c, "-c", "protocol.version="+v, "fetch", url+"/ws.git", lost.String()); err == nil {
				t.Errorf("protocol v%s: a commit no ref reaches was served:\n%s", v, out)
			}
		}
	})
}
