package gitsync

import (
	"bytes"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// TestStoreTreeIsGits: a tree is sorted and encoded as go-git (and git)
// does it, whatever the order of its entries, with directories whose
// names are prefixes of files' among them.
func TestStoreTreeIsGits(t *testing.T) {
	names := []string{"a", "a.b", "a-c", "a0", "ab", "b", "users", "users.md", "z", "Z", "ação", "a b"}
	modes := []filemode.FileMode{filemode.Regular, filemode.Dir, filemode.Executable, filemode.Symlink}
	rnd := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var es []object.TreeEntry
		for i, n := range names {
			if rnd.IntN(3) == 0 {
				continue
			}
			var h plumbing.Hash
			h[0], h[1] = byte(i), byte(round)
			es = append(es, object.TreeEntry{Name: n, Mode: modes[rnd.IntN(len(modes))], Hash: h})
		}
		rnd.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
		want := slices.Clone(es)
		slices.SortFunc(want, func(a, b object.TreeEntry) int {
			return bytes.Compare([]byte(sortName(a)), []byte(sortName(b)))
		})
		var wo plumbing.MemoryObject
		if err := (&object.Tree{Entries: want}).Encode(&wo); err != nil {
			t.Fatal(err)
		}
		st := memory.NewStorage()
		h, err := storeTree(st, es, "")
		if err != nil {
			t.Fatal(err)
		}
		if h != wo.Hash() {
			t.Fatalf("round %d: tree %v is %s, go-git's %s", round, es, h, wo.Hash())
		}
		o, err := st.EncodedObject(plumbing.TreeObject, h)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := o.Reader()
		got, _ := io.ReadAll(r)
		wr, _ := wo.Reader()
		exp, _ := io.ReadAll(wr)
		if !bytes.Equal(got, exp) {
			t.Fatalf("round %d: encoded\n%q\nwant\n%q", round, got, exp)
		}
	}
	if _, err := storeTree(memory.NewStorage(), []object.TreeEntry{{Name: "a\x00b", Mode: filemode.Regular}}, ""); err == nil {
		t.Error("a name with a NUL was encoded")
	}
}

func sortName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}
