package gitsync

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/workspace"
)

// testHost serves a Host on 127.0.0.1 and returns it, its base URL and
// its repository directory. Unless opts say otherwise, it merges as a
// daemon's host does (agent.Merge: daily logs as a union of entries).
func testHost(t testing.TB, opts HostOptions) (*Host, string, string) {
	t.Helper()
	dir := t.TempDir()
	opts.AllowCreate = true // most tests create ws by pushing
	if opts.Merge == nil {
		opts.Merge = agent.Merge
	}
	h, err := NewHost(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv.URL, dir
}

// clone clones url into a new directory and returns it.
func clone(t testing.TB, url string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	git(t, filepath.Dir(dir), "clone", "-q", url, dir)
	git(t, dir, "config", "user.name", "Test")
	git(t, dir, "config", "user.email", "test@example.com")
	return dir
}

// commitFiles writes files in a clone and commits them.
func commitFiles(t testing.TB, dir string, files map[string]string, msg string) string {
	t.Helper()
	writeFiles(t, dir, files)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", msg)
	return git(t, dir, "rev-parse", "HEAD")
}

// packFiles counts the packs of a bare repository.
func packFiles(t testing.TB, bare string) int {
	t.Helper()
	ms, err := filepath.Glob(filepath.Join(bare, "objects", "pack", "pack-*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

// looseCount is the server's loose-object count from git count-objects.
func looseCount(t testing.TB, bare string) string {
	t.Helper()
	out := git(t, bare, "count-objects", "-v")
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "count:") || strings.HasPrefix(l, "in-pack:") {
			continue
		}
	}
	var count, inPack string
	for _, l := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(l, ": ")
		switch k {
		case "count":
			count = v
		case "in-pack":
			inPack = v
		}
	}
	return count + "+" + inPack
}

func randomText(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func TestEndpointWithGitCLI(t *testing.T) {
	t.Parallel()
	var hookMu sync.Mutex
	var pushes []Event
	h, url, dir := testHost(t, HostOptions{AfterPush: func(_ context.Context, p Event, remote io.Writer) {
		hookMu.Lock()
		pushes = append(pushes, p)
		hookMu.Unlock()
		fmt.Fprintf(remote, "deployed %d ref(s) of %s\n", len(p.Refs), p.Name)
	}})
	bare := filepath.Join(dir, "ws.git")
	if _, err := h.Create("ws"); err != nil {
		t.Fatal(err)
	}

	// Clone an empty repository, push to it.
	a := clone(t, url+"/ws.git")
	first := commitFiles(t, a, map[string]string{"AGENTS.md": "# Agents\n", "memory/notes.md": randomText(20000)}, "first")
	out := git(t, a, "push", "origin", "main")
	if !strings.Contains(out, "remote: deployed 1 ref(s) of ws") {
		t.Errorf("push output lacks the hook's remote: line:\n%s", out)
	}
	if got := git(t, bare, "rev-parse", "main"); got != first {
		t.Fatalf("server main = %s, want %s", got, first)
	}

	// A second push sends a thin pack (a delta against the first blob).
	notes, _ := os.ReadFile(filepath.Join(a, "memory/notes.md"))
	second := commitFiles(t, a, map[string]string{"memory/notes.md": string(notes) + "one more line\n"}, "second")
	git(t, a, "push", "origin", "main")
	if got := git(t, bare, "rev-parse", "main"); got != second {
		t.Fatalf("server main after thin push = %s, want %s", got, second)
	}
	git(t, bare, "fsck", "--strict")

	// Clone the full repository.
	b := clone(t, url+"/ws.git")
	if got := git(t, b, "rev-parse", "HEAD"); got != second {
		t.Fatalf("clone HEAD = %s, want %s", got, second)
	}

	// b moves main; a's push is then not a fast-forward.
	third := commitFiles(t, b, map[string]string{"SOUL.md": "soul\n"}, "from b")
	git(t, b, "push", "-q", "origin", "main")
	commitFiles(t, a, map[string]string{"TOOLS.md": "tools\n"}, "from a")
	out, err := gitTry(a, "push", "origin", "main")
	if err == nil || !strings.Contains(out, "[rejected]") {
		t.Fatalf("non-fast-forward push: err %v, output:\n%s", err, out)
	}
	if got := git(t, bare, "rev-parse", "main"); got != third {
		t.Fatalf("server main moved on a refused push: %s", got)
	}

	// Force push replaces it.
	git(t, a, "push", "-q", "-f", "origin", "main")
	forced := git(t, a, "rev-parse", "HEAD")
	if got := git(t, bare, "rev-parse", "main"); got != forced {
		t.Fatalf("server main after force push = %s, want %s", got, forced)
	}

	// Fetch when the client has commits the server never saw.
	commitFiles(t, b, map[string]string{"local-only.md": "x\n"}, "local only")
	git(t, b, "fetch", "-q", "origin")
	if got := git(t, b, "rev-parse", "origin/main"); got != forced {
		t.Fatalf("fetch with unknown haves: origin/main = %s, want %s", got, forced)
	}
	git(t, b, "merge", "-q", "--no-edit", "origin/main")
	git(t, b, "push", "-q", "origin", "main")

	// A refused push: the file and the limit are printed, nothing stays.
	git(t, a, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
	before := looseCount(t, bare)
	mainBefore := git(t, bare, "rev-parse", "main")
	git(t, a, "checkout", "-q", "-b", "bad")
	commitFiles(t, a, map[string]string{"big.bin": randomText(1<<20 + 2000)}, "too big")
	out, err = gitTry(a, "push", "origin", "bad")
	if err == nil || !strings.Contains(out, "[remote rejected] bad -> bad (big.bin:") || !strings.Contains(out, "1 MiB") {
		t.Fatalf("oversized push: err %v, output:\n%s", err, out)
	}
	if !strings.Contains(out, "remote: error:   big.bin") {
		t.Errorf("refusal lacks the remote: line naming the file:\n%s", out)
	}
	if after := looseCount(t, bare); after != before {
		t.Errorf("refused push left objects: count-objects %s → %s", before, after)
	}
	if _, err := gitTry(bare, "rev-parse", "--verify", "-q", "refs/heads/bad"); err == nil {
		t.Error("refused branch exists on the server")
	}
	git(t, bare, "fsck", "--strict", "--no-dangling")

	// --atomic with one bad ref: neither ref moves.
	git(t, a, "checkout", "-q", "-b", "good", "main")
	commitFiles(t, a, map[string]string{"memory/ok.md": "fine\n"}, "good")
	out, err = gitTry(a, "push", "--atomic", "origin", "good", "bad")
	if err == nil || !strings.Contains(out, "bad -> bad") {
		t.Fatalf("atomic push: err %v, output:\n%s", err, out)
	}
	if _, err := gitTry(bare, "rev-parse", "--verify", "-q", "refs/heads/good"); err == nil {
		t.Error("atomic push moved good although bad was refused")
	}
	if after := looseCount(t, bare); after != before {
		t.Errorf("refused atomic push left objects: count-objects %s → %s", before, after)
	}
	if got := git(t, bare, "rev-parse", "main"); got != mainBefore {
		t.Errorf("main moved during refused pushes")
	}

	// Without --atomic the good ref goes through; then delete it.
	git(t, a, "push", "-q", "origin", "good")
	if _, err := gitTry(bare, "rev-parse", "--verify", "-q", "refs/heads/good"); err != nil {
		t.Fatal("good was not pushed")
	}
	git(t, a, "push", "-q", "origin", "--delete", "good")
	if _, err := gitTry(bare, "rev-parse", "--verify", "-q", "refs/heads/good"); err == nil {
		t.Fatal("good still exists after deletion")
	}

	// A push over 1 MiB (git probes with "0000" first).
	git(t, a, "checkout", "-q", "main")
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("skills/s%03d/data.txt", i)] = randomText(6000)
	}
	large := commitFiles(t, a, files, "large")
	packsBefore := packFiles(t, bare)
	git(t, a, "config", "http.postBuffer", "65536")
	git(t, a, "push", "-q", "origin", "main")
	if got := git(t, bare, "rev-parse", "main"); got != large {
		t.Fatalf("large push: server main = %s, want %s", got, large)
	}
	git(t, bare, "fsck", "--strict")
	if packs, _ := filepath.Glob(filepath.Join(bare, "objects/pack/*.pack")); len(packs) != packsBefore+1 {
		t.Errorf("a push of 600 objects made %d pack files, want 1", len(packs)-packsBefore)
	}

	// Other refusals: a symbolic link and a context file that is not UTF-8.
	tests := []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"symlink", func(d string) {
			if err := os.Symlink("AGENTS.md", filepath.Join(d, "link.md")); err != nil {
				t.Fatal(err)
			}
		}, "link.md: symbolic links are not allowed"},
		{"not utf-8", func(d string) {
			writeFiles(t, d, map[string]string{"memory/bad.md": "caf\xe9\n"})
		}, "memory/bad.md: line 1: not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			git(t, a, "checkout", "-q", "-B", "try", "main")
			tt.setup(a)
			git(t, a, "add", "-A")
			git(t, a, "commit", "-q", "-m", tt.name)
			out, err := gitTry(a, "push", "origin", "try")
			if err == nil || !strings.Contains(out, tt.want) {
				t.Fatalf("err %v, output:\n%s", err, out)
			}
		})
	}

	// A push to a new name creates the repository.
	git(t, a, "checkout", "-q", "main")
	git(t, a, "push", "-q", url+"/fresh.git", "main")
	if got := git(t, filepath.Join(dir, "fresh.git"), "rev-parse", "main"); got != large {
		t.Fatalf("new repository main = %s, want %s", got, large)
	}
	// A refused push to a new name leaves no repository behind.
	if _, err := gitTry(a, "push", url+"/nothing.git", "bad"); err == nil {
		t.Fatal("refused push to a new name succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "nothing.git")); err == nil {
		t.Error("a refused push to a new name left a repository")
	}

	// An external git gc does not break later reads or pushes.
	git(t, bare, "gc", "-q", "--prune=now")
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Snapshot("main")
	if err != nil {
		t.Fatalf("snapshot after gc: %v", err)
	}
	if _, err := s.ReadFile("skills/s299/data.txt"); err != nil {
		t.Fatalf("read after gc: %v", err)
	}
	commitFiles(t, a, map[string]string{"memory/after-gc.md": "still fine\n"}, "after gc")
	git(t, a, "push", "-q", "origin", "main")
	git(t, bare, "fsck", "--strict")

	hookMu.Lock()
	defer hookMu.Unlock()
	if len(pushes) == 0 || pushes[0].Refs[0].New.String() != first {
		t.Errorf("hook saw %d pushes; first %+v", len(pushes), pushes)
	}
}

