package memory

import (
	"io/fs"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"
)

// idFS is a MapFS whose files are named by ids (memory.FileIDs) and
// which counts the files it opens.
type idFS struct {
	fstest.MapFS
	ids    map[string]string
	opened map[string]int
	asked  map[string]int // the names FileID was asked for
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
	if f.asked != nil {
		f.asked[name]++
	}
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
	if n := c.kept(); n != 2 {
		t.Errorf("the cache keeps %d documents after a removal, want 2", n)
	}
}

// TestDocumentCacheUserDirs: on an FS that names directories too, a user
// directory whose id is unchanged is not read at all; one that changed
// is read again whole, and the result is always what Documents returns.
func TestDocumentCacheUserDirs(t *testing.T) {
	f := &idFS{MapFS: fstest.MapFS{
		"bot/MEMORY.md":                        {Data: []byte("# Memory\n")},
		"bot/users/alice/memory/2024-01-01.md": {Data: []byte("## 10:00\nlikes tea\n")},
		"bot/users/alice/memory/2024-01-02.md": {Data: []byte("## 11:00\nlikes cake\n")},
		"bot/users/bob/MEMORY.md":              {Data: []byte("bob's\n")},
		"bot/users/b%00d/MEMORY.md":            {Data: []byte("a bad user id\n")},
	}, ids: map[string]string{
		"bot/MEMORY.md": "m", "bot/users/alice/memory/2024-01-01.md": "a1", "bot/users/alice/memory/2024-01-02.md": "a2",
		"bot/users/bob/MEMORY.md": "b1", "bot/users/alice": "A1", "bot/users/bob": "B1", "bot/users/b%00d": "X",
	}}
	var c DocumentCache
	for _, step := range []struct {
		name   string
		change func()
		opened []string
	}{
		{"first", func() {}, []string{"bot/MEMORY.md", "bot/users/alice/memory/2024-01-01.md", "bot/users/alice/memory/2024-01-02.md", "bot/users/bob/MEMORY.md"}},
		{"again", func() {}, nil},
		{"an append to alice's log", func() {
			f.MapFS["bot/users/alice/memory/2024-01-02.md"] = &fstest.MapFile{Data: []byte("## 11:00\nlikes cake\n\n## 12:00\nand pie\n")}
			f.ids["bot/users/alice/memory/2024-01-02.md"], f.ids["bot/users/alice"] = "a3", "A2"
		}, []string{"bot/users/alice/memory/2024-01-02.md"}},
		{"bob's file removed", func() {
			delete(f.MapFS, "bot/users/bob/MEMORY.md")
			f.MapFS["bot/users/bob/USER.md"] = &fstest.MapFile{Data: []byte("bob\n")}
			f.ids["bot/users/bob"] = "B2"
		}, nil},
		{"a truncated log", func() {
			f.MapFS["bot/users/alice/memory/2024-01-02.md"] = &fstest.MapFile{Data: []byte("## 11:00\nlikes\n")}
			f.ids["bot/users/alice/memory/2024-01-02.md"], f.ids["bot/users/alice"] = "a4", "A3"
		}, []string{"bot/users/alice/memory/2024-01-02.md"}},
		{"a log of the agent's and a new user", func() {
			f.MapFS["bot/memory/2024-01-03.md"] = &fstest.MapFile{Data: []byte("## 09:00\nstand-up\n")}
			f.MapFS["bot/users/carol/MEMORY.md"] = &fstest.MapFile{Data: []byte("carol's\n")}
			f.ids["bot/memory/2024-01-03.md"], f.ids["bot/users/carol/MEMORY.md"], f.ids["bot/users/carol"] = "g1", "c1", "C1"
		}, []string{"bot/memory/2024-01-03.md", "bot/users/carol/MEMORY.md"}},
		{"bob's directory removed", func() {
			delete(f.MapFS, "bot/users/bob/USER.md")
			delete(f.ids, "bot/users/bob")
		}, nil},
	} {
		step.change()
		f.opened = map[string]int{}
		got, gotProbs, err := c.Documents(f, "bot")
		if err != nil {
			t.Fatal(err)
		}
		var opened []string
		for p := range f.opened {
			opened = append(opened, p)
		}
		slices.Sort(opened)
		if !slices.Equal(opened, step.opened) {
			t.Errorf("%s: read %v, want %v", step.name, opened, step.opened)
		}
		want, wantProbs, err := Documents(f, "bot")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotProbs, wantProbs) {
			t.Errorf("%s: cache gave %+v %v, Documents %+v %v", step.name, got, gotProbs, want, wantProbs)
		}
	}
	if _, ok := c.scopes["bot/users/bob"]; ok {
		t.Errorf("the cache keeps the directory of bob, removed")
	}
	if _, ok := c.users["bob"]; ok {
		t.Errorf("the cache keeps the user directory name of bob, removed")
	}
	if _, ok := c.users["b%00d"]; !ok {
		t.Errorf("the cache does not keep what the bad user directory name is")
	}
	if n := c.kept(); n != 5 {
		t.Errorf("the cache keeps %d documents, want the 5 there are", n)
	}
}

