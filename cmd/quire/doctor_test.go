package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
)

// agentsRepo makes repos/agents.git under dir holding examples/agents
// (agents concierge and studybuddy) on main and live, in one pack
// without deltas (damaging an object damages only it), and a clone of
// it (origin/main, origin/live) to restore it from.
func agentsRepo(t *testing.T, dir string) (repos, bare, pack, clone string) {
	t.Helper()
	wt := filepath.Join(dir, "wt")
	git(t, dir, "init", "-q", "-b", "main", wt)
	src := filepath.Join("..", "..", "examples", "agents")
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(wt, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	git(t, wt, "add", "-A")
	git(t, wt, "commit", "-q", "-m", "agents")
	repos = filepath.Join(dir, "repos")
	bare = filepath.Join(repos, "agents.git")
	git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	git(t, wt, "push", "-q", bare, "main", "main:live")
	git(t, bare, "repack", "-q", "-a", "-d", "-f", "--window=0")
	packs, _ := filepath.Glob(filepath.Join(bare, "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	clone = filepath.Join(dir, "clone")
	// Not hard links to the packs the test damages.
	git(t, dir, "clone", "-q", "--no-local", bare, clone)
	return repos, bare, packs[0], clone
}

// packOffset is where object rev starts in pack (of repository bare).
func packOffset(t *testing.T, bare, pack, rev string) int64 {
	t.Helper()
	h := git(t, bare, "rev-parse", rev)
	idx, err := os.Open(strings.TrimSuffix(pack, ".pack") + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	cmd := exec.Command("git", "show-index")
	cmd.Stdin = idx
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[1] == h {
			off, _ := strconv.ParseInt(f[0], 10, 64)
			return off
		}
	}
	t.Fatalf("%s (%s) is not in %s", rev, h, pack)
	return 0
}

// editFile changes the file at p with edit (packs are read-only).
func editFile(t *testing.T, p string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// served is a daemon the test runs: its client and its JSON log.
type served struct {
	c    *client.Client
	logs *syncBuffer
	stop func()
	addr string // the git endpoint
}

// serveRepos runs a daemon with opts (socket and cache under tmp) until
// stop or the end of the test.
func serveRepos(t *testing.T, tmp, name string, opts daemon.Options) *served {
	t.Helper()
	logs := &syncBuffer{}
	opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	opts.Socket = filepath.Join(tmp, name+".sock")
	if opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(tmp, name+"-cache")
	}
	if opts.ReposDir != "" {
		opts.GitListen = "127.0.0.1:0"
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, opts)
	if err != nil {
		cancel()
		t.Fatalf("daemon.New: %v\n%s", err, logs)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	<-d.Ready()
	s := &served{c: &client.Client{Socket: opts.Socket}, logs: logs, addr: d.GitAddr()}
	stopped := false
	s.stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(s.stop)
	return s
}

// status waits until the daemon deploys the agents named (and no
// other), then returns its status.
func (s *served) status(t *testing.T, deployed ...string) api.Status {
	t.Helper()
	var st api.Status
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		st, err = s.c.Status(context.Background())
		var got []string
		for _, a := range st.Agents {
			if a.Deployed != "" {
				got = append(got, a.Name)
			}
		}
		if err == nil && slices.Equal(got, deployed) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployed %v, want %v: %v\n%s", got, deployed, err, s.logs)
		}
	}
}

// logLine finds a line of the JSON log with every attribute of want
// (a value ending in "…" matches as a prefix, one starting with "…" as
// a substring).
func (s *served) logLine(t *testing.T, want map[string]string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(s.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		ok := true
		for k, w := range want {
			v := fmt.Sprint(m[k])
			switch {
			case strings.HasPrefix(w, "…"):
				ok = ok && strings.Contains(v, strings.TrimPrefix(w, "…"))
			case strings.HasSuffix(w, "…"):
				ok = ok && strings.HasPrefix(v, strings.TrimSuffix(w, "…"))
			default:
				ok = ok && v == w
			}
		}
		if ok {
			return m
		}
	}
	t.Fatalf("no log line with %v:\n%s", want, s.logs)
	return nil
}

// entry is the status entry of agent name ("" for a repository's) from
// source.
func entry(t *testing.T, st api.Status, name, source string) api.AgentStatus {
	t.Helper()
	for _, a := range st.Agents {
		if a.Name == name && a.Source == source {
			return a
		}
	}
	t.Fatalf("no status entry %q of %s: %+v", name, source, st.Agents)
	return api.AgentStatus{}
}

// doctor runs quire doctor and returns its exit code and output.
func doctor(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"doctor"}, args...), &env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }})
	return code, out.String() + errOut.String()
}

// contains fails unless s holds each of wants, in order.
func contains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	at := 0
	for _, w := range wants {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("%s does not say %q (after byte %d):\n%s", what, w, at, s)
		}
		at += i + len(w)
	}
}

