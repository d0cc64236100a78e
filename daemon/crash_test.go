package daemon_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/pgstore"
)

// TestMain lets the test binary run as a daemon process (for the crash
// test) when QUIRE_DAEMON_HELPER is set.
func TestMain(m *testing.M) {
	if os.Getenv("QUIRE_DAEMON_HELPER") == "1" {
		os.Exit(helperDaemon())
	}
	os.Exit(m.Run())
}

// slowEmbedder makes index runs slow enough to be killed in the middle.
type slowEmbedder struct{ memory.Builtin }

func (e slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-time.After(3 * time.Second):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return e.Builtin.Embed(ctx, texts)
}

func helperDaemon() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var emb memory.Embedder = memory.Builtin{}
	if os.Getenv("QUIRE_HELPER_SLOW") == "1" {
		emb = slowEmbedder{}
	}
	if up := os.Getenv("QUIRE_HELPER_UPSTREAM"); up != "" {
		// A follower of another daemon, on the shared database.
		d, err := daemon.New(ctx, daemon.Options{Upstream: up, Poll: 100 * time.Millisecond,
			DatabaseURL: os.Getenv("QUIRE_HELPER_DB"), DatabaseSchema: os.Getenv("QUIRE_HELPER_SCHEMA"),
			Socket: os.Getenv("QUIRE_HELPER_SOCKET"), CacheDir: os.Getenv("QUIRE_HELPER_CACHE")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go func() {
			<-d.Ready()
			os.WriteFile(os.Getenv("QUIRE_HELPER_ADDR"), []byte("ready"), 0o644)
		}()
		if err := d.Run(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	store, err := pgstore.Open(ctx, pgstore.Options{URL: os.Getenv("QUIRE_HELPER_DB"), Schema: os.Getenv("QUIRE_HELPER_SCHEMA"), Embedder: emb})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	d, err := daemon.New(ctx, daemon.Options{Store: store, Embedder: emb, ReposDir: os.Getenv("QUIRE_HELPER_REPOS"), AllowCreate: true,
		GitListen: "127.0.0.1:0", Socket: os.Getenv("QUIRE_HELPER_SOCKET"), CacheDir: os.Getenv("QUIRE_HELPER_CACHE")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		<-d.Ready()
		os.WriteFile(os.Getenv("QUIRE_HELPER_ADDR"), []byte(d.GitAddr()), 0o644)
	}()
	if err := d.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestCrashDuringIndexing kills the daemon with SIGKILL while it indexes
// into PostgreSQL, restarts it, and checks that the index equals HEAD's
// memory documents with no duplicate chunks.
func TestCrashDuringIndexing(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	tmp := shortTempDir(t)
	repos := filepath.Join(tmp, "repos")
	start := func(slow bool) (*exec.Cmd, string) {
		addrFile := filepath.Join(tmp, fmt.Sprintf("addr-%d", time.Now().UnixNano()))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "QUIRE_DAEMON_HELPER=1", "QUIRE_HELPER_DB="+dbURL, "QUIRE_HELPER_SCHEMA="+schema,
			"QUIRE_HELPER_REPOS="+repos, "QUIRE_HELPER_SOCKET="+filepath.Join(tmp, "q.sock"),
			"QUIRE_HELPER_CACHE="+filepath.Join(tmp, "cache"), "QUIRE_HELPER_ADDR="+addrFile)
		if slow {
			cmd.Env = append(cmd.Env, "QUIRE_HELPER_SLOW=1")
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		var addr []byte
		waitFor(t, "the helper daemon to listen", func() bool {
			addr, _ = os.ReadFile(addrFile)
			return len(addr) > 0
		})
		return cmd, "http://" + string(addr)
	}
	ctx := context.Background()

	cmd, remote := start(true)
	wt := newWorkTree(t, copyTree(t, filepath.Join("..", "examples", "agents")))
	out := git(t, wt, "push", remote+"/agents.git", "main")
	if !strings.Contains(out, "indexing continues") {
		t.Fatalf("the index run was not slow:\n%s", out)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	head := strings.TrimSpace(git(t, wt, "rev-parse", "HEAD"))

	check, err := pgstore.Open(ctx, pgstore.Options{URL: dbURL, Schema: schema, Embedder: memory.Builtin{}, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	if c, _ := check.IndexedCommit(ctx, "concierge"); c == head {
		t.Fatal("the index run finished before the kill; the test proves nothing")
	}

	_, _ = start(false)
	c := &client.Client{Socket: filepath.Join(tmp, "q.sock")}
	waitFor(t, "the restarted daemon to index HEAD", func() bool {
		st, err := c.Status(ctx)
		if err != nil || len(st.Agents) != 2 {
			return false
		}
		for _, a := range st.Agents {
			if a.Indexed != head || a.Deployed != head {
				return false
			}
		}
		return true
	})

	repo, err := gitsync.Open(filepath.Join(repos, "agents.git"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := repo.Snapshot("main")
	if err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"concierge", "studybuddy"} {
		docs, _, err := memory.Documents(snap, agent)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, d := range docs {
			for _, ch := range d.Chunks() {
				want = append(want, fmt.Sprintf("%s|%s|%d|%s", ch.User, ch.Path, ch.StartLine, ch.Hash))
			}
		}
		got, err := check.Chunks(ctx, agent)
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for _, ch := range got {
			have = append(have, fmt.Sprintf("%s|%s|%d|%s", ch.User, ch.Path, ch.StartLine, ch.Hash))
		}
		sort.Strings(want)
		sort.Strings(have)
		if strings.Join(want, "\n") != strings.Join(have, "\n") {
			t.Errorf("%s: index has %d chunks, HEAD has %d:\nhave %v\nwant %v", agent, len(have), len(want), have, want)
		}
	}
}
