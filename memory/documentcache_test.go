package memory

import (
	"io/fs"
	"reflect"
	"testing"
	"testing/fstest"
)

// idFS is a MapFS whose files are named by ids (memory.FileIDs) and
// which counts the files it opens.
type idFS struct {
	fstest.MapFS
	ids    map[string]string
	opened map[string]int
}

func (f *idFS) Open(name string) (fs.File, error) {
	if _, ok := f.MapFS[name]; ok {
		f.opened[name]++
	}
	return f.MapFS.Open(name)
}

func (f *idFS) ReadFile(name string) ([]byte, error) {
	if _, ok := f.MapFS[name]; ok {
		f.opened[name]++
	}
	return f.MapFS.ReadFile(name)
}

func (f *idFS) FileID(name string) (string, bool) {
	id, ok := f.ids[name]
	return id, ok
}

// TestDocumentCache: the cache returns what Documents returns, reading
// only the files whose id changed since the last call.
func TestDocumentCache(t *testing.T) {
	f := &idFS{MapFS: fstest.MapFS{
		"bot/MEMORY.md":                        {Data: []byte("# Memory\n\nwifi is abc\n")},
		"bot/memory/2024-01-01.md":             {Data: []byte("met alice\n")},
		"bot/users/alice/memory/2024-01-01.md": {Data: []byte("likes tea\n")},
	}, ids: map[string]string{"bot/MEMORY.md": "1", "bot/memory/2024-01-01.md": "2", "bot/users/alice/memory/2024-01-01.md": "3"}}
	var c DocumentCache
	check := func(step string) {
		t.Helper()
		f.opened = map[string]int{}
		got, _, err := c.Documents(f, "bot")
		if err != nil {
			t.Fatal(err)
		}
		opened := f.opened
		f.opened = map[string]int{}
		want, _, err := Documents(f, "bot")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: cache gave %+v, Documents %+v", step, got, want)
		}
		f.opened = opened
	}
	check("first")
	if len(f.opened) != 3 {
		t.Errorf("first call opened %v, want all three", f.opened)
	}
	check("again")
	if len(f.opened) != 0 {
		t.Errorf("an unchanged tree opened %v", f.opened)
	}
	f.MapFS["bot/memory/2024-01-01.md"] = &fstest.MapFile{Data: []byte("met alice and bob\n")}
	f.ids["bot/memory/2024-01-01.md"] = "4"
	check("changed")
	if len(f.opened) != 1 || f.opened["bot/memory/2024-01-01.md"] != 1 {
		t.Errorf("a changed file: opened %v, want only it", f.opened)
	}
	delete(f.MapFS, "bot/MEMORY.md")
	check("removed")
	if len(c.last) != 2 {
		t.Errorf("the cache keeps %d documents after a removal, want 2", len(c.last))
	}
}
