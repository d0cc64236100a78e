package daemon

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
)

// A seedFS states what it serves: a stored file or directory as its
// base does (without reading the file: the base below counts its reads),
// a new user's seed file with the size the first write stores, and
// nothing else.
func TestSeedFSStat(t *testing.T) {
	base := fstest.MapFS{
		"bot/agent.yaml":               {Data: []byte("name: bot\n")},
		"bot/AGENTS.md":                {Data: []byte("# Rules\n")},
		"bot/users/u1/USER.md":         {Data: []byte("# Ann\n")},
		"bot/users/u1/memory/today.md": {Data: []byte("# today\n")},
	}
	ws, err := prompt.Open(base, prompt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reads := &openCounter{MapFS: base}
	s := &seedFS{base: reads, agents: ws.Agents()}
	if err := fstest.TestFS(s, "bot/AGENTS.md", "bot/users/u1/USER.md", "bot/users/u1/memory/today.md"); err != nil {
		t.Fatal(err)
	}
	reads.opens = 0
	for _, name := range []string{"bot/AGENTS.md", "bot/users/u1/memory", "bot/users/u1/USER.md"} {
		fi, err := fs.Stat(s, name)
		if err != nil {
			t.Fatalf("stat %s: %v", name, err)
		}
		if want, _ := fs.Stat(base, name); fi.Size() != want.Size() || fi.IsDir() != want.IsDir() {
			t.Errorf("stat %s: size %d, dir %v; want %d, %v", name, fi.Size(), fi.IsDir(), want.Size(), want.IsDir())
		}
	}
	if reads.opens != 0 {
		t.Errorf("stat opened %d files of the base, want none", reads.opens)
	}
	seeds := templates.Seeds(ws.Agents()[0].Config.Type, nil)
	if len(seeds) == 0 {
		t.Fatal("no seed files")
	}
	for name, b := range seeds {
		fi, err := fs.Stat(s, "bot/users/new/"+name)
		if err != nil {
			t.Fatalf("stat the seed %s: %v", name, err)
		}
		if fi.Size() != int64(len(b)) || fi.Name() != name || fi.IsDir() {
			t.Errorf("stat the seed %s: %s, size %d, dir %v; want size %d", name, fi.Name(), fi.Size(), fi.IsDir(), len(b))
		}
	}
	for _, name := range []string{"bot/users/new/notes.md", "bot/users/u1/BOOTSTRAP.md", "bot/MEMORY.md"} {
		if _, err := fs.Stat(s, name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stat %s: %v, want not found", name, err)
		}
	}
}

// openCounter counts the files opened of its FS, stating them as the FS
// does.
type openCounter struct {
	fstest.MapFS
	opens int
}

func (c *openCounter) Open(name string) (fs.File, error) {
	c.opens++
	return c.MapFS.Open(name)
}
