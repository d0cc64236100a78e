package bm25

import (
	"fmt"
	"testing"
)

// TestVocab: every term added is found, by bytes and by string, under
// its id, through the table's growth; a term not added is not found,
// also one that is a prefix or an extension of one added.
func TestVocab(t *testing.T) {
	v := newVocab()
	want := map[string]int32{}
	for i := range 5000 {
		term := fmt.Sprint(i * 7919 % 100003)
		if i%3 == 0 {
			term = "t" + term
		}
		if _, ok := want[term]; ok {
			continue
		}
		var id int32
		if i%2 == 0 {
			id = v.addString(term)
		} else {
			id = v.addBytes([]byte(term))
		}
		if int(id) != len(want) {
			t.Fatalf("%q got id %d, want %d", term, id, len(want))
		}
		want[term] = id
	}
	if v.len() != len(want) {
		t.Fatalf("len %d, want %d", v.len(), len(want))
	}
	for term, id := range want {
		if got, ok := v.find([]byte(term)); !ok || got != id {
			t.Errorf("find(%q) = %d, %v; want %d", term, got, ok, id)
		}
		if got, ok := v.findString(term); !ok || got != id {
			t.Errorf("findString(%q) = %d, %v; want %d", term, got, ok, id)
		}
		if string(v.term(id)) != term {
			t.Errorf("term(%d) = %q, want %q", id, v.term(id), term)
		}
		for _, other := range []string{term + "x", term[:len(term)-1], "u" + term} {
			if _, added := want[other]; added {
				continue
			}
			if _, ok := v.findString(other); ok {
				t.Errorf("findString(%q) found a term never added", other)
			}
			if _, ok := v.find([]byte(other)); ok {
				t.Errorf("find(%q) found a term never added", other)
			}
		}
	}
	if _, ok := newVocabPtr().findString("x"); ok {
		t.Error("an empty vocab found a term")
	}
}

func newVocabPtr() *vocab { v := newVocab(); return &v }
