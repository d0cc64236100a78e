package gitsync

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestMain lets the test binary run as the crash test's helper process
// when QUIRE_GITSYNC_CRASH_HELPER names a repository directory, and as
// TestRepackLeftRunning's with QUIRE_GITSYNC_REPACK_HELPER.
func TestMain(m *testing.M) {
	if dir := os.Getenv("QUIRE_GITSYNC_CRASH_HELPER"); dir != "" {
		os.Exit(crashHelper(dir))
	}
	if dir := os.Getenv("QUIRE_GITSYNC_REPACK_HELPER"); dir != "" {
		os.Exit(repackHelper(dir))
	}
	os.Exit(m.Run())
}

// crashHelper hosts dir/ws.git over HTTP (printing "addr <host:port>"
// once it serves), maintains it, and commits to main as fast as it can,
// printing "ack <hash>" once each commit returned, until it is killed.
func crashHelper(dir string) int {
	h, err := NewHost(dir, HostOptions{AllowCreate: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := h.Create("ws")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := r.Check(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go http.Serve(l, h)
	// As the daemon does: packs are rolled up as they accumulate, so
	// kills also land in the middle of repacks.
	go h.Maintain(context.Background(), time.Minute, RepackThreshold)
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "addr %s\n", l.Addr())
	out.Flush()
	for i := 0; ; i++ {
		c, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Author: agent, Message: "append",
			Writes: []FileWrite{{Path: fmt.Sprintf("memory/%d-%d.md", os.Getpid(), i), Content: []byte(randomText(200))}}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "commit:", err)
			return 1
		}
		fmt.Fprintf(out, "ack %s\n", c)
		out.Flush()
		if i%50 == 49 {
			time.Sleep(20 * time.Millisecond) // commits come in bursts (the workload, not a wait)
		}
	}
}

// TestCrashKill9 kills a process that commits and accepts pushes with
// SIGKILL at random moments (QUIRE_CRASH_MOMENTS, default 6; the issue's
// acceptance run uses 50), every other time without its git children.
// After every kill: each acknowledged commit and
// each acknowledged push is in the history, git fsck is clean, the
// repository opens with no broken ref, and the restarted process serves
// HEAD to a clone.
func TestCrashKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	moments := 6
	if s := os.Getenv("QUIRE_CRASH_MOMENTS"); s != "" {
		moments, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	bare := filepath.Join(dir, "ws.git")
	var acked []string       // commits whose Commit returned
	var pushedAcked []string // commits whose git push succeeded
	start := func() (*exec.Cmd, string, chan string) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "QUIRE_GITSYNC_CRASH_HELPER="+dir)
		cmd.Stderr = os.Stderr
		// Its own process group, so that a kill can take its git
		// children (repack, index-pack, upload-pack) with it.
		ownProcessGroup(cmd)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A failing test must not leave it writing into the directory
		// being removed.
		t.Cleanup(func() { killProcessGroup(cmd.Process.Pid); cmd.Wait() })
		acks := make(chan string, 1<<16)
		addr := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if h, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
					acks <- h
				} else if a, ok := strings.CutPrefix(sc.Text(), "addr "); ok {
					addr <- a
				}
			}
			close(acks)
			close(addr)
		}()
		select {
		case a, ok := <-addr:
			if !ok {
				t.Fatal("the helper ended before it served")
			}
			return cmd, "http://" + a + "/ws.git", acks
		case <-time.After(20 * time.Second):
			t.Fatal("the helper did not start")
		}
		return nil, "", nil
	}
	client := filepath.Join(t.TempDir(), "client")
	firstPush := make(chan struct{})
	var pushedOnce sync.Once
	for round := range moments {
		roundStart := time.Now()
		cmd, url, acks := start()
		if round == 0 {
			// Wait for a first commit so that there is something to clone.
			acked = append(acked, <-acks)
		}
		// The restarted process serves HEAD.
		os.RemoveAll(client)
		git(t, dir, "clone", "-q", url, client)
		git(t, client, "config", "user.name", "P")
		git(t, client, "config", "user.email", "p@example.com")
		if len(pushedAcked) > 0 {
			git(t, client, "fetch", "-q", "origin", "pushes")
			git(t, client, "checkout", "-q", "-B", "pushes", "FETCH_HEAD")
		} else {
			git(t, client, "checkout", "-q", "-b", "pushes")
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				writeFiles(t, client, map[string]string{fmt.Sprintf("pushed/%d-%d.md", round, i): randomText(3000)})
				git(t, client, "add", "-A")
				git(t, client, "commit", "-q", "-m", "push")
				h := git(t, client, "rev-parse", "HEAD")
				if _, err := gitTry(client, "push", "-q", "origin", "pushes"); err == nil {
					mu.Lock()
					pushedAcked = append(pushedAcked, h)
					mu.Unlock()
					pushedOnce.Do(func() { close(firstPush) })
				}
			}
		})
		if round == 0 {
			// At least one push is acknowledged before the first kill.
			select {
			case <-firstPush:
			case <-time.After(30 * time.Second):
				t.Fatal("no push succeeded")
			}
		}
		// The kill lands at a random moment of the work (a sleep by
		// design: what it waits for is chance).
		time.Sleep(time.Duration(50+rand.IntN(700)) * time.Millisecond)
		// Even rounds take the git children along, as a power loss
		// would; odd rounds kill the process alone, as the OOM killer or
		// a kill -9 of its pid does: a git repack it started runs on
		// while the next process starts and reads.
		victim := -cmd.Process.Pid
		if round%2 == 1 {
			victim = cmd.Process.Pid
		}
		if err := killProcess(victim); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		close(stop)
		wg.Wait()
		for h := range acks {
			acked = append(acked, h)
		}

		// The repository after the kill.
		r, err := Open(bare)
		if err != nil {
			t.Fatalf("round %d: open after kill: %v", round, err)
		}
		if err := r.Check(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if out, err := gitTry(bare, "fsck", "--strict", "--no-dangling"); err != nil {
			t.Fatalf("round %d: git fsck: %v\n%s", round, err, out)
		}
		t.Logf("round %d: %d commits, %d pushes so far, %s", round, len(acked), len(pushedAcked), time.Since(roundStart).Round(time.Millisecond))
		inMain := setOf(strings.Fields(git(t, bare, "rev-list", "main")))
		for _, h := range acked {
			if !inMain[h] {
				t.Fatalf("round %d: acknowledged commit %s is not in main's history", round, h)
			}
		}
		if len(pushedAcked) > 0 {
			inPushes := setOf(strings.Fields(git(t, bare, "rev-list", "pushes")))
			for _, h := range pushedAcked {
				if !inPushes[h] {
					t.Fatalf("round %d: acknowledged push %s is not in the history", round, h)
				}
			}
		}
	}
	t.Logf("%d kills: %d acknowledged commits and %d acknowledged pushes kept", moments, len(acked), len(pushedAcked))
	if len(acked) < moments || len(pushedAcked) == 0 {
		t.Fatalf("too little happened to prove anything: %d commits, %d pushes", len(acked), len(pushedAcked))
	}
	// And the last restart serves HEAD.
	_, url, _ := start()
	if out := git(t, dir, "ls-remote", url, "refs/heads/main"); !strings.Contains(out, "refs/heads/main") {
		t.Fatalf("ls-remote after the last restart: %q", out)
	}
}

func setOf(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
