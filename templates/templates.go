package templates

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

//go:embed files/*.md
var files embed.FS

// Template names that are not context file names: they seed a file of
// another name.
const (
	BootstrapPredefined = "BOOTSTRAP_PREDEFINED.md" // seeds a predefined agent user's BOOTSTRAP.md
)

// File is a file to create: its name relative to the directory it is
// seeded into, and its content.
type File struct {
	Name    string
	Content []byte
}

// Template returns the embedded template called name (e.g. "SOUL.md").
func Template(name string) ([]byte, error) {
	b, err := files.ReadFile("files/" + name)
	if err != nil {
		return nil, fmt.Errorf("no template %q: %w", name, err)
	}
	return b, nil
}

func mustTemplate(name string) []byte {
	b, err := Template(name)
	if err != nil {
		// The names below are fixed at compile time and tested; a missing
		// one is a build defect, not bad input.
		panic(err)
	}
	return b
}

// AgentFiles returns the files a new agent workspace of type t starts
// with: agent.yaml and the agent-level context files. BOOTSTRAP.md is never
// agent-level: each user gets their own on first contact (UserFiles), so a
// finished first run cannot fall back to a shared one.
func AgentFiles(name string, t prompt.AgentType) []File {
	out := []File{{Name: workspace.ConfigFile, Content: AgentYAML(name, t)}}
	names := []string{workspace.AgentsFile, workspace.SoulFile, workspace.ToolsFile, workspace.IdentityFile, workspace.UserFile, workspace.HeartbeatFile}
	if t == prompt.TypePredefined {
		names = append(names, workspace.UserPredefinedFile)
	}
	for _, n := range names {
		out = append(out, File{Name: n, Content: mustTemplate(n)})
	}
	return out
}

// AgentYAML returns a commented agent.yaml for a new agent.
func AgentYAML(name string, t prompt.AgentType) []byte {
	typeNote := "predefined: AGENTS, SOUL, IDENTITY, TOOLS, USER_PREDEFINED and HEARTBEAT are shared by all users;\n# each user has their own USER.md and BOOTSTRAP.md."
	if t == prompt.TypeOpen {
		typeNote = "open: every user may have their own copy of every context file under users/<id>/;\n# a user without a copy gets the file in this directory."
	}
	return fmt.Appendf(nil, `# Quire agent workspace. Every key is optional; see 'quire help check'.
name: %s
# %s
type: %s
# policy: truncate keeps the head and tail of an over-long context file;
# reject makes the git endpoint refuse a push that puts a file over budget.
policy: truncate
# budget:            # in characters (Unicode code points)
#   per_file: 20000
#   total: 24000
#   min_file: 64
#   head_ratio: 0.7
#   tail_ratio: 0.2
# identity: "You are a personal assistant running inside Quire."
# timezone: Europe/Lisbon
# skills: [durable-memory, daily-log-hygiene]   # allow list; leave out for all skills, [] for none
#   (names of skills/<name>/ here and of Quire's built-in skills: 'quire skills list' shows them)
# write_limit_bytes: 16384
# daily_log_retention_days: 0   # keep every daily log; N prunes logs older than N days
`, name, typeNote, t)
}

// UserFiles returns the files a user gets on first contact with an agent
// of type t. agentUser is the agent-level USER.md (nil if there is none):
// for a predefined agent that has written one, the user's USER.md starts as
// a copy of it instead of the blank template. Every user gets their own
// BOOTSTRAP.md, the first-run ritual for the agent's type. Open agents'
// other files are not copied: a user reads the agent-level file until they
// (or the agent on their behalf) write their own.
func UserFiles(t prompt.AgentType, agentUser []byte) []File {
	user := mustTemplate(workspace.UserFile)
	boot := mustTemplate(workspace.BootstrapFile)
	if t == prompt.TypePredefined {
		if len(bytes.TrimSpace(agentUser)) > 0 {
			user = agentUser
		}
		boot = mustTemplate(BootstrapPredefined)
	}
	return []File{{Name: workspace.UserFile, Content: user}, {Name: workspace.BootstrapFile, Content: boot}}
}

// Seeds is UserFiles as name → content: the prompt.Seeder every reader
// (the CLI, the daemon, the language server) gives prompt.Open, so a new
// user's first prompt holds the bytes their first write stores.
func Seeds(t prompt.AgentType, agentUser []byte) map[string][]byte {
	out := map[string][]byte{}
	for _, f := range UserFiles(t, agentUser) {
		out[f.Name] = f.Content
	}
	return out
}

// DeletesWhenEmpty reports whether writing name with empty (white-space
// only) content deletes the file instead: BOOTSTRAP.md, whose deletion ends
// the first-run ritual.
func DeletesWhenEmpty(name string, content []byte) bool {
	return filepath.Base(name) == workspace.BootstrapFile && len(bytes.TrimSpace(content)) == 0
}

// SeedResult says what Seed did.
type SeedResult struct {
	Created []string // paths created
	Kept    []string // paths that existed and were left alone
}

// Seed creates each file in dir, creating directories as needed. A file
// that already exists is never touched: creation uses O_EXCL, so even a
// file that appears between the check and the write is kept.
func Seed(dir string, files []File) (SeedResult, error) {
	var res SeedResult
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return res, fmt.Errorf("seed %s: %w", p, err)
		}
		fh, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			res.Kept = append(res.Kept, p)
			continue
		}
		if err != nil {
			return res, fmt.Errorf("seed %s: %w", p, err)
		}
		_, werr := fh.Write(f.Content)
		cerr := fh.Close()
		if werr != nil || cerr != nil {
			os.Remove(p) // do not leave a half-written file behind
			return res, fmt.Errorf("seed %s: %w", p, errors.Join(werr, cerr))
		}
		res.Created = append(res.Created, p)
	}
	return res, nil
}
