package workspace

import (
	"errors"
	"strings"
	"testing"
)

func TestEncodeID(t *testing.T) {
	tests := []struct{ id, want string }{
		{"alice", "alice"},
		{"bob@example.com", "bob%40example.com"},
		{"Alice", "%41lice"},
		{"../../etc", "%2E.%2F..%2Fetc"},
		{".hidden", "%2Ehidden"},
		{"a/b", "a%2Fb"},
		{"tg-5512093311", "tg-5512093311"},
		{"日本", "%E6%97%A5%E6%9C%AC"},
		{"a%b", "a%25b"},
	}
	for _, tc := range tests {
		got, err := EncodeID(tc.id)
		if err != nil || got != tc.want {
			t.Errorf("EncodeID(%q) = %q, %v; want %q", tc.id, got, err, tc.want)
			continue
		}
		back, err := DecodeID(got)
		if err != nil || back != tc.id {
			t.Errorf("DecodeID(%q) = %q, %v; want %q", got, back, err, tc.id)
		}
	}
}

func TestEncodeIDRejects(t *testing.T) {
	for _, id := range []string{"", strings.Repeat("x", 256), strings.Repeat("/", 90)} {
		if _, err := EncodeID(id); !errors.Is(err, ErrBadID) {
			t.Errorf("EncodeID(%.20q…) err = %v, want ErrBadID", id, err)
		}
	}
}

func TestDecodeIDRejectsForeignNames(t *testing.T) {
	for _, name := range []string{"", ".", "..", ".git", "Alice", "a/b", "a%2", "a%zz", "a%61", "a%2e", "x y"} {
		if _, err := DecodeID(name); !errors.Is(err, ErrBadID) {
			t.Errorf("DecodeID(%q) err = %v, want ErrBadID", name, err)
		}
	}
}

func FuzzEncodeID(f *testing.F) {
	for _, s := range []string{"alice", "../../etc", "Bob@Example.com", "\x00", "%41", "..", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		enc, err := EncodeID(id)
		if err != nil {
			return
		}
		if enc == "" || strings.HasPrefix(enc, ".") || strings.Trim(enc, "abcdefghijklmnopqrstuvwxyz0123456789-_.%ABCDEF") != "" {
			t.Fatalf("EncodeID(%q) = %q is not a safe directory name", id, enc)
		}
		back, err := DecodeID(enc)
		if err != nil || back != id {
			t.Fatalf("round trip of %q: %q, %v", id, back, err)
		}
	})
}

func FuzzDecodeID(f *testing.F) {
	for _, s := range []string{"alice", "%2E%2E", "a%2Fb", "%", "%4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		id, err := DecodeID(name)
		if err != nil {
			return
		}
		enc, err := EncodeID(id)
		if err != nil || enc != name {
			t.Fatalf("DecodeID accepted %q (→ %q) but EncodeID gives %q, %v: one id, one name", name, id, enc, err)
		}
	})
}
