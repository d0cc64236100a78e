package gitsync

import (
	"context"
	"testing"
	"time"
)

func TestFollower(t *testing.T) {
	t.Parallel()
	h, url, _ := testHost(t, HostOptions{})
	if _, err := h.Create("up"); err != nil {
		t.Fatal(err)
	}
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "v1\n"})
	git(t, src, "push", "-q", url+"/up.git", "main")
	r, err := Open(newBare(t))
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan Event, 10)
	f := NewFollower(r, mustRemote(t, url+"/up.git"), func(e Event) { events <- e })
	ctx := context.Background()

	for i, want := range []string{"v1", "v2", "v2"} {
		if i == 1 {
			commitFiles(t, src, map[string]string{"AGENTS.md": "v2\n"}, "v2")
			git(t, src, "push", "-q", url+"/up.git", "main")
		}
		ups, err := f.Fetch(ctx)
		if err != nil {
			t.Fatalf("fetch %d: %v", i, err)
		}
		head := git(t, src, "rev-parse", "HEAD")
		switch {
		case i < 2 && (len(ups) != 1 || ups[0].Name != "refs/remotes/upstream/main" || ups[0].New.String() != head):
			t.Fatalf("fetch %d: updates %+v, want upstream/main → %s", i, ups, head)
		case i == 2 && len(ups) != 0:
			t.Fatalf("fetch with nothing new reported %+v", ups)
		}
		s, err := r.Snapshot("refs/remotes/upstream/main")
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := s.ReadFile("AGENTS.md"); string(b) != want+"\n" {
			t.Fatalf("fetch %d: AGENTS.md = %q, want %q", i, b, want)
		}
	}
	if n := len(events); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
	<-events
	<-events

	// Run fetches on a trigger.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.Interval = time.Hour
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	commitFiles(t, src, map[string]string{"AGENTS.md": "v3\n"}, "v3")
	git(t, src, "push", "-q", url+"/up.git", "main")
	want := git(t, src, "rev-parse", "HEAD")
	deadline := time.After(20 * time.Second)
	for got := ""; got != want; {
		f.Trigger()
		select {
		case e := <-events:
			if e.Source != SourceUpstream {
				t.Fatalf("event source %s", e.Source)
			}
			got = e.Refs[0].New.String()
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("no event for the triggered fetch")
		}
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run returned %v", err)
	}
	git(t, r.Path(), "fsck", "--strict")
	if shallow := git(t, r.Path(), "rev-parse", "--is-shallow-repository"); shallow != "false" {
		t.Fatal("follower made a shallow repository")
	}
}
