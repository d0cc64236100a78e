package prompt

import (
	"io/fs"

	"github.com/quirehq/quire/workspace"
)

// Seeder returns the files (name → content) a user reads before their
// first write, when their directory does not exist yet: USER.md and
// BOOTSTRAP.md for an agent of type t whose agent-level USER.md is
// agentUser (nil when there is none). templates.Seeds is the one Quire
// uses; prompt takes it as a function because templates imports prompt.
type Seeder func(t AgentType, agentUser []byte) map[string][]byte

// seedNote is the report note of a seeded file.
const seedNote = "not stored yet: the template, stored with the user's first write"

// seedFile returns agent a's seed of the context file rel for a user with
// no directory, or nil. The File is shared by every such user: its Path is
// the agent's, and the report names the user's path (userSeedReport).
func (w *Workspace) seedFile(a *Agent, rel string) *File {
	if w.seeder == nil || (rel != workspace.UserFile && rel != workspace.BootstrapFile) {
		return nil
	}
	w.mu.Lock()
	m, ok := w.seeds[a]
	w.mu.Unlock()
	if !ok {
		m = w.loadSeeds(a)
		w.mu.Lock()
		w.seeds[a] = m
		w.mu.Unlock()
	}
	return m[rel]
}

// loadSeeds builds agent a's seed files.
func (w *Workspace) loadSeeds(a *Agent) map[string]*File {
	agentUser, err := fs.ReadFile(w.fsys, joinPath(a.Dir, workspace.UserFile))
	if err != nil {
		agentUser = nil
	}
	out := map[string]*File{}
	for name, b := range w.seeder(a.Config.Type, agentUser) {
		f := &File{Name: name, Path: joinPath(a.Dir, name), text: newText(string(b)), seed: true}
		if !w.estimate {
			f.key = w.fingerprint(f.text)
		}
		out[name] = f
	}
	return out
}

// userSeedReport names user's own path (in userDir) in the reports of rep's
// seed files, whose sources are files.
func userSeedReport(rep *Report, sources []*File, user, userDir string) {
	for i, f := range sources {
		if f == nil || !f.seed {
			continue
		}
		fr := &rep.Files[i]
		fr.Path, fr.User = joinPath(userDir, f.Name), user
		if fr.Note == "" {
			fr.Note = seedNote
		}
	}
}