// Tokens accepts exactly the configured token of each user: not a prefix,
// an extension, another user's, or an empty one.
func TestTokens(t *testing.T) {
	t.Parallel()
	auth := Tokens(map[string]string{"ada": "s3cret", "bo": "other", "nobody": ""})
	for _, tt := range []struct {
		user, token string
		want        bool
	}{
		{"ada", "s3cret", true}, {"bo", "other", true},
		{"ada", "s3cre", false}, {"ada", "s3cret!", false}, {"ada", "other", false},
		{"ada", "", false}, {"nobody", "", false}, {"eve", "s3cret", false},
	} {
		if got := auth(tt.user, tt.token); got != tt.want {
			t.Errorf("Tokens(%q, %q) = %v, want %v", tt.user, tt.token, got, tt.want)
		}
	}
}

func TestEndpointAuth(t *testing.T) {
	t.Parallel()
	_, url, _ := testHost(t, HostOptions{Authenticate: Tokens(map[string]string{"ada": "s3cret", "nobody": ""})})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	authed := strings.Replace(url, "http://", "http://ada:s3cret@", 1)
	if out, err := gitTry(src, "push", url+"/ws.git", "main"); err == nil {
		t.Fatalf("push without credentials succeeded:\n%s", out)
	}
	if out, err := gitTry(src, "push", strings.Replace(url, "http://", "http://ada:wrong@", 1)+"/ws.git", "main"); err == nil {
		t.Fatalf("push with a wrong token succeeded:\n%s", out)
	}
	if out, err := gitTry(src, "push", strings.Replace(url, "http://", "http://nobody:@", 1)+"/ws.git", "main"); err == nil {
		t.Fatalf("push with an empty token succeeded:\n%s", out)
	}
	git(t, src, "push", "-q", authed+"/ws.git", "main")
	c := clone(t, authed+"/ws.git")
	if b, _ := os.ReadFile(filepath.Join(c, "AGENTS.md")); string(b) != "a\n" {
		t.Fatalf("clone with credentials: AGENTS.md = %q", b)
	}
}

