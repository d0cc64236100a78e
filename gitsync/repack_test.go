package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// readers runs readAll on r in a few goroutines until stop is closed and
// returns the number of reads and the first failure.
func readers(r *Repository, stop <-chan struct{}) func() (int64, error) {
	var wg sync.WaitGroup
	var reads atomic.Int64
	var first atomic.Pointer[error]
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := readAll(r)
				reads.Add(int64(n))
				if err != nil {
					first.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	return func() (int64, error) {
		wg.Wait()
		if e := first.Load(); e != nil {
			return reads.Load(), *e
		}
		return reads.Load(), nil
	}
}

// TestRepackNeverPullsAPackFromUnderARead: repacks while commits write a
// pack each and readers read every file: no read fails (the packs a
// repack makes redundant are deleted under the storage lock), the packs
// are rolled up, and git fsck is clean.
func TestRepackNeverPullsAPackFromUnderARead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		repack func(*Repository) error
	}{
		{"Repack", (*Repository).Repack},
		{"RollUp", func(r *Repository) error { return r.RollUp(context.Background()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repackUnderReads(t, tc.repack)
		})
	}
}

func repackUnderReads(t *testing.T, repack func(*Repository) error) {
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "a", 40)
	stop := make(chan struct{})
	wait := readers(r, stop)
	var writes sync.WaitGroup
	writes.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			commitPacks(t, r, fmt.Sprintf("b%d", i), 1)
		}
	})
	for range 8 {
		if err := repack(r); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	writes.Wait()
	n, err := wait()
	if err != nil {
		t.Fatalf("a read failed during repacks (after %d reads): %v", n, err)
	}
	if err := repack(r); err != nil {
		t.Fatal(err)
	}
	// A geometric progression: each pack holds at least twice the
	// objects of the next smaller one, so there are at most
	// log2(objects)+1 of them, however many commits the writer made
	// while the repacks ran (more on a loaded machine).
	objects := inPackObjects(t, dir)
	if packs, most := packFiles(t, dir), bits.Len(uint(objects)); packs > most {
		t.Errorf("%d packs for %d objects after the last repack, want at most %d", packs, objects, most)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
	t.Logf("%d reads during 8 roll-ups, %d packs for %d objects", n, packFiles(t, dir), objects)
}

// TestRepackLeftRunning: a daemon killed with SIGKILL while its git
// repack runs leaves git running (an orphan). The restarted daemon's
// reads must never fail because of it. git now deletes no pack (the
// killed process would have, under its own lock), so the orphan only
// adds one; while it holds the repack lock, the new process neither
// repacks nor removes temporary files. Before, git repack -d removed the
// packs the new process's pack list named, and its reads failed with
// "packfile not found" until a retry happened to see the new list.
func TestRepackLeftRunning(t *testing.T) {
	t.Parallel()
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "a", 30)
	before, err := listPacks(r.st.packDir)
	if err != nil {
		t.Fatal(err)
	}
	// git, started by the helper, says so and waits to be let go: the
	// helper is killed and the restarted process reads meanwhile.
	shim := t.TempDir()
	started, letGo := filepath.Join(shim, "started"), filepath.Join(shim, "go")
	for _, fifo := range []string{started, letGo} {
		if err := makeFIFO(fifo); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf("#!/bin/sh\necho >%s\nread go <%s\nexec %s \"$@\"\n", started, letGo, realGit)
	if err := os.WriteFile(filepath.Join(shim, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), "QUIRE_GITSYNC_REPACK_HELPER="+dir, "PATH="+shim+string(os.PathListSeparator)+os.Getenv("PATH"))
	helper.Stderr = os.Stderr
	// Its own process group, so that the cleanup takes the orphan too.
	ownProcessGroup(helper)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killProcessGroup(helper.Process.Pid) })
	if !signalled(started, 20*time.Second) {
		t.Fatal("the helper's git repack did not start")
	}
	// Only the daemon dies; its git lives on.
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()

	// A temporary pack a crash left long ago: kept while the orphan may
	// be writing such files.
	stale := filepath.Join(r.st.packDir, "tmp_pack_Ab12Cd")
	if err := os.WriteFile(stale, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)

	// The restarted daemon.
	r2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := r2.RemoveTemporaries(); n != 0 {
		t.Errorf("RemoveTemporaries removed %d files while a repack ran", n)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("a temporary file was removed while a repack ran: %v", err)
	}
	running := func() bool {
		lock, err := takeRepackLock(r2.st.refs.commonDir)
		if err != nil {
			t.Fatal(err)
		}
		if lock != nil {
			lock.Close()
		}
		return lock == nil
	}
	if !running() {
		t.Fatal("the orphaned repack does not hold the repack lock")
	}
	if err := r2.Repack(); err != nil {
		t.Fatalf("Repack while another process's repack runs: %v", err)
	}
	stop := make(chan struct{})
	wait := readers(r2, stop)
	commits := 0
	for ; commits < 5; commits++ {
		commitPacks(t, r2, fmt.Sprintf("b%d", commits), 1)
	}
	// The orphan repacks now.
	if err := os.WriteFile(letGo, []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); running(); commits++ {
		if time.Now().After(deadline) {
			t.Fatal("the orphaned repack did not finish")
		}
		commitPacks(t, r2, fmt.Sprintf("b%d", commits), 1)
	}
	close(stop)
	n, err := wait()
	if err != nil {
		t.Fatalf("a read failed while the orphaned repack ran (after %d reads): %v", n, err)
	}
	after, err := listPacks(r2.st.packDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range before {
		if !slices.Contains(after, p) {
			t.Fatalf("the orphaned git repack deleted %s, which the restarted process may be reading", p)
		}
	}
	if len(after) <= len(before)+commits {
		t.Fatalf("the orphaned repack wrote no pack: %d packs before, %d commits, %d after", len(before), commits, len(after))
	}
	// Now the restarted daemon repacks: the rolled-up packs go.
	if err := r2.Repack(); err != nil {
		t.Fatal(err)
	}
	if packs := packFiles(t, dir); packs > 8 {
		t.Errorf("%d packs after the restarted daemon's repack", packs)
	}
	if n, err := readAll(r2); err != nil || n != 30+commits {
		t.Fatalf("after the repack: %d files, %v", n, err)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
	if n := r2.RemoveTemporaries(); n != 1 {
		t.Errorf("RemoveTemporaries removed %d files once no repack runs, want 1", n)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the stale temporary file is still there once no repack runs: %v", err)
	}
	t.Logf("%d reads and %d commits while the orphaned repack ran", n, commits)
}

// TestFailedRepack: when git repack fails, its temporary packs are
// removed before Repack returns, once every process it started is gone
// (here one that finishes after git, writing a last temporary file),
// under the repack lock, which none of them holds any more.
func TestFailedRepack(t *testing.T) {
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "a", 2)
	tmp := []string{filepath.Join(r.st.packDir, "tmp_pack_Ab12Cd"), filepath.Join(r.st.packDir, "tmp_idx_Ab12Cd")}
	shim := t.TempDir()
	started, letGo := filepath.Join(shim, "started"), filepath.Join(shim, "go")
	for _, fifo := range []string{started, letGo} {
		if err := makeFIFO(fifo); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf(`#!/bin/sh
echo x >%s
(echo >%s; read go <%s; echo x >%s) </dev/null >/dev/null 2>&1 &
echo 'fatal: out of luck' >&2
exit 1
`, tmp[0], started, letGo, tmp[1])
	if err := os.WriteFile(filepath.Join(shim, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", shim+string(os.PathListSeparator)+os.Getenv("PATH"))
	repacked := make(chan error, 1)
	go func() { repacked <- r.Repack() }()
	if !signalled(started, 20*time.Second) {
		t.Fatal("git did not start")
	}
	// git has failed or is about to; what it started finishes now.
	if err := os.WriteFile(letGo, []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	if err := <-repacked; err == nil || !strings.Contains(err.Error(), "out of luck") {
		t.Fatalf("Repack: %v, want git's failure", err)
	}
	for _, p := range tmp {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the failed repack's %s is still there: %v", filepath.Base(p), err)
		}
	}
	lock, err := takeRepackLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if lock == nil {
		t.Fatal("a process the failed git repack started still holds the repack lock")
	}
	lock.Close()
}

// signalled waits until a process opens the FIFO fifo to write to it and
// closes it again (a shell's `echo >fifo`), at most limit.
func signalled(fifo string, limit time.Duration) bool {
	done := make(chan struct{})
	go func() {
		os.ReadFile(fifo)
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		return false
	}
}

// repackHelper repacks dir, for TestRepackLeftRunning, which kills it.
func repackHelper(dir string) int {
	r, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := r.Repack(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestStaleTemporaries: RemoveTemporaries removes what a crash left
// (temporary pack files older than a few minutes, quarantines older than
// an hour) and keeps what may be in use; while a repack holds the repack
// lock, no temporary pack file is removed. Open removes only what is
// older than a day.
// TestStaleTemporaries is not parallel: it takes the repack lock right
// after Open released it, and a git process forked meanwhile by a test
// running beside it holds a copy of the lock's descriptor until it execs.
func TestStaleTemporaries(t *testing.T) {
	dir := newBare(t)
	files := []struct {
		path string        // the file written
		age  time.Duration // how old it is
		gone bool          // RemoveTemporaries removes it
		what string        // what is removed: the file or its quarantine
	}{
		{"objects/pack/tmp_pack_Ab12Cd", time.Hour, true, ""},
		{"objects/pack/tmp_idx_Ab12Cd", time.Hour, true, ""},
		{"objects/pack/tmp_quire_pack_1234", time.Hour, true, ""},
		{"objects/pack/.tmp-123-pack-abc.pack", time.Hour, true, ""},
		{"objects/pack/tmp_pack_fresh1", time.Minute, false, ""},
		{"objects/pack/tmp_pack_Old123", 25 * time.Hour, true, ""},
		{"quire-incoming-old/objects/pack/tmp.pack", 2 * time.Hour, true, "quire-incoming-old"},
		{"quire-incoming-new/objects/pack/tmp.pack", time.Minute, false, "quire-incoming-new"},
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-f.age)
		os.Chtimes(p, at, at)
		if f.what != "" {
			os.Chtimes(filepath.Join(dir, f.what), at, at)
		}
	}
	exists := func(f string) bool {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		return err == nil
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if old := f.age > 24*time.Hour; exists(f.path) == old {
			t.Errorf("Open: %s (%s old) there %v", f.path, f.age, !old)
		}
	}
	// A repack runs (another process's: its lock is held).
	lock, err := takeRepackLock(dir)
	if err != nil || lock == nil {
		t.Fatalf("take the repack lock: %v", err)
	}
	r.RemoveTemporaries()
	for _, f := range files {
		if f.what == "" && f.age < 24*time.Hour && !exists(f.path) {
			t.Errorf("%s removed while a repack runs", f.path)
		}
	}
	lock.Close()
	r.RemoveTemporaries()
	for _, f := range files {
		what := f.path
		if f.what != "" {
			what = f.what
		}
		if exists(what) == f.gone {
			t.Errorf("%s: removed %v, want %v", what, !exists(what), f.gone)
		}
	}
}

// inPackObjects is the number of objects in bare's packs, from git
// count-objects.
func inPackObjects(t testing.TB, bare string) int {
	t.Helper()
	for _, l := range strings.Split(git(t, bare, "count-objects", "-v"), "\n") {
		if v, ok := strings.CutPrefix(l, "in-pack: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("count-objects: %q: %v", l, err)
			}
			return n
		}
	}
	t.Fatal("count-objects printed no in-pack line")
	return 0
}
