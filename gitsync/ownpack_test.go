package gitsync

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// TestWriteOwnPack: the pack writeOwnPack writes parses back to the same
// objects, and the index it built is the one the parser builds.
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
	sum, idx, err := writeOwnPack(&buf, objs)
	if err != nil {
		t.Fatal(err)
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
