package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/workspace"
)

// liveRemote is a quire host with two branches served over HTTP (through
// wrap, when set), and a follower's mirror of it.
type liveRemote struct {
	url    string      // the repository's URL
	remote Remote      // the same, as a Remote
	up     *Repository // the host's repository
	mirror *Repository // a bare clone of it, at live
}

func newLiveRemote(t testing.TB, wrap func(http.Handler) http.Handler) *liveRemote {
	t.Helper()
	h, err := NewHost(t.TempDir(), HostOptions{Live: true, AllowCreate: true, Merge: agent.Merge})
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = h
	if wrap != nil {
		handler = wrap(h)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	url := srv.URL + "/ws.git"
	git(t, newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n", "MEMORY.md": "# Memory\n",
		"memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nfirst\n"}), "push", "-q", url, "main")
	up, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	git(t, dir, "clone", "-q", "--bare", url, ".")
	mirror, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &liveRemote{url: url, remote: mustRemote(t, url), up: up, mirror: mirror}
}

// write commits files on parent in the mirror, as a daemon's write.
func (lr *liveRemote) write(t testing.TB, parent plumbing.Hash, files map[string]string) plumbing.Hash {
	t.Helper()
	return lr.writeAs(t, agentSig, parent, files)
}

func (lr *liveRemote) writeAs(t testing.TB, author object.Signature, parent plumbing.Hash, files map[string]string) plumbing.Hash {
	t.Helper()
	var ws []FileWrite
	for p, c := range files {
		ws = append(ws, FileWrite{Path: p, Content: []byte(c)})
	}
	slices.SortFunc(ws, func(a, b FileWrite) int { return strings.Compare(a.Path, b.Path) })
	h, err := lr.mirror.CommitOn(context.Background(), parent, CommitRequest{Author: author, Message: "a write", Writes: ws})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (lr *liveRemote) live(t testing.TB) plumbing.Hash {
	t.Helper()
	h, err := lr.up.Resolve("live")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// paths asserts how many pushes took each path.
func (lr *liveRemote) paths(t testing.TB, native, cli int64) {
	t.Helper()
	if n, c := lr.mirror.sp.native.Load(), lr.mirror.sp.cli.Load(); n != native || c != cli {
		t.Errorf("%d native pushes and %d with git, want %d and %d (last fallback: %v)", n, c, native, cli, lr.mirror.sp.lastFallback)
	}
}

// TestSendLiveObjects: a write on live as it is goes natively as a
// fast-forward, and its pack holds the commit and the trees and blobs
// that differ from its parent's: what git rev-list --objects new
// --not parent lists, nothing of live's history.
func TestSendLiveObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lr := newLiveRemote(t, nil)
	for i := range 10 {
		agentWrite(t, lr.up, map[string]string{fmt.Sprintf("users/u%d/USER.md", i): "earlier\n"})
	}
	git(t, lr.mirror.Path(), "fetch", "-q", "origin", "+live:live")
	base := lr.live(t)
	for i, files := range []map[string]string{
		{"memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nfirst\n\n## 10:00\n\nsecond\n"},
		{"users/u3/USER.md": "changed\n", "users/new/USER.md": "new user\n", "MEMORY.md": "# Memory\n\nmore\n"},
	} {
		pushed := lr.write(t, base, files)
		before := packIndexes(t, lr.up.Path())
		now, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, base, pushed)
		if err != nil || now != pushed {
			t.Fatalf("write %d: PushCAS = %s, %v; want %s", i, now, err, pushed)
		}
		if got := lr.live(t); got != pushed {
			t.Fatalf("write %d: live is %s, want %s", i, got, pushed)
		}
		want := strings.Fields(git(t, lr.mirror.Path(), "rev-list", "--objects", "--no-object-names", pushed.String(), "--not", base.String()))
		var got []string
		for p := range packIndexes(t, lr.up.Path()) {
			if !before[p] {
				got = append(got, packedObjects(t, p)...)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("write %d: the host stored %d objects %v, want the write's %d %v", i, len(got), got, len(want), want)
		}
		base = pushed
	}
	lr.paths(t, 2, 0)

	// Pushing what live already is: nothing to send.
	if now, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, base, base); err != nil || now != base {
		t.Fatalf("pushing live's own value: %s, %v", now, err)
	}
}

