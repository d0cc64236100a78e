package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
)

// maxBatch bounds how many API writes one commit carries.
const maxBatch = 128

// writeReq is one API write waiting for its commit. Its build runs on the
// tree the batch's commit goes on, after the writes queued before it, so
// every write sees the ones before it: two appends to one daily log both
// land, an If-Match write checks the content the earlier writes left.
type writeReq struct {
	ctx     context.Context
	ref     agentRef
	user    string
	message string
	build   buildFunc

	// Set by the batch: the writes of the last attempt and the outcome.
	writes []gitsync.FileWrite
	err    error
	commit string
	branch string
	done   chan struct{}
}

// writeQueue holds a source's writes waiting for the committer.
type writeQueue struct {
	mu      sync.Mutex
	reqs    []*writeReq
	running bool
}

// groupCommit queues a write and waits for the commit that carries it:
// concurrent writes to one source become one commit (and, with an
// upstream, one push), so a burst costs one commit's fsyncs, not one per
// write. A write is answered only once its commit is durable (and, with
// an upstream, accepted there).
func (wr *writer) groupCommit(ctx context.Context, ref agentRef, user, message string, build buildFunc) (string, string, error) {
	s := ref.src
	r := &writeReq{ctx: ctx, ref: ref, user: user, message: message, build: build, done: make(chan struct{})}
	q := &s.queue
	q.mu.Lock()
	q.reqs = append(q.reqs, r)
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if start {
		go wr.commitQueued(s)
	}
	// The committer skips a write whose context ended before it was
	// built; once built, it is committed whole or not at all, and the
	// answer waits for that (a bounded time: see upstreamWriteFor).
	<-r.done
	return r.commit, r.branch, r.err
}

// commitQueued commits the source's queued writes, a batch at a time,
// until the queue is empty.
func (wr *writer) commitQueued(s *source) {
	q := &s.queue
	for {
		q.mu.Lock()
		n := min(len(q.reqs), maxBatch)
		if n == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		batch := slices.Clone(q.reqs[:n])
		q.reqs = slices.Delete(q.reqs, 0, n)
		q.mu.Unlock()
		wr.commitBatch(s, batch)
		for _, r := range batch {
			close(r.done)
		}
	}
}

// commitBatch commits batch as one commit. When that commit fails for a
// reason other than a stale branch, each write is tried on its own, so
// one bad write fails only its own request.
func (wr *writer) commitBatch(s *source, batch []*writeReq) {
	s.writeMu.Lock()
	err := wr.commitWrites(s, batch)
	s.writeMu.Unlock()
	if err == nil {
		return
	}
	if len(batch) == 1 {
		batch[0].err = err
		return
	}
	wr.log.Debug("a batch of writes failed; committing them one by one", "source", s.id(), "writes", len(batch), "err", err)
	for _, r := range batch {
		r.err, r.writes = nil, nil
		wr.commitBatch(s, []*writeReq{r})
	}
}

// applyBatch runs every write's build on base, each seeing the writes
// before it, and returns the batch's file changes (the final state of
// each path). A build's error is its request's answer; the others go on.
func applyBatch(base fs.FS, batch []*writeReq) []gitsync.FileWrite {
	pf := newPendingFS(base)
	for _, r := range batch {
		r.writes, r.err = nil, nil
		if err := r.ctx.Err(); err != nil {
			r.err = err
			continue
		}
		a := r.ref.ag.agent
		// build sees a new user's seed files, and the first write for
		// a user stores them with it.
		writes, err := r.build(&seedFS{base: pf, agents: []*prompt.Agent{a}})
		if err != nil {
			r.err = err
			continue
		}
		writes = withSeeds(pf, a, r.user, writes)
		r.writes = writes
		pf.apply(writes)
	}
	return pf.changes()
}

