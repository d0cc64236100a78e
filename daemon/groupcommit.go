package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
)

// maxBatch bounds how many API writes one commit carries.
const maxBatch = 128

// answerGrace is how long past its deadline a write waits for the
// outcome of a commit already under way, before it is answered
// outcome_unknown: every write is answered by its deadline and a second.
const answerGrace = 500 * time.Millisecond

// The states of a writeReq. Its caller gives up at its deadline: with
// "nothing was written" while the write is queued or taken (it is then
// abandoned, and never claimed), else outcome_unknown once its commit had
// answerGrace to end.
const (
	reqQueued    int32 = iota // waiting for the committer
	reqTaken                  // in a batch, not in a commit
	reqClaimed                // built into a commit: it may be applied
	reqAbandoned              // its caller gave up before it was claimed
)

// claim marks r as built into a commit, unless its caller gave up.
func (r *writeReq) claim() bool {
	for {
		switch st := r.state.Load(); st {
		case reqClaimed:
			return true
		case reqAbandoned:
			return false
		default:
			if r.state.CompareAndSwap(st, reqClaimed) {
				return true
			}
		}
	}
}

// unclaim takes r back out of a commit that was certainly not applied
// (refused, or never sent), unless a push carried it unanswered.
func (r *writeReq) unclaim() {
	if !r.maybeSent {
		r.state.CompareAndSwap(reqClaimed, reqTaken)
	}
}

// abandon gives r up for its caller, unless it is claimed.
func (r *writeReq) abandon() bool {
	return r.state.CompareAndSwap(reqQueued, reqAbandoned) || r.state.CompareAndSwap(reqTaken, reqAbandoned)
}

// writeReq is one API write waiting for its commit. Its build runs on the
// tree the batch's commit goes on, after the writes queued before it, so
// every write sees the ones before it: two appends to one daily log both
// land, an If-Match write checks the content the earlier writes left.
type writeReq struct {
	ctx     context.Context
	ref     agentRef
	user    string
	message string
	// key is the write's idempotency key (ID "" for none), recorded in
	// its commit.
	key   gitsync.WriteKey
	build buildFunc
	state atomic.Int32

	// Set by the batch: the writes of the last attempt and the outcome.
	writes []gitsync.FileWrite
	err    error
	commit string
	branch string
	// replay is where live already holds the write (its key is there):
	// it is answered with that commit, not applied again. dupOf is an
	// earlier write of the batch with the same key.
	replay *keyHit
	dupOf  *writeReq
	// maybeSent: a push that carried the write went unanswered, so
	// it may be in the upstream from then on.
	maybeSent bool
	// tree is the tree its commit made (nil: not known).
	tree *batchTree
	done chan struct{}
}

// committed is where a write landed: the commit and its branch, and
// whether it was there already (a retry whose key live holds).
type committed struct {
	commit, branch string
	replay         *keyHit
	tree           *batchTree // the tree the commit made, when known
}

// maxGather bounds how long, after a batch was answered, the next batch
// waits for the writers that batch answered to queue their next writes
// (see gather).
const maxGather = 10 * time.Millisecond

// writeQueue holds a source's writes waiting for the committer.
type writeQueue struct {
	mu      sync.Mutex
	reqs    []*writeReq
	running bool
	// arrived is poked (never blocking) when a write is queued.
	arrived chan struct{}
	// last is how many writes the next batch expects (see
	// answer), the last batch answered when, and how long its
	// commit took.
	last     int
	answered time.Time
	took     time.Duration
	// after is time.After (nil) or what a test gives instead.
	after func(time.Duration) <-chan time.Time
}

// push queues r and reports whether a committer must be started.
func (q *writeQueue) push(r *writeReq) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reqs = append(q.reqs, r)
	if q.arrived == nil {
		q.arrived = make(chan struct{}, 1)
	}
	select {
	case q.arrived <- struct{}{}:
	default:
	}
	start := !q.running
	q.running = true
	return start
}

// gather waits, before a batch is taken, until as many writes are queued
// as the last batch answered and left queued, or for as long as its
// commit took (at most maxGather) after it was answered. Under a steady
// stream of writers, each answered writer's next write joins the next
// batch instead of the first one back taking a commit of its own while
// the others queue behind it: the batches stay as large as the writers
// are many, and a commit's cost is shared by all of them. The wait costs a write no more
// than a commit of the first one back would have made it wait; a write
// that comes after a pause is taken at once.
func (q *writeQueue) gather() {
	var timeout <-chan time.Time
	for {
		q.mu.Lock()
		n, want, wait, arrived := len(q.reqs), q.last, time.Until(q.answered.Add(min(q.took, maxGather))), q.arrived
		q.mu.Unlock()
		if n >= want || wait <= 0 {
			return
		}
		if timeout == nil {
			timeout = q.timeout(wait)
		}
		select {
		case <-arrived:
		case <-timeout:
			return
		}
	}
}

