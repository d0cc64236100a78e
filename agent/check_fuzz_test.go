package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// outsideMarker is the content of a file next to (outside) the fuzzed
// workspace: it must never reach a prompt or a finding.
const outsideMarker = "OUTSIDE-THE-ROOT-7c1e"

// fuzzPaths are the names a fuzzed tree is made of: context files,
// memory, users (well and badly encoded), skills, a second agent, names
// that are not UTF-8 or need quoting.
var fuzzPaths = []string{
	"agent.yaml", "AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "MEMORY.md", "memory.md",
	"memory/2026-01-01.md", "memory/notes.md", "memory/deep/x.md", "users/alice/USER.md",
	"users/alice/MEMORY.md", "users/Bob/MEMORY.md", "users/%41/USER.md", "skills/pdf/SKILL.md",
	"bot/agent.yaml", "bot/SOUL.md", "bot/memory/2026-01-02.md", "bot/users/alice/USER.md",
	"bot/skills/x/SKILL.md", "notes.txt", "\xff\xfe.md", "a b/é.md", "rooms/r.md", "bot",
}

// fuzzLinkTargets are where a fuzzed symbolic link points: out of the
// root, inside it, at a directory, at a device, at itself.
var fuzzLinkTargets = []string{"../outside/secret.md", "AGENTS.md", "bot", "/dev/zero", ".", "loop", "../outside"}

// fuzzContents seed what files hold: agent.yaml with a reject policy and
// a tiny budget (so budget errors happen), a skill, plain and broken text.
var fuzzContents = []string{
	"name: fz\npolicy: reject\nbudget: {per_file: 12, total: 40}\n",
	"name: bot\ntype: open\n",
	"---\nname: pdf\ndescription: Reads PDFs.\n---\n# PDF\n",
	"# Soul\nKind and brief, and a little longer than twelve chars.\n",
	"caf\xe9 \xff\xfe\n",
	"",
}