// packedObjects lists the objects of the pack whose index is idx.
func packedObjects(t testing.TB, idx string) []string {
	t.Helper()
	f, err := os.Open(idx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("git", "show-index")
	cmd.Stdin = f
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var hs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			hs = append(hs, f[1])
		}
	}
	return hs
}

// TestSendLiveStale: what the host refuses because live moved comes back
// as a stale *PushRejectedError, and live does not move: a commit that
// is not a daemon's write, made on an older live; a daemon's write to a
// file live changed since.
func TestSendLiveStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lr := newLiveRemote(t, nil)
	base := lr.live(t)
	cur := agentWrite(t, lr.up, map[string]string{"MEMORY.md": "# Memory\n\nhost\n"})
	person := object.Signature{Name: "pat", Email: "pat@example.com"}
	for name, pushed := range map[string]plumbing.Hash{
		"a person's commit":   lr.writeAs(t, person, base, map[string]string{"AGENTS.md": "v1\n"}),
		"a conflicting write": lr.write(t, base, map[string]string{"MEMORY.md": "# Memory\n\nfollower\n"}),
	} {
		now, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, base, pushed)
		var rej *PushRejectedError
		if !errors.As(err, &rej) || !rej.Stale || !errors.Is(err, ErrStale) || !now.IsZero() {
			t.Errorf("%s on an older live: %s, %v; want a stale refusal", name, now, err)
		}
		if got := lr.live(t); got != cur {
			t.Fatalf("%s moved live to %s", name, got)
		}
	}
	lr.paths(t, 2, 0)

	// A refusal of the content is not stale.
	git(t, lr.mirror.Path(), "fetch", "-q", "origin", "+live:live")
	now, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, cur, lr.write(t, cur, map[string]string{"MEMORY.md": strings.Repeat("x", workspace.MaxFileBytes+1)}))
	var rej *PushRejectedError
	if !errors.As(err, &rej) || rej.Stale || !now.IsZero() {
		t.Fatalf("a file over the limit: %s, %v; want a refusal that is not stale", now, err)
	}
	lr.paths(t, 3, 0)
}

// TestSendLiveMergedParent: a daemon's next write goes on its previous
// one, which the host merged onto a live that had moved (so no ref and no
// .have names it): the commit the host acknowledged is known to be there,
// and the push stays native. A repository that never pushed it cannot
// tell, and leaves the push to git.
func TestSendLiveMergedParent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lr := newLiveRemote(t, nil)
	log := "# 2026-01-02\n\n## 09:00\n\nfirst\n"
	base := lr.live(t)
	agentWrite(t, lr.up, map[string]string{"memory/2026-01-02.md": log + "\n## 10:00\n\nfrom the host\n"})
	w1 := lr.write(t, base, map[string]string{"memory/2026-01-02.md": log + "\n## 10:01\n\nfollower one\n"})
	m1, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, base, w1)
	if err != nil || m1 != lr.live(t) || m1 == w1 {
		t.Fatalf("a write on an older live: %s, %v; want the host's merge %s", m1, err, lr.live(t))
	}
	// The daemon's mirror goes to its write (see commitUpstream); the
	// host moves on.
	agentWrite(t, lr.up, map[string]string{"AGENTS.md": "v2\n"})
	w2 := lr.write(t, w1, map[string]string{"USER.md": "follower two\n"})
	m2, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, w1, w2)
	if err != nil || m2 != lr.live(t) {
		t.Fatalf("a write on the previous merged write: %s, %v; want %s", m2, err, lr.live(t))
	}
	lr.paths(t, 2, 0)
	if ok, _ := lr.up.IsAncestor(w2.String(), m2.String()); !ok {
		t.Fatal("live does not hold the second write")
	}

	// A fresh Repository of the same mirror has no record of w2.
	other, err := Open(lr.mirror.Path())
	if err != nil {
		t.Fatal(err)
	}
	agentWrite(t, lr.up, map[string]string{"AGENTS.md": "v3\n"})
	w3 := lr.writeAs(t, agentSig, w2, map[string]string{"SOUL.md": "three\n"})
	if _, err := other.PushCAS(ctx, lr.remote, LiveRef, w2, w3); err != nil {
		t.Fatalf("a write on a parent only git push can prove: %v", err)
	}
	if n, c := other.sp.native.Load(), other.sp.cli.Load(); n != 0 || c != 1 {
		t.Fatalf("%d native pushes, %d with git; want git's", n, c)
	}
	if !strings.Contains(fmt.Sprint(other.sp.lastFallback), "not known to have") {
		t.Errorf("fallback: %v", other.sp.lastFallback)
	}
	if ok, _ := lr.up.IsAncestor(w3.String(), lr.live(t).String()); !ok {
		t.Fatal("live does not hold the third write")
	}
}

