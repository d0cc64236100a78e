package prompt

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/quirehq/quire/workspace"
)

// Options configure how a workspace is read.
type Options struct {
	// RootName names the agent at the repository root when the repository
	// has no agent.yaml; "" means "default".
	RootName string
	// Tokenizer remembers token counts and parsed agent.yaml files. Share one
	// between workspaces (the daemon, the language server) so a new
	// revision only tokenises and parses what changed; nil makes a new one.
	Tokenizer *Tokenizer
	// EstimateTokens reports estimated token counts (chars / 4, marked
	// estimated) instead of tokenising: for callers that print the prompt
	// and not the report, such as `quire prompt` without --report. A
	// request's CountPromptTokens still counts the whole prompt exactly.
	EstimateTokens bool
	// Seeds gives a user with no directory yet the files their first write
	// will store (templates.Seeds), so their first prompt holds USER.md,
	// BOOTSTRAP.md and the First Run section; nil seeds nothing.
	Seeds Seeder
}

// Workspace is an immutable view of a workspace repository read through an
// fs.FS. It caches every file it reads and every context plan it computes,
// so the fs.FS must not change while the Workspace is in use: open a new
// Workspace for a new commit, or for a new overlay of editor buffers.
// A Workspace is safe for concurrent use.
type Workspace struct {
	fsys     fs.FS
	cache    *Tokenizer
	estimate bool // Options.EstimateTokens
	seeder   Seeder
	agents   []*Agent
	byName   map[string]*Agent
	problems []workspace.Problem
	seed     maphash.Seed

	mu     sync.Mutex
	files  map[string]*fileEntry
	plans  map[planKey]*plan
	shared map[uint64]*plan // by the files a plan injects, see sharedKey
	dirs   map[string]dirState
	asked  map[string]bool // directories with a child listed directly (listParent)
	seeds  map[*Agent]map[string]*File

	// derived are each agent's virtual files, built by Open (virtual.go).
	derived map[*Agent][]VirtualFile
}

// dirState is what the workspace knows of a directory's entries, so a file
// that is not there costs no open: a new user's files, a missing MEMORY.md.
type dirState struct {
	entries []fs.DirEntry // sorted by name (fs.ReadDir's order)
	absent  bool          // the directory does not exist
	unknown bool          // it could not be listed: open files to find out
}

// Agent is one agent workspace: a directory with agent.yaml, or the root.
type Agent struct {
	// Name identifies the agent (agent.yaml name, or the directory name).
	Name string
	// Dir is the agent's slash path in the fs.FS; "." for the root.
	Dir string
	// Config is agent.yaml with defaults applied.
	Config Config
	// Problems found in agent.yaml.
	Problems []workspace.Problem
}

type fileEntry struct {
	file *File // nil: missing
	err  error // a read error other than "does not exist"
}

// Open discovers the agents of the workspace in fsys and returns a
// Workspace that reads them. It fails when fsys cannot be read at all
// (e.g. the directory does not exist) and, with a *NoAgentError, when it
// holds no agent; problems with the content, such as a malformed
// agent.yaml, are recorded on the agents and in Problems.
func Open(fsys fs.FS, opts Options) (*Workspace, error) {
	w := &Workspace{
		fsys:     fsys,
		cache:    opts.Tokenizer,
		estimate: opts.EstimateTokens,
		seeder:   opts.Seeds,
		seeds:    map[*Agent]map[string]*File{},
		byName:   map[string]*Agent{},
		files:    map[string]*fileEntry{},
		plans:    map[planKey]*plan{},
		shared:   map[uint64]*plan{},
		dirs:     map[string]dirState{},
	}
	if w.cache == nil {
		w.cache = NewTokenizer()
	}
	w.seed = w.cache.seed // fingerprints double as token-count keys
	dirs, orphan, err := discover(fsys, w.dirs)
	if err != nil {
		return nil, err
	}
	rootName := opts.RootName
	if rootName == "" {
		rootName = "default"
	}
	if len(dirs) == 0 {
		if !hasPersona(w.dirs["."].entries) {
			return nil, &NoAgentError{Orphan: orphan}
		}
		dirs = []string{"."}
	}
	for _, a := range w.readAgents(dirs, rootName) {
		cfgPath := joinPath(a.Dir, workspace.ConfigFile)
		if other, dup := w.byName[a.Name]; dup {
			w.problems = append(w.problems, a.Problems...)
			w.problems = append(w.problems, workspace.Problem{Path: cfgPath, Severity: workspace.SeverityError, Code: "agent-duplicate-name",
				Message: fmt.Sprintf("agent name %q is also used by %s; give one of them another name", a.Name, joinPath(other.Dir, workspace.ConfigFile))})
			continue
		}
		w.byName[a.Name] = a
		w.agents = append(w.agents, a)
		w.problems = append(w.problems, a.Problems...)
	}
	slices.SortFunc(w.agents, func(a, b *Agent) int { return strings.Compare(a.Name, b.Name) })
	w.deriveVirtual()
	return w, nil
}