// timeout is a channel that receives once d has passed.
func (q *writeQueue) timeout(d time.Duration) <-chan time.Time {
	if q.after != nil {
		return q.after(d)
	}
	return time.After(d) // collected once unreferenced, fired or not
}

// answer answers batch, whose commit took took, and records what the
// next batch expects: the writers it answers and those that queued
// meanwhile (counted before any answered writer is back), at most
// maxBatch. Counting only the answered ones would split a stream of
// writers into batches that take turns: the writes queued during a
// commit make the next batch, which expects no more than they are, and
// the answered writers come back to make the one after.
func (q *writeQueue) answer(batch []*writeReq, took time.Duration) {
	q.mu.Lock()
	q.last, q.answered, q.took = min(len(batch)+len(q.reqs), maxBatch), time.Now(), took
	q.mu.Unlock()
	for _, r := range batch {
		close(r.done)
	}
}

// groupCommit queues a write and waits for the commit that carries it:
// concurrent writes to one source become one commit (and, with an
// upstream, one push), so a burst costs one commit's fsyncs, not one per
// write. A write is answered once its commit is durable (and, with an
// upstream, accepted there), or when its context ends: not applied when
// the committer had not taken it yet, else (after answerGrace for the
// commit under way) outcome_unknown.
func (wr *writer) groupCommit(ctx context.Context, ref agentRef, user, message string, key gitsync.WriteKey, build buildFunc) (committed, error) {
	s := ref.src
	r := &writeReq{ctx: ctx, ref: ref, user: user, message: message, key: key, build: build, done: make(chan struct{})}
	if s.writes.queue.push(r) {
		go wr.commitQueued(s)
	}
	select {
	case <-r.done:
		return r.outcome()
	case <-ctx.Done():
	}
	if r.abandon() {
		return committed{}, wr.notApplied(s)
	}
	t := time.NewTimer(answerGrace)
	defer t.Stop()
	select {
	case <-r.done:
		return r.outcome()
	case <-t.C:
	}
	return committed{}, wr.outcomeUnknown(s, nil)
}

func (r *writeReq) outcome() (committed, error) {
	return committed{commit: r.commit, branch: r.branch, replay: r.replay, tree: r.tree}, r.err
}

// notApplied answers a write whose deadline passed before it was sent
// or committed: nothing was written.
func (wr *writer) notApplied(s *source) error {
	if s.kind == kindUpstream {
		return api.Errorf(api.CodeUpstreamUnavailable,
			"the upstream %s did not take the write within %s: it waited behind earlier writes and was not sent; nothing was written, retry", s.name, wr.writeTimeout)
	}
	return api.Errorf(api.CodeWriteTimeout,
		"the write waited %s behind earlier writes and was not applied; nothing was written, retry", wr.writeTimeout)
}

// outcomeUnknown answers a write whose commit or push was under way at
// its deadline, or whose push got no answer (why, when known).
func (wr *writer) outcomeUnknown(s *source, why error) error {
	retry := "retry with the same Idempotency-Key (a retry without one may write it twice: read the file first)"
	if s.kind != kindUpstream {
		return api.Errorf(api.CodeOutcomeUnknown, "the write was still being committed when its %s deadline passed: it may have been applied; %s", wr.writeTimeout, retry)
	}
	if why == nil {
		return api.Errorf(api.CodeOutcomeUnknown, "the upstream %s did not answer within %s whether it took the write: it may hold it; %s", s.name, wr.writeTimeout, retry)
	}
	return api.Errorf(api.CodeOutcomeUnknown, "the upstream %s did not answer whether it took the write (%v): it may hold it; %s", s.name, why, retry)
}

// commitQueued commits the source's queued writes, a batch at a time,
// until the queue is empty. A write whose caller gave up before it was
// taken is left out.
func (wr *writer) commitQueued(s *source) {
	q := &s.writes.queue
	for {
		q.gather()
		q.mu.Lock()
		var batch []*writeReq
		n := 0
		for ; n < len(q.reqs) && len(batch) < maxBatch; n++ {
			if r := q.reqs[n]; r.state.CompareAndSwap(reqQueued, reqTaken) {
				batch = append(batch, r)
			}
		}
		q.reqs = slices.Delete(q.reqs, 0, n)
		if len(batch) == 0 && len(q.reqs) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		start := time.Now()
		wr.commitBatch(s, batch)
		q.answer(batch, time.Since(start))
	}
}