// nativeClient reports whether a request comes from the native
// send-pack (git sends "git/2.…", decidesLive "git/quire").
func nativeClient(req *http.Request) bool { return req.UserAgent() == sendPackAgent }

// TestSendLiveFallback: a remote that answers the native send-pack 401
// (its advertisement or its push) gets the push from git push instead,
// which it accepts.
func TestSendLiveFallback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, refuse := range []string{"info/refs", "git-receive-pack"} {
		t.Run(refuse, func(t *testing.T) {
			var refused int
			lr := newLiveRemote(t, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					if nativeClient(req) && strings.HasSuffix(req.URL.Path, "/"+refuse) {
						refused++
						http.Error(w, "authentication required", http.StatusUnauthorized)
						return
					}
					h.ServeHTTP(w, req)
				})
			})
			// decidesLive's own request is refused too: as if it had
			// been answered before the credentials changed.
			lr.mirror.liveHosts.Store(lr.url, true)
			base := lr.live(t)
			cur := agentWrite(t, lr.up, map[string]string{"AGENTS.md": "v1\n"})
			pushed := lr.write(t, base, map[string]string{"USER.md": "a user\n"})
			now, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, base, pushed)
			if err != nil {
				t.Fatal(err)
			}
			if refused != 1 {
				t.Errorf("%d native requests refused, want 1", refused)
			}
			lr.paths(t, 0, 1)
			if !strings.Contains(fmt.Sprint(lr.mirror.sp.lastFallback), "401") {
				t.Errorf("fallback: %v", lr.mirror.sp.lastFallback)
			}
			if live := lr.live(t); now != live || live == cur {
				t.Fatalf("PushCAS says %s, live is %s", now, live)
			}
		})
	}
}

// TestSendLiveOutcomeUnknown: a push whose answer is cut before its
// report is an error matching ErrPushOutcomeUnknown, never sent again
// with git, though here the host did apply it; a fatal error on band 3
// likewise. The caller fetches and finds the write there.
func TestSendLiveOutcomeUnknown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, answer := range map[string]func(rec []byte) []byte{
		"cut": func(rec []byte) []byte {
			return rec[:bytes.Index(rec, []byte("unpack ok"))]
		},
		"fatal": func(rec []byte) []byte {
			return appendPkt(nil, "\x03the remote went away\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			lr := newLiveRemote(t, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					if !nativeClient(req) || req.Method != http.MethodPost {
						h.ServeHTTP(w, req)
						return
					}
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
					_, _ = w.Write(answer(rec.Body.Bytes()))
				})
			})
			base := lr.live(t)
			pushed := lr.write(t, base, map[string]string{"USER.md": "a user\n"})
			now, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, base, pushed)
			if !errors.Is(err, ErrPushOutcomeUnknown) || errors.Is(err, ErrStale) || !now.IsZero() {
				t.Fatalf("a push without a report: %s, %v; want ErrPushOutcomeUnknown", now, err)
			}
			lr.paths(t, 1, 0)
			if live := lr.live(t); live != pushed {
				t.Fatalf("live is %s, want the write %s (the host applied it)", live, pushed)
			}
		})
	}
}

