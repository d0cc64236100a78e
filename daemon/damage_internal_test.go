package daemon

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
)

// TestDamageEntries: each fault of a damaged repository lands in status
// where it belongs: on the deployed agent whose directory holds it (the
// innermost; the root agent holds everything), as a hidden agent when
// its directory cannot be read and no deployed agent holds it, and on
// the repository otherwise.
func TestDamageEntries(t *testing.T) {
	tree := func(p string) gitsync.Fault {
		return gitsync.Fault{File: "objects/pack/pack-1.pack", Ref: "refs/heads/live", Path: p, Object: plumbing.NewHash("1111111111111111111111111111111111111111"),
			Type: plumbing.TreeObject, Reason: "flate: corrupt input"}
	}
	blob := tree("")
	blob.Type = plumbing.BlobObject
	pack := gitsync.Fault{File: "objects/pack/pack-1.pack", Reason: "it is truncated"}
	dep := func(dirs map[string]string) *deployment {
		d := &deployment{agents: map[string]*deployedAgent{}}
		for name, dir := range dirs {
			d.names = append(d.names, name)
			d.agents[name] = &deployedAgent{agent: &prompt.Agent{Name: name, Dir: dir}}
		}
		return d
	}
	for _, c := range []struct {
		name   string
		dep    *deployment
		faults []gitsync.Fault
		notes  map[string]string // agent → a part of its note
		hidden map[string]string // hidden agent → a part of its entry
		repo   string            // a part of the repository's entry ("" none)
	}{
		{"hidden agent", dep(map[string]string{"studybuddy": "studybuddy"}), []gitsync.Fault{pack, tree("concierge")},
			nil, map[string]string{"concierge": "not deployed: the repository is damaged: concierge/ (tree 111111111111) in refs/heads/live"},
			"repository damaged: objects/pack/pack-1.pack: it is truncated"},
		{"a file of a deployed agent", dep(map[string]string{"a": "team/a", "team": "team"}),
			[]gitsync.Fault{func() gitsync.Fault { b := blob; b.Path = "team/a/SOUL.md"; return b }()},
			map[string]string{"a": "repository damaged: team/a/SOUL.md (blob 111111111111)"}, nil, ""},
		{"the root agent holds all", dep(map[string]string{"bot": "."}), []gitsync.Fault{tree("memory")},
			map[string]string{"bot": "memory/ (tree "}, nil, ""},
		{"nothing deployed", nil, []gitsync.Fault{tree("."), tree("x/y")},
			nil, map[string]string{"y": "x/y/ (tree "}, "repository damaged, no agent of it can be read: the root directory (tree "},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &source{kind: kindRepo, name: "agents"}
			notes, entries, repo := damageEntries(s, c.dep, &gitsync.DamageError{Repo: "/srv/repos/agents.git", Faults: c.faults})
			if len(notes) != len(c.notes) {
				t.Errorf("notes %v, want %v", notes, c.notes)
			}
			for name, want := range c.notes {
				if !strings.Contains(notes[name], want) || !strings.HasSuffix(notes[name], "; stop quire serve, then run quire doctor --repos /srv/repos for how to repair it") {
					t.Errorf("note of %s: %q, want %q and the repair", name, notes[name], want)
				}
			}
			hidden := map[string]string{}
			for _, e := range entries {
				if e.Source != "repo:agents" || e.Deployed != "" || e.Name == "" {
					t.Errorf("entry %+v", e)
				}
				hidden[e.Name] = e.LastError
			}
			if len(hidden) != len(c.hidden) || (repo == "") != (c.repo == "") || !strings.Contains(repo, c.repo) {
				t.Errorf("entries %+v, want hidden %v and repository %q", entries, c.hidden, c.repo)
			}
			for name, want := range c.hidden {
				if !strings.Contains(hidden[name], want) {
					t.Errorf("hidden %s: %q, want %q", name, hidden[name], want)
				}
			}
		})
	}
}