// commitBatch commits batch as one commit. When that commit fails for a
// reason other than a stale branch, each write is tried on its own, so
// one bad write fails only its own request; not when it may have been
// applied, nor once the writes' deadlines passed.
func (wr *writer) commitBatch(s *source, batch []*writeReq) {
	ctx, cancel := batchContext(batch)
	defer cancel()
	var commit, branch string
	err := s.writes.lock.LockContext(ctx)
	if err == nil {
		commit, branch, err = wr.commitWrites(ctx, s, batch)
		s.writes.lock.Unlock()
	}
	if err != nil && len(batch) > 1 && ctx.Err() == nil && api.AsError(err).Code != api.CodeOutcomeUnknown && !maybeSent(batch) {
		wr.log.Debug("a batch of writes failed; committing them one by one", "source", s.id(), "writes", len(batch), "err", err)
		for _, r := range batch {
			wr.commitBatch(s, []*writeReq{r})
		}
		return
	}
	wr.settle(s, batch, commit, branch, err)
}

// maybeSent reports whether a push carried one of batch's writes
// without an answer.
func maybeSent(batch []*writeReq) bool {
	for _, r := range batch {
		if r.maybeSent {
			return true
		}
	}
	return false
}

// settle sets each write's outcome once its batch's commit is made
// (commit "" when it wrote nothing) or failed with err, and announces
// the writes.
func (wr *writer) settle(s *source, batch []*writeReq, commit, branch string, err error) {
	for _, r := range batch {
		switch {
		case r.replay != nil:
			r.commit, r.branch, r.err = r.replay.commit, branch, nil
		case r.dupOf != nil:
		case errors.Is(r.err, context.DeadlineExceeded) || errors.Is(r.err, context.Canceled):
			r.err = wr.expired(s, r, nil)
		case r.err != nil && r.maybeSent:
			// Refused as built on the upstream's live now; but a push
			// that carried it earlier may still land.
			r.err = wr.outcomeUnknown(s, r.err)
		case r.err != nil:
		case err != nil:
			r.err = wr.failed(s, r, err)
		case len(r.writes) > 0:
			r.commit, r.branch = commit, branch
			if r.key.ID != "" {
				s.writes.keys.add(r.key.ID, keyHit{commit: commit, path: r.key.Path})
			}
			wr.announceWrites(s, r.ref.ag.agent.Name, r.user, commit, r.writes)
		}
	}
	for _, r := range batch {
		if f := r.dupOf; f != nil {
			r.commit, r.branch, r.err = f.commit, f.branch, f.err
			if f.err == nil && f.commit != "" {
				r.replay = &keyHit{commit: f.commit, path: f.key.Path}
			}
		}
	}
}

// expired is the answer of a write whose deadline passed before it was
// built into a commit: not applied, unless an earlier push carried it
// and went unanswered.
func (wr *writer) expired(s *source, r *writeReq, why error) error {
	if !r.maybeSent {
		return wr.notApplied(s)
	}
	return wr.outcomeUnknown(s, why)
}

// failed is the answer of a write whose batch's commit failed with err.
func (wr *writer) failed(s *source, r *writeReq, err error) error {
	switch {
	case api.AsError(err).Code == api.CodeOutcomeUnknown:
		return err
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return wr.expired(s, r, err)
	case r.maybeSent:
		return wr.outcomeUnknown(s, err)
	}
	return err
}

// batchContext is what a batch's commit may take: until the latest of
// its writes' deadlines (none when one has none), whatever their callers
// do meanwhile: a commit is whole or not at all.
func batchContext(batch []*writeReq) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(batch[0].ctx)
	var last time.Time
	for _, r := range batch {
		d, ok := r.ctx.Deadline()
		if !ok {
			return context.WithCancel(ctx)
		}
		if d.After(last) {
			last = d
		}
	}
	return context.WithDeadline(ctx, last)
}

// applyBatch runs every write's build on base, each seeing the writes
// before it, and returns the batch's file changes (the final state of
// each path). A build's error is its request's answer; the others go on.
// A write whose key known finds (nil: none) is already in live and
// another of the batch with the same key is the same write: neither is
// applied again. A write whose context ended is left out.
func applyBatch(base fs.FS, batch []*writeReq, known func(id string) (keyHit, bool)) []gitsync.FileWrite {
	return applyBatchTo(newPendingFS(base), batch, known)
}