func sideband(band byte, s string) string {
	return string(appendPkt(nil, string(band)+s))
}

func TestReadPushResult(t *testing.T) {
	t.Parallel()
	report := string(appendPkt(nil, "unpack ok\n")) + string(appendPkt(nil, "ok refs/heads/live\n")) + "0000"
	live := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		name, in string
		unpack   string
		refs     []refStatus
		messages string
		err      string
	}{
		{name: "ok", in: sideband(2, "quire: merged onto live, which had moved: live is now "+live+"\n") +
			sideband(1, report) + sideband(2, "deployed\n") + "0000",
			unpack: "ok", refs: []refStatus{{name: LiveRef, ok: true}}, messages: "live is now " + live},
		{name: "report split across packets", in: sideband(1, report[:7]) + sideband(2, "hi\n") + sideband(1, report[7:20]) + sideband(1, report[20:]),
			unpack: "ok", refs: []refStatus{{name: LiveRef, ok: true}}, messages: "hi"},
		{name: "ng", in: sideband(1, string(appendPkt(nil, "unpack ok\n"))+string(appendPkt(nil, "ng refs/heads/live non-fast-forward: fetch\n"))+"0000"),
			unpack: "ok", refs: []refStatus{{name: LiveRef, reason: "non-fast-forward: fetch"}}},
		{name: "unpack error", in: sideband(1, string(appendPkt(nil, "unpack index-pack failed\n"))+string(appendPkt(nil, "ng refs/heads/live unpacker error\n"))+"0000"),
			unpack: "index-pack failed", refs: []refStatus{{name: LiveRef, reason: "unpacker error"}}},
		{name: "cut before the report's flush", in: sideband(1, report[:len(report)-4]), err: "unexpected EOF"},
		{name: "ends before the report", in: sideband(2, "hi\n") + "0000", err: "ended before the report"},
		{name: "fatal", in: sideband(3, "out of disk\n"), err: "remote: out of disk"},
		{name: "no side-band", in: report, err: "band"},
		{name: "no unpack line", in: sideband(1, "0000"), err: "no unpack line"},
		{name: "garbled length", in: "00zz", err: "pkt-line length"},
		{name: "garbled report", in: sideband(1, "zzzz"), err: "pkt-line length"},
		{name: "empty", in: "", err: "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := readPushResult(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.unpack != tc.unpack || !slices.Equal(res.refs, tc.refs) || !strings.Contains(string(res.messages), tc.messages) {
				t.Fatalf("got %+v (messages %q)", res, res.messages)
			}
		})
	}
}

// FuzzReadPushResult: any answer is read without a panic, within its
// bounds, and a report that reads names refs it can be asked about.
func FuzzReadPushResult(f *testing.F) {
	report := string(appendPkt(nil, "unpack ok\n")) + string(appendPkt(nil, "ok refs/heads/live\n")) + "0000"
	f.Add([]byte(sideband(2, "live is now "+strings.Repeat("0", 40)+"\n") + sideband(1, report) + "0000"))
	f.Add([]byte(sideband(1, report[:9]) + sideband(1, report[9:])))
	f.Add([]byte(sideband(1, string(appendPkt(nil, "unpack ok\n"))+string(appendPkt(nil, "ng refs/heads/live non-fast-forward\n"))+"0000")))
	f.Add([]byte(sideband(3, "fatal\n")))
	f.Add([]byte("0000"))
	f.Add([]byte("0004"))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := readPushResult(bytes.NewReader(b))
		if err != nil {
			if res != nil {
				t.Fatalf("a result with an error: %v", err)
			}
			return
		}
		if len(res.messages) > maxMessageBytes {
			t.Fatalf("%d bytes of messages kept", len(res.messages))
		}
		for _, s := range res.refs {
			if got, ok := res.status(s.name); !ok || got.name != s.name {
				t.Fatalf("status(%s) = %+v, %v", s.name, got, ok)
			}
		}
	})
}

