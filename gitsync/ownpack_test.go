package gitsync

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// TestWriteOwnPack: the pack writeOwnPack writes parses back to the same
// objects, and the index it built answers as the one the parser builds.
func TestWriteOwnPack(t *testing.T) {
	var objs []*plumbing.MemoryObject
	for i, c := range []string{"", "x", strings.Repeat("long content ", 500), "tree-ish"} {
		o := &plumbing.MemoryObject{}
		o.SetType([]plumbing.ObjectType{plumbing.BlobObject, plumbing.BlobObject, plumbing.BlobObject, plumbing.TreeObject}[i])
		if _, err := o.Write([]byte(c)); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	var buf bytes.Buffer
	sum, idxFile, err := writeOwnPack(&buf, objs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := newDiskIndex(idxFile)
	if err != nil {
		t.Fatalf("the index does not read back: %v", err)
	}
	if idx.packChecksum() != sum {
		t.Errorf("the index names pack %s, not %s", idx.packChecksum(), sum)
	}
	iw := new(idxfile.Writer)
	p, err := packfile.NewParser(packfile.NewScanner(bytes.NewReader(buf.Bytes())), iw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Parse()
	if err != nil {
		t.Fatalf("the pack does not parse: %v", err)
	}
	if got != sum {
		t.Errorf("checksum %s, the parser read %s", sum, got)
	}
	want, err := iw.Index()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		wo, err := want.FindOffset(o.Hash())
		if err != nil {
			t.Fatalf("%s not in the parsed pack: %v", o.Hash(), err)
		}
		got2, err := idx.FindOffset(o.Hash())
		if err != nil || got2 != wo {
			t.Errorf("%s: offset %d (%v), parsed %d", o.Hash(), got2, err, wo)
		}
		wc, _ := want.FindCRC32(o.Hash())
		gc, _ := idx.FindCRC32(o.Hash())
		if wc != gc {
			t.Errorf("%s: crc %x, parsed %x", o.Hash(), gc, wc)
		}
	}
}

// TestEncodePackIndex: the index encodePackIndex writes is byte for byte
// the one go-git's encoder writes for the same objects, offsets past
// 2 GiB included, and git reads it.
func TestEncodePackIndex(t *testing.T) {
	for _, n := range []int{0, 1, 7, 2000} {
		rng := rand.New(rand.NewPCG(uint64(n), 5))
		w := new(idxfile.Writer)
		w.OnHeader(uint32(n))
		var es []idxEntry
		off := int64(12)
		for range n {
			var e idxEntry
			for i := range e.hash {
				e.hash[i] = byte(rng.IntN(256))
			}
			e.offset, e.crc = off, rng.Uint32()
			w.OnInflatedObjectContent(e.hash, e.offset, e.crc, nil)
			es = append(es, e)
			off += 1 + rng.Int64N(4<<20)
		}
		pack := plumbing.NewHash("0123456789012345678901234567890123456789")
		if err := w.OnFooter(pack); err != nil {
			t.Fatal(err)
		}
		mi, err := w.Index()
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if _, err := idxfile.NewEncoder(&want).Encode(mi); err != nil {
			t.Fatal(err)
		}
		if got := encodePackIndex(es, pack); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%d objects: %d bytes differ from go-git's %d", n, len(got), want.Len())
		}
	}
}

// TestOwnPackGitReads: git verifies a pack and index written by
// writeOwnPack and reads its blobs and its (stored) tree.
func TestOwnPackGitReads(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "--bare")
	var objs []*plumbing.MemoryObject
	for i := range 300 {
		o := &plumbing.MemoryObject{}
		o.SetType(plumbing.BlobObject)
		if _, err := o.Write([]byte(fmt.Sprintf("blob %d\n", i))); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	var tree bytes.Buffer
	for i, o := range objs {
		fmt.Fprintf(&tree, "100644 f%03d\x00", i)
		h := o.Hash()
		tree.Write(h[:])
	}
	to := &plumbing.MemoryObject{}
	to.SetType(plumbing.TreeObject)
	if _, err := to.Write(tree.Bytes()); err != nil {
		t.Fatal(err)
	}
	objs = append(objs, to)
	var buf bytes.Buffer
	sum, idx, err := writeOwnPack(&buf, objs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "objects", "pack", "pack-"+sum.String())
	if err := os.WriteFile(base+".pack", buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".idx", idx, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "verify-pack", base+".idx")
	if got := git(t, dir, "cat-file", "-p", objs[42].Hash().String()); got != "blob 42" {
		t.Errorf("git reads %q", got)
	}
	if got := git(t, dir, "ls-tree", to.Hash().String()); !strings.Contains(got, objs[42].Hash().String()+"\tf042") {
		t.Errorf("git lists the tree as:\n%s", got)
	}
}