// commitWrites commits batch's writes on the source's deployed branch
// (or, for an upstream, on the upstream's live), deploys the result and
// announces each write. Callers hold s.writeMu. The error is the
// commit's: requests whose build failed carry their own.
func (wr *writer) commitWrites(s *source, batch []*writeReq) error {
	// The commit outlives a caller that goes away meanwhile: it is whole
	// or not at all.
	ctx := context.WithoutCancel(batch[0].ctx)
	var commit, branch string
	if s.kind == kindUpstream {
		sig, user, msg := batchMessage(batch, wr.now())
		h, _, err := wr.commitUpstream(ctx, s, sig, user, msg, func(head plumbing.Hash) ([]gitsync.FileWrite, error) {
			snap, err := s.repo.SnapshotOf(head)
			if err != nil {
				return nil, err
			}
			return applyBatch(snap, batch), nil
		})
		if err != nil || h == "" {
			return err
		}
		commit, branch = h, gitsync.LiveRef.Short()
	} else {
		for attempt := 0; ; attempt++ {
			head, refName, err := s.head()
			if err != nil {
				return fmt.Errorf("resolve %s: %w", s.refs[0], err)
			}
			snap, err := s.repo.SnapshotOf(head)
			if err != nil {
				return err
			}
			writes := applyBatch(snap, batch)
			if len(writes) == 0 {
				return nil
			}
			sig, user, msg := batchMessage(batch, wr.now())
			h, err := s.repo.Commit(ctx, gitsync.CommitRequest{Ref: refName, Expect: head, Writes: writes,
				Author: sig, User: user, Message: msg})
			if errors.Is(err, gitsync.ErrStale) && attempt < 5 {
				continue // a push moved the branch: build again on it
			}
			if err != nil {
				return err
			}
			commit, branch = h.String(), strings.TrimPrefix(refName, "refs/heads/")
			break
		}
	}
	if _, err := wr.deployer.deployLogged(ctx, s, slog.LevelDebug); err != nil {
		wr.log.Warn("deploy after a write failed", "source", s.id(), "err", err)
	}
	for _, r := range batch {
		if r.err == nil && len(r.writes) > 0 {
			r.commit, r.branch = commit, branch
			wr.announceWrites(s, r.ref.ag.agent.Name, r.user, commit, r.writes)
		}
	}
	return nil
}