// FuzzReadAdvertisement: any advertisement is read without a panic, and
// what is read holds only valid ref names.
func FuzzReadAdvertisement(f *testing.F) {
	line := strings.Repeat("1", 40) + " refs/heads/live\x00report-status side-band-64k quire-live\n"
	f.Add([]byte("001f# service=git-receive-pack\n0000" + string(appendPkt(nil, line)) +
		string(appendPkt(nil, strings.Repeat("2", 40)+" .have\n")) + "0000"))
	f.Add([]byte(string(appendPkt(nil, plumbing.ZeroHash.String()+" capabilities^{}\x00report-status\n")) + "0000"))
	f.Add([]byte("0000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		adv, err := readAdvertisement(bytes.NewReader(b))
		if err != nil {
			return
		}
		for name := range adv.refs {
			if !validRefName(name) {
				t.Fatalf("ref %q", name)
			}
		}
	})
}

func TestReadAdvertisement(t *testing.T) {
	t.Parallel()
	live, have := strings.Repeat("1", 40), strings.Repeat("2", 40)
	in := "001f# service=git-receive-pack\n0000" +
		string(appendPkt(nil, strings.Repeat("3", 40)+" refs/heads/main\x00report-status side-band-64k quire-live agent=quire\n")) +
		string(appendPkt(nil, live+" refs/heads/live\n")) +
		string(appendPkt(nil, have+" .have\n")) + "0000"
	adv, err := readAdvertisement(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if adv.refs[LiveRef].String() != live || len(adv.haves) != 1 || adv.haves[0].String() != have ||
		!adv.caps.has(liveCap) || adv.caps["agent"] != "quire" {
		t.Fatalf("%+v", adv)
	}
	for _, bad := range []string{"0000", "001f# service=git-receive-pack\n0000",
		string(appendPkt(nil, live+" refs/heads/live\n")) + "0000",
		string(appendPkt(nil, live+" refs/heads/../x\x00caps\n")) + "0000"} {
		if _, err := readAdvertisement(strings.NewReader(bad)); err == nil {
			t.Errorf("%q was read", bad)
		}
	}
}

// TestSendLiveProvenAncestor: a write's parent that the advertisement no
// longer names (live moved more than recentLiveHaves times since) is
// proven to be on the remote by this repository's own copy of live, an
// advertised commit that descends from it.
func TestSendLiveProvenAncestor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lr := newLiveRemote(t, nil)
	base := agentWrite(t, lr.up, map[string]string{"AGENTS.md": "v1\n"}) // not main, which is advertised
	for i := range recentLiveHaves + 6 {
		agentWrite(t, lr.up, map[string]string{fmt.Sprintf("users/u%d/USER.md", i): "earlier\n"})
	}
	git(t, lr.mirror.Path(), "fetch", "-q", "origin", "+live:live")
	cur := lr.live(t)
	pushed := lr.write(t, base, map[string]string{"SOUL.md": "a soul\n"})
	now, err := lr.mirror.PushCAS(ctx, lr.remote, LiveRef, base, pushed)
	if err != nil || now != lr.live(t) {
		t.Fatalf("a write on a live %d moves old: %s, %v", recentLiveHaves+6, now, err)
	}
	if ok, _ := lr.up.IsAncestor(cur.String(), now.String()); !ok {
		t.Fatal("the merge does not hold live")
	}
	lr.paths(t, 1, 0)
}