// applyBatchTo is applyBatch on pf's base, leaving pf the tree the
// batch makes.
func applyBatchTo(pf *pendingFS, batch []*writeReq, known func(id string) (keyHit, bool)) []gitsync.FileWrite {
	first := map[string]*writeReq{}
	for _, r := range batch {
		r.writes, r.err, r.replay, r.dupOf, r.tree = nil, nil, nil, nil, nil
		if id := r.key.ID; id != "" && r.claim() {
			if hit, ok := lookupKey(known, id); ok {
				r.replay = &hit // applied: never "nothing was written"
				continue
			}
		}
		if err := r.ctx.Err(); err != nil {
			r.err = err
			r.unclaim()
			continue
		}
		if !r.claim() {
			r.err = context.DeadlineExceeded // its caller gave up: never applied
			continue
		}
		if f, ok := first[r.key.ID]; ok && r.key.ID != "" {
			r.dupOf = f
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
		if r.key.ID != "" {
			first[r.key.ID] = r
		}
		pf.apply(writes)
	}
	return pf.changes()
}

func lookupKey(known func(string) (keyHit, bool), id string) (keyHit, bool) {
	if known == nil {
		return keyHit{}, false
	}
	return known(id)
}

// batchKeys are the keys of the writes the batch's commit carries.
func batchKeys(batch []*writeReq) []gitsync.WriteKey {
	var keys []gitsync.WriteKey
	for _, r := range batch {
		if r.err == nil && len(r.writes) > 0 && r.key.ID != "" {
			keys = append(keys, r.key)
		}
	}
	return keys
}

// knownKeys indexes live's keys up to head and returns the lookup of
// the index; an index that cannot be read is logged and looked up as it
// is (a retry may then be applied again: never a write lost).
func (wr *writer) knownKeys(s *source, head plumbing.Hash) func(string) (keyHit, bool) {
	if err := s.writes.keys.sync(s.repo, head); err != nil {
		wr.log.Warn("reading the write keys of live's history failed", "source", s.id(), "err", err)
	}
	return s.writes.keys.lookup
}

// commitWrites commits batch's writes on the source's deployed branch
// (or, for an upstream, on the upstream's live) and deploys the result.
// It returns the commit ("" when nothing was written) and its branch.
// Callers hold s.writes.lock. The error is the commit's: requests whose
// build failed carry their own.
func (wr *writer) commitWrites(ctx context.Context, s *source, batch []*writeReq) (string, string, error) {
	var commit, branch string
	if s.kind == kindUpstream {
		branch = gitsync.LiveRef.Short()
		for _, r := range batch {
			if r.key.ID == "" {
				// Pushed again after a push that went unanswered, it
				// must not land twice: the upstream refuses a key it
				// holds.
				r.key.ID = internalKey(r.ref.ag.agent.Name, r.user)
			}
		}
		h, err := wr.commitUpstream(ctx, s, batch)
		if err != nil {
			return "", branch, err
		}
		commit = h
	} else {
		for attempt := 0; ; attempt++ {
			head, refName, err := s.head()
			if err != nil {
				return "", "", fmt.Errorf("resolve %s: %w", s.refs[0], err)
			}
			snap, err := s.repo.SnapshotOf(head)
			if err != nil {
				return "", "", err
			}
			branch = strings.TrimPrefix(refName, "refs/heads/")
			pf := newPendingFS(snap)
			writes := applyBatchTo(pf, batch, wr.knownKeys(s, head))
			if len(writes) == 0 {
				break
			}
			sig, user, msg := batchMessage(batch, wr.now())
			h, err := s.repo.Commit(ctx, gitsync.CommitRequest{Ref: refName, Expect: head, Writes: writes,
				Author: sig, User: user, Message: msg, Keys: batchKeys(batch)})
			if errors.Is(err, gitsync.ErrStale) && attempt < 5 {
				continue // a push moved the branch: build again on it
			}
			if err != nil {
				return "", branch, err
			}
			commit = h.String()
			tree := newBatchTree(pf, batch[0].ref.dep.ws.Agents(), budgetOptions(s.rootName, wr.tokens))
			for _, r := range batch {
				r.tree = tree
			}
			break
		}
	}
	if commit != "" {
		// Deployed whole, whatever the writes' deadlines.
		if _, err := wr.deployer.deployLogged(context.WithoutCancel(ctx), s, slog.LevelDebug); err != nil {
			wr.log.Warn("deploy after a write failed", "source", s.id(), "err", err)
		}
	}
	return commit, branch, nil
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
