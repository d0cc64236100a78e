package pgstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/memory"
)

const crashEnv = "QUIRE_PGSTORE_CRASH_SCHEMA"

// TestCrashHelper is the index run that TestCrashLeavesPreviousCommit
// kills; it does nothing in a normal test run.
func TestCrashHelper(t *testing.T) {
	schema := os.Getenv(crashEnv)
	if schema == "" {
		t.Skip("helper process for TestCrashLeavesPreviousCommit")
	}
	s, err := Open(context.Background(), Options{URL: databaseURL(t), Schema: schema, Embedder: memory.Builtin{}})
	if err != nil {
		t.Fatal(err)
	}
	// Announce that the run is inside its transaction, with the old
	// documents deleted, and never go on: the parent kills us here.
	testHookInTransaction = func() {
		fmt.Println("in transaction")
		os.Stdout.Sync()
		select {}
	}
	_, err = s.Index(context.Background(), "a", "c2", crashDocsV2)
	t.Fatalf("index returned: %v", err)
}

var (
	crashDocsV1 = []memory.Document{
		memory.NewDocument("MEMORY.md", "", "version one of the memory"),
		memory.NewDocument("memory/old.md", "", "a log that version two deletes"),
	}
	crashDocsV2 = []memory.Document{
		memory.NewDocument("MEMORY.md", "", "version two of the memory"),
		memory.NewDocument("memory/new.md", "", "a new log"),
	}
)

func TestCrashLeavesPreviousCommit(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openStore(t, schema, memory.Builtin{})
	if _, err := s.Index(ctx, "a", "c1", crashDocsV1); err != nil {
		t.Fatal(err)
	}
	before, err := s.Chunks(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run", "^TestCrashHelper$", "-test.count", "1")
	cmd.Env = append(os.Environ(), crashEnv+"="+schema)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reached := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "in transaction" {
				reached <- true
				return
			}
		}
		reached <- false
	}()
	select {
	case ok := <-reached:
		if !ok {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("helper exited before reaching its transaction")
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("helper did not reach its transaction in 30 s")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup of any kind
		t.Fatal(err)
	}
	cmd.Wait()

	if c, err := s.IndexedCommit(ctx, "a"); err != nil || c != "c1" {
		t.Errorf("indexed commit after the crash = %q, %v; want c1", c, err)
	}
	after, err := s.Chunks(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("chunks changed by the killed run:\nbefore %v\nafter  %v", before, after)
	}
	// The killed run's lock is gone: the next run indexes c2.
	ctx2, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := s.Index(ctx2, "a", "c2", crashDocsV2); err != nil {
		t.Fatalf("index after the crash: %v", err)
	}
	after, _ = s.Chunks(ctx, "a")
	if len(after) != 2 || !strings.Contains(after[0].Text, "version two") {
		t.Errorf("chunks after re-run = %v", after)
	}
}