// batchMessage is the author, Quire-User trailer and message of a
// batch's commit: a single write's own, or a summary with one line per
// write and a trailer per user.
func batchMessage(batch []*writeReq, now time.Time) (object.Signature, string, string) {
	var done []*writeReq
	for _, r := range batch {
		if r.err == nil && len(r.writes) > 0 {
			done = append(done, r)
		}
	}
	if len(done) == 0 {
		done = batch
	}
	if len(done) == 1 {
		r := done[0]
		return author(r.ref.ag.agent.Name, now), r.user, r.message
	}
	agent := done[0].ref.ag.agent.Name
	var users []string
	var b strings.Builder
	for _, r := range done {
		if r.ref.ag.agent.Name != agent {
			agent = "quire"
		}
		if r.user != "" && !slices.Contains(users, r.user) {
			users = append(users, r.user)
		}
	}
	fmt.Fprintf(&b, "%s: %d writes\n\n", agent, len(done))
	for _, r := range done {
		b.WriteString("- " + oneLine(r.message) + "\n")
	}
	if len(users) > 0 {
		b.WriteString("\n")
		for _, u := range users {
			b.WriteString("Quire-User: " + oneLine(u) + "\n")
		}
	}
	return author(agent, now), "", b.String()
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// pendingFS is a tree with a batch's writes applied on top, as the next
// write in the batch reads it.
type pendingFS struct {
	base  fs.FS
	files map[string]*gitsync.FileWrite // path → the latest write to it
	order []string                      // paths in the order first written
}

func newPendingFS(base fs.FS) *pendingFS {
	return &pendingFS{base: base, files: map[string]*gitsync.FileWrite{}}
}

// apply records writes.
func (p *pendingFS) apply(writes []gitsync.FileWrite) {
	for _, w := range writes {
		prev, ok := p.files[w.Path]
		if !ok {
			p.order = append(p.order, w.Path)
		}
		nw := w
		if ok && prev.Match != nil {
			// The batch's commit goes on the base: the first write's
			// condition on it is the one that holds.
			nw.Match = prev.Match
		}
		p.files[w.Path] = &nw
	}
}

// changes is the final state of every path written, in the order first
// written; a file created and deleted within the batch is left out.
func (p *pendingFS) changes() []gitsync.FileWrite {
	out := make([]gitsync.FileWrite, 0, len(p.order))
	for _, name := range p.order {
		w := p.files[name]
		if w.Delete {
			if _, err := fs.Stat(p.base, name); err != nil {
				continue
			}
		}
		out = append(out, *w)
	}
	return out
}

// dirHasPending reports whether a pending (not deleted) file lies under
// dir.
func (p *pendingFS) dirHasPending(dir string) bool {
	prefix := dir + "/"
	if dir == "." {
		prefix = ""
	}
	for name, w := range p.files {
		if !w.Delete && strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

func (p *pendingFS) ReadFile(name string) ([]byte, error) {
	if w, ok := p.files[name]; ok {
		if w.Delete {
			return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
		}
		return bytes.Clone(w.Content), nil
	}
	return fs.ReadFile(p.base, name)
}

func (p *pendingFS) Stat(name string) (fs.FileInfo, error) {
	if w, ok := p.files[name]; ok {
		if w.Delete {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
		}
		return memInfo{name: path.Base(name), size: int64(len(w.Content))}, nil
	}
	fi, err := fs.Stat(p.base, name)
	if errors.Is(err, fs.ErrNotExist) && p.dirHasPending(name) {
		return dirInfo{name: path.Base(name)}, nil
	}
	return fi, err
}

func (p *pendingFS) Open(name string) (fs.File, error) {
	if w, ok := p.files[name]; ok {
		if w.Delete {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return &memFile{Reader: bytes.NewReader(w.Content), info: memInfo{name: path.Base(name), size: int64(len(w.Content))}}, nil
	}
	fi, err := p.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		es, err := p.ReadDir(name)
		if err != nil {
			return nil, err
		}
		return &memDir{info: dirInfo{name: path.Base(name)}, entries: es}, nil
	}
	return p.base.Open(name)
}

// ReadDir lists the base's entries with the batch's writes applied.
func (p *pendingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := fs.ReadDir(p.base, name)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && p.dirHasPending(name)) {
		return nil, err
	}
	byName := map[string]fs.DirEntry{}
	for _, e := range es {
		byName[e.Name()] = e
	}
	prefix := name + "/"
	if name == "." {
		prefix = ""
	}
	for fp, w := range p.files {
		rest, ok := strings.CutPrefix(fp, prefix)
		if !ok {
			continue
		}
		child, _, sub := strings.Cut(rest, "/")
		switch {
		case sub:
			if _, ok := byName[child]; !ok && !w.Delete {
				byName[child] = fs.FileInfoToDirEntry(dirInfo{name: child})
			}
		case w.Delete:
			delete(byName, child)
		default:
			byName[child] = fs.FileInfoToDirEntry(memInfo{name: child, size: int64(len(w.Content))})
		}
	}
	out := make([]fs.DirEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

type dirInfo struct{ name string }

func (i dirInfo) Name() string       { return i.name }
func (i dirInfo) Size() int64        { return 0 }
func (i dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (i dirInfo) ModTime() time.Time { return time.Time{} }
func (i dirInfo) IsDir() bool        { return true }
func (i dirInfo) Sys() any           { return nil }

type memDir struct {
	info    dirInfo
	entries []fs.DirEntry
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}
func (d *memDir) Close() error { return nil }
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		es := d.entries
		d.entries = nil
		return es, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	es := d.entries[:n]
	d.entries = d.entries[n:]
	return es, nil
}