// repairAsTold runs the commands doctor printed under "repair:" (the
// lines indented by six spaces; CLONE stands for clone) and checks that doctor then finds the
// repository whole.
func repairAsTold(t *testing.T, out, clone string, args ...string) {
	t.Helper()
	var cmds []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "  repair:"):
			in = true
		case in && strings.HasPrefix(l, "      "):
			cmds = append(cmds, strings.ReplaceAll(strings.TrimSpace(l), "CLONE", clone))
		}
	}
	if len(cmds) == 0 {
		t.Fatalf("doctor printed no command to run:\n%s", out)
	}
	for _, c := range cmds {
		if b, err := exec.Command("sh", "-c", c).CombinedOutput(); err != nil {
			t.Fatalf("the repair command %q: %v\n%s", c, err, b)
		}
	}
	if code, out := doctor(t, args...); code != 0 || !strings.Contains(out, "agents.git: OK") {
		t.Fatalf("doctor after the repair (%s): %d\n%s", strings.Join(cmds, "; "), code, out)
	}
}

// TestCorruptionTable damages a hosted repository (bytes flipped in the
// middle of a pack, a pack cut short, a garbage line in packed-refs) and
// a follower's mirror, with the real git CLI, and checks for each what
// the daemon's log says (ERROR, naming the repository and the file),
// what /v1/status says (which agents are hidden and why), what quire
// doctor says (and that its repair commands work), and that the
// follower's mirror is repaired.
func TestCorruptionTable(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	const source = "repo:agents"

	t.Run("flipped pack bytes", func(t *testing.T) {
		tmp := shortTemp(t)
		repos, bare, pack, clone := agentsRepo(t, tmp)
		off := packOffset(t, bare, pack, "main:concierge")
		editFile(t, pack, func(b []byte) []byte {
			for i := off + 4; i < off+8; i++ {
				b[i] ^= 0xff
			}
			return b
		})
		packFile := "objects/pack/" + filepath.Base(pack)

		s := serveRepos(t, tmp, "d", daemon.Options{ReposDir: repos})
		st := s.status(t, "studybuddy")
		s.logLine(t, map[string]string{"level": "ERROR", "msg": "repository is damaged", "repo": "agents", "file": packFile,
			"reason": "its content does not match its checksum: bytes changed on disk"})
		s.logLine(t, map[string]string{"level": "ERROR", "msg": "repository is damaged", "repo": "agents", "file": packFile,
			"path": "concierge", "type": "tree", "ref": "refs/heads/live", "repair": "…quire doctor --repos " + repos})
		hidden := entry(t, st, "concierge", source)
		contains(t, "concierge's status", hidden.LastError, "not deployed: the repository is damaged: concierge/ (tree ",
			") in refs/heads/live cannot be read from "+packFile+": ", "quire doctor --repos "+repos)
		contains(t, "the repository's status", entry(t, st, "", source).LastError,
			"repository damaged: "+packFile+": its content does not match its checksum")
		if a := entry(t, st, "studybuddy", source); a.LastError != "" {
			t.Errorf("studybuddy is not damaged: %q", a.LastError)
		}
		if _, err := s.c.Prompt(context.Background(), "concierge", api.PromptRequest{}); api.StatusOf(err) != 404 {
			t.Errorf("a prompt of the hidden agent: %v", err)
		}
		s.stop()

		code, out := doctor(t, "--repos", repos)
		if code != 1 {
			t.Fatalf("doctor: exit %d\n%s", code, out)
		}
		contains(t, "doctor", out, bare+": DAMAGED", packFile+": its content does not match its checksum",
			"concierge/ (tree ", "git fsck: ", "not served: the agents in concierge/", "repair: restore it from a clone",
			"mv "+bare+" "+bare+".damaged", "1 of 1 repositories are damaged.")
		repairAsTold(t, out, clone, "--repos", repos)
	})

	t.Run("truncated pack", func(t *testing.T) {
		tmp := shortTemp(t)
		repos, bare, pack, _ := agentsRepo(t, tmp)
		// Cut in the agent tree that comes last: the other's tree stays.
		target, other := "concierge", "studybuddy"
		if packOffset(t, bare, pack, "main:studybuddy") > packOffset(t, bare, pack, "main:concierge") {
			target, other = other, target
		}
		cut := packOffset(t, bare, pack, "main:"+target) + 3
		editFile(t, pack, func(b []byte) []byte { return b[:cut] })
		packFile := "objects/pack/" + filepath.Base(pack)

		s := serveRepos(t, tmp, "d", daemon.Options{ReposDir: repos})
		st := s.status(t, other)
		s.logLine(t, map[string]string{"level": "ERROR", "msg": "repository is damaged", "repo": "agents", "file": packFile,
			"reason": fmt.Sprintf("it is truncated: %d bytes…", cut)})
		s.logLine(t, map[string]string{"level": "ERROR", "msg": "repository is damaged", "repo": "agents", "file": packFile,
			"path": target, "type": "tree"})
		contains(t, target+"'s status", entry(t, st, target, source).LastError,
			"not deployed: the repository is damaged: "+target+"/ (tree ", "cannot be read from "+packFile)
		contains(t, "the repository's status", entry(t, st, "", source).LastError, packFile+": it is truncated")
		s.stop()

		code, out := doctor(t, "--repos", repos)
		if code != 1 {
			t.Fatalf("doctor: exit %d\n%s", code, out)
		}
		contains(t, "doctor", out, bare+": DAMAGED", packFile+": it is truncated", target+"/ (tree ",
			"not served: the agents in ", target+"/", "repair: restore it from a clone")
	})

	t.Run("garbage line in packed-refs", func(t *testing.T) {
		tmp := shortTemp(t)
		repos, bare, _, clone := agentsRepo(t, tmp)
		git(t, bare, "pack-refs", "--all")
		editFile(t, filepath.Join(bare, "packed-refs"), func(b []byte) []byte { return append(b, "garbage\n"...) })
		if _, err := exec.Command("git", "clone", "-q", bare, filepath.Join(tmp, "c2")).CombinedOutput(); err == nil {
			t.Fatal("git clones a repository whose packed-refs has a garbage line: the case proves nothing")
		}

		s := serveRepos(t, tmp, "d", daemon.Options{ReposDir: repos})
		st := s.status(t, "concierge", "studybuddy")
		s.logLine(t, map[string]string{"level": "ERROR", "msg": "repository is damaged", "repo": "agents", "file": "packed-refs",
			"line": "4", "reason": `not "<commit id> <ref name>": "garbage"`})
		contains(t, "the repository's status", entry(t, st, "", source).LastError,
			`repository damaged: packed-refs line 4: not "<commit id> <ref name>": "garbage"; stop quire serve, then run quire doctor --repos `+repos)
		s.stop()

		code, out := doctor(t, "--repos", repos)
		if code != 1 {
			t.Fatalf("doctor: exit %d\n%s", code, out)
		}
		contains(t, "doctor", out, bare+": DAMAGED", `packed-refs line 4: not "<commit id> <ref name>": "garbage"`,
			"git fsck: ", "unexpected line", "repair: with quire serve stopped,", "sed -i '4d' "+filepath.Join(bare, "packed-refs"))
		repairAsTold(t, out, clone, "--repos", repos)
	})

	t.Run("corrupt follower mirror", func(t *testing.T) {
		tmp := shortTemp(t)
		repos, _, _, _ := agentsRepo(t, tmp)
		host := serveRepos(t, tmp, "h", daemon.Options{ReposDir: repos})
		host.status(t, "concierge", "studybuddy")
		cache := filepath.Join(tmp, "fcache")
		opts := daemon.Options{Upstream: "http://" + host.addr + "/agents.git", CacheDir: cache, Poll: time.Hour}
		f := serveRepos(t, tmp, "f", opts)
		f.status(t, "concierge", "studybuddy")
		f.stop()

		mirrors, _ := filepath.Glob(filepath.Join(cache, "upstream", "*.git"))
		if len(mirrors) != 1 {
			t.Fatalf("mirrors: %v", mirrors)
		}
		mirror := mirrors[0]
		packs, _ := filepath.Glob(filepath.Join(mirror, "objects", "pack", "pack-*.pack"))
		if len(packs) != 1 {
			t.Fatalf("mirror packs: %v", packs)
		}
		off := packOffset(t, mirror, packs[0], "refs/remotes/upstream/main:concierge")
		editFile(t, packs[0], func(b []byte) []byte {
			for i := off + 3; i < off+7; i++ {
				b[i] ^= 0xff
			}
			return b
		})
		packFile := "objects/pack/" + filepath.Base(packs[0])

		code, out := doctor(t, "--cache-dir", cache)
		if code != 1 {
			t.Fatalf("doctor: exit %d\n%s", code, out)
		}
		contains(t, "doctor", out, mirror+" (a mirror of the upstream): DAMAGED", packFile+": ",
			"concierge/ (tree ", ") in refs/remotes/upstream/", "not served: the agents in concierge/",
			"repair: quire serve fetches it again from the upstream", "rm -rf "+mirror)
		if strings.Contains(out, "notice:") {
			t.Errorf("doctor passes git fsck's notices on:\n%s", out)
		}

		f = serveRepos(t, tmp, "f", opts)
		st := f.status(t, "concierge", "studybuddy")
		f.logLine(t, map[string]string{"level": "ERROR", "msg": "repository is damaged", "repo": mirror, "file": packFile,
			"repair": "it is fetched again from the upstream"})
		f.logLine(t, map[string]string{"level": "WARN", "msg": "moved the damaged mirror aside and fetched it again from the upstream",
			"repo": mirror, "damaged_copy": mirror + ".damaged-…"})
		for _, a := range st.Agents {
			if a.LastError != "" {
				t.Errorf("after the repair, status says %+v", a)
			}
		}
		if asides, _ := filepath.Glob(mirror + ".damaged-*"); len(asides) != 1 {
			t.Errorf("damaged copies: %v", asides)
		}
		f.stop()
		if code, out := doctor(t, "--cache-dir", cache); code != 0 || !strings.Contains(out, mirror+" (a mirror of the upstream): OK") {
			t.Fatalf("doctor after the repair: exit %d\n%s", code, out)
		}
	})
}

// shortTemp is a temporary directory with a short path (for sockets).
func shortTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "qd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