// TestRacingPushes: two clients push different commits from the same
// base at the same time; exactly one wins and nothing is lost.
func TestRacingPushes(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{})
	if _, err := h.Create("ws"); err != nil {
		t.Fatal(err)
	}
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	for round := range 3 {
		c1, c2 := clone(t, url+"/ws.git"), clone(t, url+"/ws.git")
		h1 := commitFiles(t, c1, map[string]string{"one.md": fmt.Sprint(round)}, "one")
		h2 := commitFiles(t, c2, map[string]string{"two.md": fmt.Sprint(round)}, "two")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, c := range []string{c1, c2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = gitTry(c, "push", "-q", "origin", "main")
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: push errors %v, %v; want exactly one success", round, errs[0], errs[1])
		}
		want := h1
		if errs[0] != nil {
			want = h2
		}
		if got := git(t, filepath.Join(dir, "ws.git"), "rev-parse", "main"); got != want {
			t.Fatalf("round %d: server main = %s, want the winner %s", round, got, want)
		}
	}
}

// TestDaemonCommitsRacingPushes: 50 daemon commits race 10 clients that
// fetch, commit and push until they succeed; every accepted commit ends
// up in the history.
func TestDaemonCommitsRacingPushes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns many git processes")
	}
	h, url, dir := testHost(t, HostOptions{})
	r, err := h.Create("ws")
	if err != nil {
		t.Fatal(err)
	}
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")

	var mu sync.Mutex
	var accepted []string
	var wg sync.WaitGroup
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 50 {
			c, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Author: agent, User: "u", Message: "memory",
				Writes: []FileWrite{{Path: fmt.Sprintf("memory/daemon-%02d.md", i), Content: []byte("x\n")}}})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			accepted = append(accepted, c.String())
			mu.Unlock()
		}
	}()
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clone(t, url+"/ws.git")
			for try := range 100 {
				git(t, c, "fetch", "-q", "origin")
				git(t, c, "reset", "-q", "--hard", "origin/main")
				hash := commitFiles(t, c, map[string]string{fmt.Sprintf("memory/client-%d.md", i): fmt.Sprint(try)}, "client")
				if _, err := gitTry(c, "push", "-q", "origin", "main"); err == nil {
					mu.Lock()
					accepted = append(accepted, hash)
					mu.Unlock()
					return
				}
			}
			t.Errorf("client %d never got its push in", i)
		}()
	}
	wg.Wait()
	history := git(t, filepath.Join(dir, "ws.git"), "rev-list", "main")
	for _, c := range accepted {
		if !strings.Contains(history, c) {
			t.Errorf("accepted commit %s is not in the final history", c)
		}
	}
	if len(accepted) != 60 {
		t.Errorf("%d accepted commits, want 60", len(accepted))
	}
	git(t, filepath.Join(dir, "ws.git"), "fsck", "--strict")
}