// parallelAgents is how many agents make Open read their agent.yaml
// files on more than one goroutine.
const parallelAgents = 64

// readAgents reads the agent.yaml of each of dirs (on up to GOMAXPROCS
// goroutines for a large workspace: fsys is read concurrently, as a
// Workspace's requests read it) and returns the agents in dirs' order.
func (w *Workspace) readAgents(dirs []string, rootName string) []*Agent {
	agents := make([]*Agent, len(dirs))
	workers := min(runtime.GOMAXPROCS(0), len(dirs)/parallelAgents)
	if workers <= 1 {
		for i, dir := range dirs {
			agents[i] = w.readAgent(dir, rootName)
		}
		return agents
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(dirs)); i = next.Add(1) - 1 {
				agents[i] = w.readAgent(dirs[i], rootName)
			}
		})
	}
	wg.Wait()
	return agents
}

// readAgent reads the agent of dir: its agent.yaml with defaults
// applied, or the defaults, and the problems found in it. Open has
// listed the directories; readAgent only reads them.
func (w *Workspace) readAgent(dir, rootName string) *Agent {
	defName := path.Base(dir)
	if dir == "." {
		defName = rootName
	}
	a := &Agent{Name: defName, Dir: dir, Config: DefaultConfig(defName)}
	cfgPath := joinPath(dir, workspace.ConfigFile)
	var data []byte
	err := fs.ErrNotExist
	if d, ok := w.dirs[dir]; !ok || hasEntry(d.entries, workspace.ConfigFile) {
		// The root of a workspace without agent.yaml was listed:
		// no open to find it missing.
		data, err = fs.ReadFile(w.fsys, cfgPath)
	}
	switch {
	case err == nil:
		a.Config, a.Problems = w.cache.config(cfgPath, defName, data)
		a.Name = a.Config.Name
	case !errors.Is(err, fs.ErrNotExist):
		a.Problems = append(a.Problems, workspace.Problem{Path: cfgPath, Severity: workspace.SeverityError, Code: "read", Message: fmt.Sprintf("cannot read agent.yaml: %v", err)})
	}
	return a
}

// discover walks fsys for agent.yaml files and returns their directories
// in walk order. It does not descend into hidden directories or
// node_modules, nor into the users/, memory/, rooms/ and skills/
// directories of an agent or of the repository root (which is the agent
// when the repository has no agent.yaml): those hold an agent's files,
// never another agent, and a root agent's skills/ may hold many
// directories. Each directory is listed once; agent.yaml is looked for
// among its entries before any subdirectory is entered.
// Every listing it reads is kept in listed. orphan is the first
// AGENTS.md or SOUL.md found in a subdirectory without agent.yaml, which
// is no agent: NoAgentError points at it.
func discover(fsys fs.FS, listed map[string]dirState) (dirs []string, orphan string, err error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, "", fmt.Errorf("read workspace: %w", err)
	}
	var walk func(dir string, entries []fs.DirEntry)
	walk = func(dir string, entries []fs.DirEntry) {
		listed[dir] = dirState{entries: sortedEntries(entries)}
		agent := false
		for _, e := range entries {
			if e.Name() == workspace.ConfigFile && !e.IsDir() {
				agent = true
				break
			}
		}
		if agent {
			dirs = append(dirs, dir)
		} else if orphan == "" && dir != "." {
			for _, e := range entries {
				if isPersona(e) {
					orphan = joinPath(dir, e.Name())
					break
				}
			}
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			base := e.Name()
			if workspace.SkipsAgentSearch(base, agent || dir == ".") {
				continue
			}
			p := joinPath(dir, base)
			sub, err := fs.ReadDir(fsys, p)
			if err != nil {
				continue // unreadable subdirectory: not an agent
			}
			walk(p, sub)
		}
	}
	walk(".", entries)
	return dirs, orphan, nil
}

// hasPersona reports whether a listing holds AGENTS.md or SOUL.md, which
// make the root of a tree without agent.yaml an agent.
func hasPersona(entries []fs.DirEntry) bool {
	return slices.ContainsFunc(entries, isPersona)
}

func isPersona(e fs.DirEntry) bool {
	return (e.Name() == workspace.AgentsFile || e.Name() == workspace.SoulFile) && !e.IsDir()
}

