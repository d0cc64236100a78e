package gitsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// damagedRepo is a bare repository of two agents on main and live, in
// one pack without deltas (so that damaging an object damages only it).
func damagedRepo(t *testing.T) (dir, pack string) {
	t.Helper()
	src := newWorkRepo(t, map[string]string{
		"concierge/agent.yaml": "name: concierge\n", "concierge/SOUL.md": "# Soul\n\nCalm and exact.\n",
		"studybuddy/agent.yaml": "name: studybuddy\n", "studybuddy/SOUL.md": "# Soul\n\nPatient.\n",
	})
	dir = newBare(t)
	git(t, src, "push", "-q", dir, "main", "main:live")
	git(t, dir, "repack", "-q", "-a", "-d", "-f", "--window=0")
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	return dir, packs[0]
}

// offsetOf is where object rev (e.g. "main:concierge") starts in pack.
func offsetOf(t *testing.T, dir, pack, rev string) int64 {
	t.Helper()
	h := plumbing.NewHash(git(t, dir, "rev-parse", rev))
	idx, err := openCheckedIndex(strings.TrimSuffix(pack, ".pack") + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	off, err := idx.FindOffset(h)
	if err != nil {
		t.Fatalf("%s is not in %s: %v", rev, pack, err)
	}
	return off
}

// rewrite changes the file at p with edit.
func rewrite(t *testing.T, p string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// flip inverts n bytes of b from off.
func flip(b []byte, off int64, n int) []byte {
	for i := range int64(n) {
		b[off+i] ^= 0xff
	}
	return b
}

// TestVerifyNamesDamage: Verify names the damaged file, the ref and the
// path of every object a served branch cannot read, and nothing in a
// good repository.
func TestVerifyNamesDamage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir, pack string)
		want   []string // in the faults' text, in order
	}{
		{"good", func(*testing.T, string, string) {}, nil},
		{"flipped bytes", func(t *testing.T, dir, pack string) {
			off := offsetOf(t, dir, pack, "main:concierge")
			rewrite(t, pack, func(b []byte) []byte { return flip(b, off+4, 4) })
		}, []string{
			"objects/pack/" + "PACK: its content does not match its checksum: bytes changed on disk",
			"concierge/ (tree ", ") in refs/heads/live cannot be read from objects/pack/PACK: ",
		}},
		{"truncated pack", func(t *testing.T, dir, pack string) {
			off := offsetOf(t, dir, pack, "main:studybuddy")
			rewrite(t, pack, func(b []byte) []byte { return b[:off+3] })
		}, []string{
			"objects/pack/PACK: it is truncated: ",
			"studybuddy/ (tree ", ") in refs/heads/live cannot be read from objects/pack/PACK",
		}},
		{"garbage in packed-refs", func(t *testing.T, dir, pack string) {
			git(t, dir, "pack-refs", "--all")
			rewrite(t, filepath.Join(dir, "packed-refs"), func(b []byte) []byte { return append(b, "garbage\n"...) })
		}, []string{`packed-refs line 4: not "<commit id> <ref name>": "garbage"`}},
		{"missing pack", func(t *testing.T, dir, pack string) {
			os.Remove(strings.TrimSuffix(pack, ".pack") + ".idx")
		}, []string{"commit ", " in refs/heads/live is missing: no pack or loose object holds it"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, pack := damagedRepo(t)
			c.damage(t, dir, pack)
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = r.Verify(context.Background(), VerifyOptions{})
			if c.want == nil {
				if err != nil || r.Damage() != nil {
					t.Fatalf("Verify = %v", err)
				}
				return
			}
			var d *DamageError
			if !errors.As(err, &d) || !errors.Is(err, ErrDamaged) || r.Damage() != d || d.Repo != dir {
				t.Fatalf("Verify = %v, want a *DamageError", err)
			}
			var text []string
			for _, f := range d.Faults {
				text = append(text, strings.ReplaceAll(f.String(), filepath.Base(pack), "PACK"))
			}
			all := strings.Join(text, "\n")
			at := 0
			for _, w := range c.want {
				i := strings.Index(all[at:], w)
				if i < 0 {
					t.Fatalf("the faults do not say %q (after byte %d):\n%s", w, at, all)
				}
				at += i + len(w)
			}
			// git agrees that something is wrong.
			if out, err := gitTry(dir, "fsck", "--no-dangling"); err == nil {
				t.Errorf("git fsck finds nothing wrong:\n%s", out)
			}
		})
	}
}

// TestVerifyIsIncremental: a second check reads no tree the first read
// whole, and a new commit's trees are read; Full reads all of them.
func TestVerifyIsIncremental(t *testing.T) {
	t.Parallel()
	dir, pack := damagedRepo(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Verify(ctx, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	// Damage a tree already read whole: the incremental check reads the
	// changed pack again, not the tree; a full one reads both.
	off := offsetOf(t, dir, pack, "main:concierge")
	rewrite(t, pack, func(b []byte) []byte { return flip(b, off+4, 4) })
	err = r.Verify(ctx, VerifyOptions{})
	var d *DamageError
	if !errors.As(err, &d) || len(d.Faults) != 1 || d.Faults[0].Object != plumbing.ZeroHash {
		t.Fatalf("incremental Verify = %v, want the pack alone", err)
	}
	err = r.Verify(ctx, VerifyOptions{Full: true})
	if !errors.As(err, &d) || !slices.ContainsFunc(d.Faults, func(f Fault) bool { return f.Path == "concierge" }) {
		t.Fatalf("full Verify = %v, want concierge/ too", err)
	}
}