func TestEndpointSizeLimit(t *testing.T) {
	t.Parallel()
	_, url, dir := testHost(t, HostOptions{MaxRequestBytes: 64 << 10})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	commitFiles(t, src, map[string]string{"memory/big.md": randomText(300 << 10)}, "big")
	out, err := gitTry(src, "push", url+"/ws.git", "main")
	if err == nil {
		t.Fatalf("push over the request limit succeeded:\n%s", out)
	}
	t.Logf("client saw:\n%s", out)
	bare := filepath.Join(dir, "ws.git")
	if got, want := git(t, bare, "rev-parse", "main"), git(t, src, "rev-parse", "HEAD~1"); got != want {
		t.Fatalf("main = %s, want %s", got, want)
	}
	git(t, bare, "fsck", "--strict", "--no-dangling")
}

func TestHostMaintain(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	for i := range 5 {
		commitFiles(t, src, map[string]string{fmt.Sprintf("memory/%d.md", i): "x\n"}, "more")
		git(t, src, "push", "-q", url+"/ws.git", "main")
	}
	names, err := h.Names()
	if err != nil || fmt.Sprint(names) != "[ws]" {
		t.Fatalf("Names = %v, %v", names, err)
	}
	r, _ := h.Repository("ws")
	if n, _ := r.LooseObjects(); n != 0 {
		t.Fatalf("%d loose objects after pushes: every push is stored as one pack", n)
	}
	if n := packFiles(t, filepath.Join(dir, "ws.git")); n != 5 {
		t.Fatalf("%d packs after 5 pushes", n)
	}
	h.repackAll(context.Background(), 0, true)
	if n := packFiles(t, filepath.Join(dir, "ws.git")); n != 1 {
		t.Fatalf("%d packs after maintenance, want 1", n)
	}
	git(t, filepath.Join(dir, "ws.git"), "fsck", "--strict")
	c := clone(t, url+"/ws.git")
	if got, want := git(t, c, "rev-parse", "HEAD"), git(t, src, "rev-parse", "HEAD"); got != want {
		t.Fatalf("clone after repack at %s, want %s", got, want)
	}
}