// ErrNoAgent is what errors.Is finds in the error Open returns for a tree
// that holds no agent (a *NoAgentError).
var ErrNoAgent = errors.New("no agent here")

// NoAgentError is Open's answer for a tree with no agent: no agent.yaml in
// it (where Open looks for one), and neither AGENTS.md nor SOUL.md at its
// root to make the root one. Every reader of a workspace (the commands,
// the daemon, the git endpoint, the language server) refuses such a tree
// with it rather than serve an empty agent named after the directory. A
// caller that knows the directory's name puts it in front.
type NoAgentError struct {
	// Orphan is an AGENTS.md or SOUL.md found in a subdirectory without
	// agent.yaml (e.g. "bot/SOUL.md"), "" for none: likely the agent
	// meant, which agent.yaml beside it would make one.
	Orphan string
}

func (e *NoAgentError) Error() string {
	msg := "no agent here: looked for agent.yaml, AGENTS.md or SOUL.md at the root and for agent.yaml in its subdirectories"
	if e.Orphan != "" {
		dir, name := path.Split(e.Orphan)
		return fmt.Sprintf("%s; %s has %s but no agent.yaml: add one there to make it an agent", msg, strings.TrimSuffix(dir, "/"), name)
	}
	return msg + " (create one with 'quire init')"
}

// Is makes errors.Is(err, ErrNoAgent) true.
func (e *NoAgentError) Is(target error) bool { return target == ErrNoAgent }

// FS returns the file system the workspace reads.
func (w *Workspace) FS() fs.FS { return w.fsys }

// Agents returns the workspace's agents sorted by name.
func (w *Workspace) Agents() []*Agent { return w.agents }

// Problems returns the problems found while discovering agents.
func (w *Workspace) Problems() []workspace.Problem { return w.problems }

// ErrUnknownAgent is returned when a request names an agent the workspace
// does not have.
var ErrUnknownAgent = errors.New("unknown agent")

// Agent returns the agent called name. An empty name selects the only agent
// of a workspace that has one.
func (w *Workspace) Agent(name string) (*Agent, error) {
	if name == "" {
		if len(w.agents) == 1 {
			return w.agents[0], nil
		}
		return nil, fmt.Errorf("%w: this workspace has %d agents (%s); name one", ErrUnknownAgent, len(w.agents), strings.Join(w.agentNames(), ", "))
	}
	if a, ok := w.byName[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("%w %q; this workspace has: %s", ErrUnknownAgent, name, strings.Join(w.agentNames(), ", "))
}

func (w *Workspace) agentNames() []string {
	names := make([]string, len(w.agents))
	for i, a := range w.agents {
		names[i] = a.Name
	}
	return names
}

// UserDir returns the slash path of a user's directory in an agent.
func (a *Agent) UserDir(user string) (string, error) {
	enc, err := workspace.EncodeID(user)
	if err != nil {
		return "", fmt.Errorf("user: %w", err)
	}
	return joinPath(a.Dir, workspace.UsersDir, enc), nil
}

// Users lists the ids of the users that have a directory in the agent,
// sorted. Directories whose names do not decode are reported as problems.
func (w *Workspace) Users(a *Agent) ([]string, []workspace.Problem) {
	entries, err := fs.ReadDir(w.fsys, joinPath(a.Dir, workspace.UsersDir))
	if err != nil {
		return nil, nil
	}
	var users []string
	var probs []workspace.Problem
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		id, err := workspace.DecodeID(e.Name())
		if err != nil {
			probs = append(probs, workspace.Problem{Path: joinPath(a.Dir, workspace.UsersDir, e.Name()), Severity: workspace.SeverityWarning, Code: "user-dir-name",
				Message: fmt.Sprintf("directory name is not an encoded user id (%v); Quire ignores it — name user directories with `quire` (ids are lower-case letters, digits, - _ . and %%XX escapes)", err)})
			continue
		}
		users = append(users, id)
	}
	sort.Strings(users)
	return users, probs
}