// kept counts the documents c holds.
func (c *DocumentCache) kept() int {
	n := 0
	for _, sr := range c.scopes {
		n += len(sr.docs)
	}
	return n
}

// TestDocumentCacheAgentDir: the agent's own memory is walked again only
// when its memory files or memory/ changed, not after an append to a
// user's log (which changes the agent directory's id); a seed-like file
// FileIDs cannot name has it walked every time.
func TestDocumentCacheAgentDir(t *testing.T) {
	f := &idFS{MapFS: fstest.MapFS{
		"bot/MEMORY.md":                        {Data: []byte("# Memory\n")},
		"bot/memory/2024-01-01.md":             {Data: []byte("## 09:00\nstand-up\n")},
		"bot/users/alice/memory/2024-01-01.md": {Data: []byte("## 10:00\nlikes tea\n")},
	}, ids: map[string]string{
		"bot": "T1", "bot/MEMORY.md": "m", "bot/memory": "M1", "bot/memory/2024-01-01.md": "g1",
		"bot/users/alice": "A1", "bot/users/alice/memory/2024-01-01.md": "a1",
	}}
	var c DocumentCache
	for _, step := range []struct {
		name   string
		change func()
		walked bool // whether the agent's memory/ is walked
	}{
		{"first", func() {}, true},
		{"an append to alice's log", func() {
			f.MapFS["bot/users/alice/memory/2024-01-01.md"] = &fstest.MapFile{Data: []byte("## 10:00\nlikes tea\n\n## 11:00\nand cake\n")}
			f.ids["bot/users/alice/memory/2024-01-01.md"], f.ids["bot/users/alice"], f.ids["bot"] = "a2", "A2", "T2"
		}, false},
		{"an append to the agent's log", func() {
			f.MapFS["bot/memory/2024-01-01.md"] = &fstest.MapFile{Data: []byte("## 09:00\nstand-up\n\n## 12:00\nlunch\n")}
			f.ids["bot/memory/2024-01-01.md"], f.ids["bot/memory"], f.ids["bot"] = "g2", "M2", "T3"
		}, true},
		{"MEMORY.md edited", func() {
			f.MapFS["bot/MEMORY.md"] = &fstest.MapFile{Data: []byte("# Memory\n\nwifi is abc\n")}
			f.ids["bot/MEMORY.md"], f.ids["bot"] = "m2", "T4"
		}, true},
		{"a memory.md FileIDs cannot name", func() {
			f.MapFS["bot/memory.md"] = &fstest.MapFile{Data: []byte("# lower\n")}
		}, true},
		{"nothing changed but that memory.md", func() {}, true},
	} {
		step.change()
		f.opened, f.asked = map[string]int{}, map[string]int{}
		got, gotProbs, err := c.Documents(f, "bot")
		if err != nil {
			t.Fatal(err)
		}
		walked := f.asked["bot/memory/2024-01-01.md"] > 0
		f.asked = nil
		if walked != step.walked {
			t.Errorf("%s: the agent's memory/ walked: %v, want %v", step.name, walked, step.walked)
		}
		want, wantProbs, err := Documents(f, "bot")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotProbs, wantProbs) {
			t.Errorf("%s: cache gave %+v %v, Documents %+v %v", step.name, got, gotProbs, want, wantProbs)
		}
	}
}

// TestDocumentCacheChecksAppends: a log that grows is checked and
// hashed for what it adds, and a bad append is reported as Documents
// reports it (the line in the whole file), the log left out; valid
// again, it is indexed, its hash always that of its text.
func TestDocumentCacheChecksAppends(t *testing.T) {
	const name = "bot/memory/2024-01-01.md"
	f := &idFS{MapFS: fstest.MapFS{name: {Data: []byte("met alice\n")}}, ids: map[string]string{name: "1"}, opened: map[string]int{}}
	var c DocumentCache
	for i, text := range []string{"met alice\n", "met alice\nand bob\n", "met alice\nand bob\nbad \x01 byte\n",
		"met alice\nand bob\n\xff\n", "met alice\nand bob\nand carol\n", "met alice\nand bob\nand carol\n\xe2\x82",
		"met alice\n", "met alice\nand dave\n", "met alice\nand dave\nand erin\n", "met alice\nand dave\nand erin\nand frank\n", "met alice\nand"} {
		f.MapFS[name] = &fstest.MapFile{Data: []byte(text)}
		f.ids[name] = string(rune('a' + i))
		got, gotProblems, err := c.Documents(f, "bot")
		if err != nil {
			t.Fatal(err)
		}
		want, wantProblems, err := Documents(f, "bot")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotProblems, wantProblems) {
			t.Errorf("version %d: cache gave %+v %+v, Documents %+v %+v", i, got, gotProblems, want, wantProblems)
		}
		if bad := len(wantProblems) > 0; bad != (i == 2 || i == 3 || i == 5) || bad == (len(want) == 1) {
			t.Errorf("version %d: %d documents, problems %+v", i, len(want), wantProblems)
		}
	}
}