// FuzzWorkspaceTree builds a workspace tree from the input (files of
// random names, modes and encodings, links out of and inside the root,
// FIFOs, files over 1 MiB) and checks that nothing is read from outside
// the root, that checking and assembling every prompt ends under a
// deadline, and that `quire check` (agent.Check on the working tree)
// and the push validator (WorkspaceChecks on the same tree committed)
// refuse the same files for the same reasons.
func FuzzWorkspaceTree(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 3, 0, 2, 0, 3, 1, 0})
	f.Add([]byte{1, 2, 0, 3, 3, 0, 0, 5, 4, 2, 3, 7, 1, 0, 4})
	f.Add([]byte{0, 0, 0, 0, 1, 3, 3, 4, 0, 0, 6, 4, 0, 5, 2, 0, 2, 0, 4, 14, 2})
	f.Add([]byte{0, 15, 1, 3, 16, 2, 0, 16, 0, 3, 24, 2, 1, 7, 4, 5, 5, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		parent, err := os.MkdirTemp("", "quire-fuzz-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(parent)
		if err := os.MkdirAll(filepath.Join(parent, "outside"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(parent, "outside", "secret.md"), []byte(outsideMarker+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(parent, "ws")
		special := buildFuzzTree(t, root, data)

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		type outcome struct {
			found   []workspace.Problem
			prompts []string
		}
		done := make(chan outcome, 1)
		go func() {
			var o outcome
			dir := workspace.DirFS(root)
			o.found = agent.Check(ctx, dir, agent.CheckOptions{RootName: "fz"})
			if ws, err := prompt.Open(dir, prompt.Options{RootName: "fz", EstimateTokens: true}); err == nil {
				for _, a := range ws.Agents() {
					users, _ := ws.Users(a)
					for _, u := range append([]string{""}, users...) {
						if res, err := ws.Assemble(prompt.Request{Agent: a.Name, User: u, Now: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}); err == nil {
							o.prompts = append(o.prompts, res.Prompt)
						}
					}
				}
			}
			done <- o
		}()
		var o outcome
		select {
		case o = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("check and assembly of the tree did not end within 20 s (a read blocked?)")
		}
		for _, p := range o.prompts {
			if strings.Contains(p, outsideMarker) {
				t.Fatalf("a prompt holds a file from outside the root")
			}
		}
		for _, p := range o.found {
			if strings.Contains(p.Message, outsideMarker) {
				t.Fatalf("a finding holds a file from outside the root: %s", p)
			}
		}
		if special {
			return // a FIFO cannot be committed: nothing to compare
		}

		snap, changed := commitFuzzTree(t, root)
		validator := gitsync.TreeValidator(agent.WorkspaceChecks(agent.CheckOptions{RootName: "fz"}))
		pushed := validator.Validate(ctx, gitsync.RefUpdate{Name: gitsync.MainRef}, snap, changed)
		if got, want := findingKeys(pushed), findingKeys(workspace.Errors(o.found)); !slices.Equal(got, want) {
			t.Fatalf("check and the push validator disagree:\ncheck: %q\npush:  %q", want, got)
		}
	})
}

// buildFuzzTree creates the tree data describes under root and reports
// whether it holds a special file. Each entry takes three bytes (what,
// which path, which content or target); what does not fit is skipped.
func buildFuzzTree(t *testing.T, root string, data []byte) (special bool) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+2 < len(data) && i < 3*24; i += 3 {
		kind, name := data[i]%7, fuzzPaths[int(data[i+1])%len(fuzzPaths)]
		arg := int(data[i+2])
		full := filepath.Join(root, filepath.FromSlash(name))
		if os.MkdirAll(filepath.Dir(full), 0o755) != nil {
			continue
		}
		if _, err := os.Lstat(full); err == nil {
			continue // the first entry of a name wins
		}
		switch kind {
		case 0, 1, 2: // a file: content from the seeds, or the input's bytes
			content := []byte(fuzzContents[arg%len(fuzzContents)])
			if arg >= 128 {
				content = data[i:min(len(data), i+arg-128)]
			}
			mode := os.FileMode(0o644)
			if kind == 2 {
				mode = 0o755
			}
			_ = os.WriteFile(full, content, mode)
		case 3: // a symbolic link
			_ = os.Symlink(fuzzLinkTargets[arg%len(fuzzLinkTargets)], full)
		case 4: // a FIFO
			if makeFIFO(full) == nil {
				special = true
			}
		case 5: // over the 1 MiB file limit
			_ = os.WriteFile(full, bytes.Repeat([]byte("x"), workspace.MaxFileBytes+1+arg), 0o644)
		case 6: // a directory (with a file: git keeps no empty one)
			if os.MkdirAll(full, 0o755) == nil {
				_ = os.WriteFile(filepath.Join(full, "keep.txt"), nil, 0o644)
			}
		}
	}
	return special
}

// commitFuzzTree commits the tree at root (as git add -A would: files,
// executables, links; empty directories vanish) into a new bare
// repository, in process (running git for each input slows fuzzing
// fiftyfold), and returns its snapshot and every file as added.
func commitFuzzTree(t *testing.T, root string) (*gitsync.Snapshot, []gitsync.Change) {
	dir := t.TempDir()
	if _, err := gogit.PlainInit(dir, true); err != nil {
		t.Fatal(err)
	}
	repo, err := gitsync.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := repo.Git().Storer
	var build func(dir string) (plumbing.Hash, bool)
	build = func(dir string) (plumbing.Hash, bool) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var tree object.Tree
		for _, e := range entries {
			full := filepath.Join(dir, e.Name())
			info, err := os.Lstat(full)
			if err != nil {
				t.Fatal(err)
			}
			var h plumbing.Hash
			var mode filemode.FileMode
			switch {
			case info.IsDir():
				var ok bool
				if h, ok = build(full); !ok {
					continue
				}
				mode = filemode.Dir
			case info.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(full)
				if err != nil {
					t.Fatal(err)
				}
				h, mode = storeObject(t, st, plumbing.BlobObject, []byte(target)), filemode.Symlink
			case info.Mode().IsRegular():
				b, err := os.ReadFile(full)
				if err != nil {
					t.Fatal(err)
				}
				h, mode = storeObject(t, st, plumbing.BlobObject, b), filemode.Regular
				if info.Mode()&0o111 != 0 {
					mode = filemode.Executable
				}
			default:
				continue
			}
			tree.Entries = append(tree.Entries, object.TreeEntry{Name: e.Name(), Mode: mode, Hash: h})
		}
		if len(tree.Entries) == 0 && dir != root {
			return plumbing.ZeroHash, false
		}
		sort.Slice(tree.Entries, func(i, j int) bool { return treeSortName(tree.Entries[i]) < treeSortName(tree.Entries[j]) })
		return encode(t, st, &tree), true
	}
	treeHash, _ := build(root)
	sig := object.Signature{Name: "fuzz", Email: "fuzz@example.com", When: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	head := encode(t, st, &object.Commit{Author: sig, Committer: sig, Message: "fuzz\n", TreeHash: treeHash})
	snap, err := repo.SnapshotOf(head)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := repo.Changes(context.Background(), plumbing.ZeroHash, head)
	if err != nil {
		t.Fatal(err)
	}
	return snap, changed
}

// treeSortName is the name git sorts a tree entry by (directories as if
// they ended in a slash).
func treeSortName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

func storeObject(t *testing.T, st storer.EncodedObjectStorer, typ plumbing.ObjectType, b []byte) plumbing.Hash {
	obj := st.NewEncodedObject()
	obj.SetType(typ)
	w, err := obj.Writer()
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	w.Close()
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// encode stores a tree or commit.
func encode(t *testing.T, st storer.EncodedObjectStorer, o interface {
	Encode(plumbing.EncodedObject) error
}) plumbing.Hash {
	obj := st.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		t.Fatal(err)
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// findingKeys names each finding by its path and code, sorted and without
// repeats: what must agree (messages may word a read error differently).
func findingKeys(ps []workspace.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s|%s", p.Path, p.Code))
	}
	sort.Strings(out)
	return slices.Compact(out)
}