// file reads (once) the file at slash path p for agent a. It returns nil
// for a missing file.
func (w *Workspace) file(a *Agent, p, name, user string) (*File, error) {
	w.mu.Lock()
	e, ok := w.files[p]
	w.mu.Unlock()
	if ok {
		return e.file, e.err
	}
	listed, may := w.listing(p)
	if !may {
		return nil, nil // not remembered: the listing answers again for free
	}
	// The entry, the File and a complete file's text in one allocation.
	slot := &struct {
		entry fileEntry
		file  File
		text  text
	}{}
	e = &slot.entry
	t, err := loadText(w.fsys, p, listed, a.Config.Budget.windowChars()+lineSlack, &slot.text)
	switch {
	case err == nil:
		slot.file = File{Name: name, Path: p, User: user, text: t}
		e.file = &slot.file
		if !w.estimate { // the key looks token counts up
			e.file.key = w.fingerprint(t)
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		e.err = fmt.Errorf("read %s: %w", p, err)
	}
	w.mu.Lock()
	if prev, ok := w.files[p]; ok { // another goroutine won the race
		e = prev
	} else {
		w.files[p] = e
	}
	w.mu.Unlock()
	return e.file, e.err
}

// listing reports whether the file at slash path p may exist (false only
// when a listing of its directory, or of a directory above it, shows it
// does not) and returns its entry in its directory's listing, if any.
func (w *Workspace) listing(p string) (fs.DirEntry, bool) {
	dir, name := path.Split(p)
	d := w.dir(strings.TrimSuffix(dir, "/"))
	if d.unknown {
		return nil, true
	}
	if d.absent {
		return nil, false
	}
	i, ok := sort.Find(len(d.entries), func(i int) int { return strings.Compare(name, d.entries[i].Name()) })
	if !ok {
		return nil, false
	}
	return d.entries[i], true
}

// dir returns what is known of directory p ("" or "." for the root),
// listing it (and, first, the directories above it) on first use.
func (w *Workspace) dir(p string) dirState {
	if p == "" {
		p = "."
	}
	var parent, name string
	if p != "." {
		parent, name = path.Split(p)
		parent = strings.TrimSuffix(parent, "/")
		if parent == "" {
			parent = "."
		}
	}
	w.mu.Lock()
	d, ok := w.dirs[p]
	pd, parentListed := w.dirs[parent]
	w.mu.Unlock()
	if ok {
		return d
	}
	if p != "." {
		if parentListed || w.listParent(parent) {
			if !parentListed {
				pd = w.dir(parent)
			}
			if !pd.unknown && (pd.absent || !hasEntry(pd.entries, name)) {
				// Not remembered: a new user's directory is asked
				// about once per file, and users are many.
				return dirState{absent: true}
			}
		}
	}
	{
		entries, err := fs.ReadDir(w.fsys, p)
		switch {
		case err == nil:
			d.entries = sortedEntries(entries)
		case errors.Is(err, fs.ErrNotExist):
			d.absent = true
		default:
			d.unknown = true
		}
	}
	w.mu.Lock()
	w.dirs[p] = d
	w.mu.Unlock()
	return d
}

// listParent says whether dir(p) should learn about p from its parent's
// listing (parent, a directory not listed yet) rather than list p
// directly. The first child asked about is listed directly, so one
// request for one user does not list every user's directory; from the
// second on the parent is listed, and later children cost nothing. A
// parent whose own listing is unknown is listed at once.
func (w *Workspace) listParent(parent string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.dirs[parent]; ok || parent == "." {
		return true // listed already: free
	}
	grand, base := path.Split(parent)
	grand = strings.TrimSuffix(grand, "/")
	if grand == "" {
		grand = "."
	}
	gd, ok := w.dirs[grand]
	if !ok || gd.unknown || gd.absent || !hasEntry(gd.entries, base) {
		return true // the parent's own listing answers cheaply, or must be read
	}
	if w.asked[parent] {
		return true
	}
	if w.asked == nil {
		w.asked = map[string]bool{}
	}
	w.asked[parent] = true
	return false
}

// hasEntry reports whether a sorted listing holds name.
func hasEntry(entries []fs.DirEntry, name string) bool {
	_, ok := sort.Find(len(entries), func(i int) int { return strings.Compare(name, entries[i].Name()) })
	return ok
}

// sortedEntries returns entries sorted by name, as fs.ReadDir promises;
// a file system that breaks the promise gets a sorted copy.
func sortedEntries(entries []fs.DirEntry) []fs.DirEntry {
	byName := func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }
	if slices.IsSortedFunc(entries, byName) {
		return entries
	}
	return slices.SortedFunc(slices.Values(entries), byName)
}

func (w *Workspace) fingerprint(t *text) uint64 {
	if !t.sampled {
		return contentKey(w.seed, t.content()) // the key Tokenizer.Count uses
	}
	var h maphash.Hash
	h.SetSeed(w.seed)
	h.WriteString(t.head)
	h.WriteString(t.tail)
	var n [8]byte
	for i := range n {
		n[i] = byte(t.size >> (8 * i))
	}
	h.Write(n[:])
	return h.Sum64()
}