// TestEndpointComposedValidator: the daemon's own checks run after the
// default ones, and a validator that overruns the request time limit
// refuses the push.
func TestEndpointComposedValidator(t *testing.T) {
	t.Parallel()
	forbid := ValidatorFunc(func(_ context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []workspace.Problem {
		var out []workspace.Problem
		for _, c := range changed {
			if c.Path == "FORBIDDEN.md" {
				out = append(out, workspace.Problem{Path: c.Path, Message: "budget: 30000 chars exceed the 20000-char limit of this file"})
			}
		}
		return out
	})
	slow := ValidatorFunc(func(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []workspace.Problem {
		if _, err := tree.Stat("SLOW.md"); err != nil {
			return nil
		}
		<-ctx.Done()
		return []workspace.Problem{{Message: "validation timed out"}}
	})
	_, url, dir := testHost(t, HostOptions{Validator: Validators{RepositoryChecks(), forbid, slow}, RequestTimeout: 2 * time.Second})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	base := git(t, src, "rev-parse", "HEAD")
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"daemon check", map[string]string{"FORBIDDEN.md": "x\n"}, "FORBIDDEN.md: budget: 30000 chars exceed the 20000-char limit"},
		{"both checks", map[string]string{"FORBIDDEN.md": "x\n", "memory/bad.md": "\xff\n"}, "(and 1 more)"},
		{"time limit", map[string]string{"SLOW.md": "x\n"}, "validation timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			git(t, src, "reset", "-q", "--hard", base)
			commitFiles(t, src, tt.files, tt.name)
			out, err := gitTry(src, "push", url+"/ws.git", "main")
			if err == nil || !strings.Contains(out, tt.want) {
				t.Fatalf("err %v, output:\n%s", err, out)
			}
			if got := git(t, filepath.Join(dir, "ws.git"), "rev-parse", "main"); got != base {
				t.Fatalf("main moved to %s", got)
			}
		})
	}
}

// TestUploadPackGzip: git compresses larger upload-pack requests.
func TestUploadPackGzip(t *testing.T) {
	t.Parallel()
	h, url, _ := testHost(t, HostOptions{})
	if _, err := h.Create("ws"); err != nil {
		t.Fatal(err)
	}
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	head := git(t, src, "rev-parse", "HEAD")
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	io.WriteString(zw, pkts("want "+head+" side-band-64k ofs-delta\n", "", "have "+strings.Repeat("3", 40)+"\n", "done\n"))
	zw.Close()
	req, _ := http.NewRequest("POST", url+"/ws.git/git-upload-pack", &body)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.HasPrefix(b, []byte(pkts("NAK\n"))) || !bytes.Contains(b, []byte("PACK")) {
		t.Fatalf("status %d, body %q", resp.StatusCode, b[:min(len(b), 80)])
	}
}

func TestEndpointTags(t *testing.T) {
	t.Parallel()
	_, url, _ := testHost(t, HostOptions{})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "tag", "light")
	git(t, src, "tag", "-a", "-m", "release", "v1")
	git(t, src, "push", "-q", url+"/ws.git", "main", "light", "v1")
	c := clone(t, url+"/ws.git")
	for _, tag := range []string{"light", "v1"} {
		if got, want := git(t, c, "rev-parse", tag+"^{commit}"), git(t, src, "rev-parse", "HEAD"); got != want {
			t.Errorf("tag %s in the clone = %s, want %s", tag, got, want)
		}
	}
	if got := git(t, c, "cat-file", "-t", "v1"); got != "tag" {
		t.Errorf("v1 is a %s in the clone, want an annotated tag", got)
	}
	if out, head := git(t, c, "ls-remote", "origin", "refs/tags/v1^{}"), git(t, src, "rev-parse", "HEAD"); !strings.HasPrefix(out, head) {
		t.Errorf("ls-remote does not list v1 peeled to %s:\n%s", head, out)
	}
	git(t, src, "push", "-q", url+"/ws.git", ":refs/tags/light")
	if out := git(t, c, "ls-remote", "--tags", "origin"); strings.Contains(out, "light") {
		t.Errorf("deleted tag still listed:\n%s", out)
	}
}
