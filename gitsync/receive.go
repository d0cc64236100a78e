package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// serveReceivePack handles a push: the pack streams to a quarantine on
// disk (bounded as it arrives), every updated ref's new tree and every
// new commit are validated, and only then does the pack join the
// repository (synced) and the refs move with compare-and-swap.
func (h *Host) serveReceivePack(ctx context.Context, w http.ResponseWriter, req *http.Request, name, user string) {
	body, err := h.body(w, req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmds, caps, err := parseCommands(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/x-git-receive-pack-result")
	if len(cmds) == 0 {
		// The probe git sends before a large push, or an empty push.
		w.WriteHeader(http.StatusOK)
		return
	}
	r, existed, ok := h.admitPush(ctx, w, name)
	if !ok {
		return
	}
	defer func() { <-h.pushes }()

	out := &pushOutput{sideband: caps.has("side-band-64k"), url: repoURL(req, name), repo: name}
	start := time.Now()
	results, updates := h.receive(ctx, r, body, cmds, caps, out)
	if len(updates) == 0 && !existed {
		h.forget(name, r)
	}
	h.recordPush(name, user, start, out.unpack, results)
	h.logPush(name, user, start, results, updates)
	h.reportPush(ctx, w, out, results, Event{Source: SourcePush, Name: name, Repository: r, User: user, Refs: updates})
}

// command is one ref update of a receive-pack request.
type command struct {
	Old, New plumbing.Hash
	Name     plumbing.ReferenceName
}

func (c command) isDelete() bool { return c.New.IsZero() }

// maxCommands bounds the number of ref updates in one push.
const maxCommands = 10000

// parseCommands reads the command list of a receive-pack request up to
// its flush-pkt ("old new ref\0caps", then "old new ref" lines). A request
// that is only a flush-pkt (the probe git sends before a large push)
// yields no commands. The pack, if any, follows in r.
func parseCommands(r io.Reader) ([]command, capSet, error) {
	sc := pktline.NewScanner(r)
	var cmds []command
	caps := capSet{}
	for {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return nil, nil, fmt.Errorf("%w: read commands: %w", errProtocol, err)
			}
			if len(cmds) == 0 {
				return nil, caps, nil // empty body
			}
			return nil, nil, fmt.Errorf("%w: commands not terminated by a flush-pkt", errProtocol)
		}
		line := sc.Bytes()
		if len(line) == 0 {
			return cmds, caps, nil
		}
		if len(cmds) >= maxCommands {
			return nil, nil, fmt.Errorf("%w: more than %d commands", errProtocol, maxCommands)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(cmds) == 0 {
			if i := bytes.IndexByte(line, 0); i >= 0 {
				caps = parseCaps(string(line[i+1:]))
				line = line[:i]
			}
		}
		if bytes.HasPrefix(line, []byte("shallow ")) {
			return nil, nil, fmt.Errorf("%w: shallow pushes are not supported", errProtocol)
		}
		f := strings.Split(string(line), " ")
		if len(f) != 3 {
			return nil, nil, fmt.Errorf("%w: malformed command %q", errProtocol, line)
		}
		old, ok1 := parseHash(f[0])
		nw, ok2 := parseHash(f[1])
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("%w: malformed command %q", errProtocol, line)
		}
		name := plumbing.ReferenceName(f[2])
		if !validRefName(name) {
			return nil, nil, fmt.Errorf("%w: invalid ref name %q", errProtocol, f[2])
		}
		if old.IsZero() && nw.IsZero() {
			return nil, nil, fmt.Errorf("%w: command for %s has two zero ids", errProtocol, name)
		}
		cmds = append(cmds, command{Old: old, New: nw, Name: name})
	}
}

// admitPush opens the repository a push goes to (creating it when
// AllowCreate is set) and takes a push slot, which the caller gives
// back. When the push may not go on it answers the request and reports
// false.
func (h *Host) admitPush(ctx context.Context, w http.ResponseWriter, name string) (r *Repository, existed, ok bool) {
	_, existed = h.existing(name)
	if !existed && !h.opts.AllowCreate {
		h.notFound(w, name, true)
		return nil, false, false
	}
	if !h.acquirePush(ctx) {
		http.Error(w, fmt.Sprintf("more than %d pushes at once; retry in a moment", cap(h.pushes)), http.StatusServiceUnavailable)
		return nil, false, false
	}
	r, err := h.Create(name)
	if err != nil {
		http.Error(w, "cannot open repository", http.StatusInternalServerError)
		<-h.pushes
		return nil, false, false
	}
	return r, existed, true
}

// existing returns the open repository for name, if it already exists.
func (h *Host) existing(name string) (*Repository, bool) {
	r, err := h.Repository(name)
	return r, err == nil
}

// acquirePush takes a push slot, waiting up to h.pushWait.
func (h *Host) acquirePush(ctx context.Context) bool {
	t := time.NewTimer(h.pushWait)
	defer t.Stop()
	select {
	case h.pushes <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// pushWait is how long a push waits for a slot before a 503.
const pushWait = 10 * time.Second

// repoURL is the repository's URL as the client reached it.
func repoURL(req *http.Request, name string) string {
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + req.Host + "/" + name + ".git"
}

// pushOutput collects what a push reports.
type pushOutput struct {
	sideband bool
	url      string // the repository's URL as the client reached it
	repo     string // the hosted repository's name
	unpack   string // "unpack ok" or "unpack <error>"
	messages []byte // remote: lines sent before the status report
}

func (o *pushOutput) say(format string, args ...any) {
	o.messages = fmt.Appendf(o.messages, format+"\n", args...)
}

// refResult is the outcome for one pushed ref: "" is ok, otherwise the
// reason it was refused.
type refResult struct {
	cmd    command
	reason string
}

// push is one push being received: its commands, each ref's result so
// far and, with two branches, what each ref does to live.
type push struct {
	r       *Repository
	cmds    []command
	out     *pushOutput
	results []refResult
	plans   []*livePlan // what an accepted ref does to live (nil: nothing)
	rebase  []bool      // a daemon's write on an older live
}

func newPush(r *Repository, cmds []command, out *pushOutput) *push {
	p := &push{r: r, cmds: cmds, out: out, results: make([]refResult, len(cmds)),
		plans: make([]*livePlan, len(cmds)), rebase: make([]bool, len(cmds))}
	for i, c := range cmds {
		p.results[i].cmd = c
	}
	return p
}

// refuseAll refuses every ref for reason.
func (p *push) refuseAll(reason string) []refResult {
	for i := range p.results {
		p.results[i].reason = reason
	}
	return p.results
}

// receive runs one push against r and returns each ref's result and the
// updates that were applied. Its steps, in order: unpack, validate,
// recheck under the writer lock, store the pack, update the refs.
func (h *Host) receive(ctx context.Context, r *Repository, body io.Reader, cmds []command, caps capSet, out *pushOutput) ([]refResult, []RefUpdate) {
	p := newPush(r, cmds, out)
	q, err := h.unpack(ctx, r, body, cmds, out)
	if err != nil {
		return p.refuseAll("unpacker error"), nil
	}
	defer q.close()
	ov := newOverlay(r, q)

	h.validate(ctx, p, ov)

	// Under the writer lock: every ref must still be where the client
	// saw it (compare-and-swap), then the pack joins the repository and
	// the refs move.
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	h.recheck(ctx, p, ov)
	if caps.has("atomic") && p.failAtomic() {
		return p.results, nil
	}
	if err := h.storePack(p, q); err != nil {
		return p.refuseAll("cannot store objects"), nil
	}
	return p.results, h.updateRefs(p)
}

// unpack streams the push's pack into a quarantine (nil for a push that
// only deletes refs) and sets out.unpack; a pack that is refused is said
// on a remote: line too.
func (h *Host) unpack(ctx context.Context, r *Repository, body io.Reader, cmds []command, out *pushOutput) (*quarantine, error) {
	out.unpack = "unpack ok"
	needPack := false
	for _, c := range cmds {
		if !c.isDelete() {
			needPack = true
		}
	}
	if !needPack {
		return nil, nil
	}
	q, err := receivePack(ctx, r, body, h.opts.MaxRequestBytes)
	if err != nil {
		out.unpack = "unpack " + oneLine(err.Error())
		// Every refusal has a remote: line (git shows the unpack
		// status only as "remote unpack failed").
		out.say("error: the pack was not stored: %s", oneLine(err.Error()))
		return nil, err
	}
	h.opts.Logger.Debug("pack received", "repo", r.path, "pack", q.sum, "index_pack_peak_rss", q.indexRSS)
	return q, nil
}

// validate decides every ref against the old values the client sent,
// without the writer lock (validation may be slow; daemon commits go
// on). With two branches, a push to main is validated on its merge with
// live. Every refusal has a remote: line saying what and where.
func (h *Host) validate(ctx context.Context, p *push, ov *overlay) {
	vctx, cancel := context.WithTimeout(ctx, h.opts.ValidateTimeout)
	defer cancel()
	both := h.opts.Live && pushesBoth(p.cmds)
	memo := checkMemo{}
	for i, c := range p.cmds {
		said := len(p.out.messages)
		p.results[i].reason = h.validateRef(vctx, p, i, ov, both, memo)
		if p.results[i].reason != "" && len(p.out.messages) == said {
			p.out.say("error: %s refused: %s", c.Name.Short(), p.results[i].reason)
		}
	}
}

// validateRef decides the push's i-th ref: "" accepts it. both says the
// push updates main and live.
func (h *Host) validateRef(ctx context.Context, p *push, i int, ov *overlay, both bool, memo checkMemo) string {
	c := p.cmds[i]
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("not validated: validating this push took longer than %s; push fewer refs at once", h.opts.ValidateTimeout)
	case !h.opts.Live:
		return memo.check(ctx, h, ov, c, p.out)
	case both && (c.Name == MainRef || c.Name == LiveRef):
		return "push main and live separately"
	}
	reason, ff := h.livePolicy(ov, c)
	p.rebase[i] = c.Name == LiveRef && !ff
	switch {
	case reason != "":
		return reason
	case c.Name == MainRef:
		p.plans[i], reason = h.checkMain(ctx, p.r, ov, c, p.out)
		return reason
	}
	return memo.check(ctx, h, ov, c, p.out)
}

// pushesBoth reports whether a push updates both main and live.
func pushesBoth(cmds []command) bool {
	var main, live bool
	for _, c := range cmds {
		main = main || c.Name == MainRef
		live = live || c.Name == LiveRef
	}
	return main && live
}

// recheck compares every accepted ref with where the client saw it
// (compare-and-swap): another writer may have moved it since. A
// daemon's write on a live that moved is merged onto it when it can be;
// a push to main is merged again with a live that moved. Callers hold
// r.writeMu.
func (h *Host) recheck(ctx context.Context, p *push, ov *overlay) {
	r := p.r
	for i, c := range p.cmds {
		if p.results[i].reason != "" {
			continue
		}
		var cur plumbing.Hash
		err := r.locked(func(storer.EncodedObjectStorer) error {
			var err error
			cur, err = r.refValue(c.Name)
			return err
		})
		switch {
		case errors.Is(err, ErrBrokenRef) && c.Old.IsZero():
			// A damaged ref is replaced by a push that creates it.
			h.opts.Logger.Warn("push replaces a broken ref", "repo", r.path, "ref", c.Name, "err", err)
		case err != nil:
			p.results[i].reason = "cannot read ref"
			h.opts.Logger.Error("read ref", "repo", r.path, "ref", c.Name, "err", err)
		case h.opts.Live && c.Name == LiveRef && (cur != c.Old || p.rebase[i]):
			// Another writer moved live: a daemon's write is merged
			// onto it when re-applying it would give the same.
			p.plans[i], p.results[i].reason = h.rebaseLive(ctx, r, ov, c, cur, p.out)
		case cur != c.Old:
			// Someone (another push, the daemon) moved the ref after
			// this client looked at it.
			p.results[i].reason = "non-fast-forward"
		case p.plans[i] != nil && p.plans[i].old != r.liveValue():
			// An agent wrote to live since the merge was computed:
			// merge again (under the lock now, so nothing slips in).
			p.plans[i], p.results[i].reason = h.checkMain(ctx, r, ov, c, p.out)
		}
	}
}

// liveValue reads live (zero when missing or unreadable).
func (r *Repository) liveValue() plumbing.Hash {
	var h plumbing.Hash
	_ = r.locked(func(storer.EncodedObjectStorer) error {
		h, _ = r.refValue(LiveRef)
		return nil
	})
	return h
}

// failAtomic refuses every ref of the push when one is refused (the
// client asked for an atomic push) and reports whether it did.
func (p *push) failAtomic() bool {
	failed := false
	for _, res := range p.results {
		failed = failed || res.reason != ""
	}
	if !failed {
		return false
	}
	for i := range p.results {
		if p.results[i].reason == "" {
			p.results[i].reason = "atomic push failed"
		}
	}
	return true
}

// storePack moves the quarantined pack into the repository (synced)
// when a ref that names its objects was accepted: the pack joins before
// any ref names it. Callers hold r.writeMu.
func (h *Host) storePack(p *push, q *quarantine) error {
	accepted := false
	for _, res := range p.results {
		accepted = accepted || res.reason == "" && !res.cmd.isDelete()
	}
	if !accepted || q == nil {
		return nil
	}
	if err := q.migrate(p.r); err != nil {
		h.opts.Logger.Error("store pushed pack", "repo", p.r.path, "err", err)
		return err
	}
	return nil
}

// updateRefs moves every accepted ref, and live as the push's plans say,
// and returns what moved. Callers hold r.writeMu.
func (h *Host) updateRefs(p *push) []RefUpdate {
	var updates []RefUpdate
	_ = p.r.locked(func(storer.EncodedObjectStorer) error {
		for i := range p.results {
			if p.results[i].reason != "" {
				continue
			}
			var moved []RefUpdate
			moved, p.results[i].reason = h.updateRef(p, i)
			updates = append(updates, moved...)
		}
		return nil
	})
	return updates
}

// updateRef moves the push's i-th ref (and live, when its plan says so)
// and returns what moved and why the ref was refused ("" when it was
// not). Callers hold r.writeMu and the storage lock.
func (h *Host) updateRef(p *push, i int) ([]RefUpdate, string) {
	r, c, pl := p.r, p.cmds[i], p.plans[i]
	if pl != nil && pl.p != nil {
		// The merge's objects are durable before live names them.
		if err := r.st.writePending(pl.p); err != nil {
			h.opts.Logger.Error("store merge", "repo", r.path, "err", err)
			return nil, "cannot store the merge with live"
		}
	}
	if pl != nil && pl.rebased {
		if err := r.setRef(LiveRef, pl.old, pl.new); err != nil {
			return nil, "non-fast-forward"
		}
		if pl.new != c.New {
			// The pusher (a daemon) answers its write with the commit
			// live is now: say which (see PushCAS).
			p.out.say("quire: merged onto live, which had moved: %s %s", liveIsNow, pl.new)
		}
		return []RefUpdate{{Name: LiveRef, Old: pl.old, New: pl.new}}, ""
	}
	if err := r.setRef(c.Name, c.Old, c.New); err != nil {
		if errors.Is(err, ErrStale) {
			return nil, "non-fast-forward"
		}
		h.opts.Logger.Error("update ref", "repo", r.path, "ref", c.Name, "err", err)
		return nil, "failed to update ref"
	}
	moved := []RefUpdate{{Name: c.Name, Old: c.Old, New: c.New}}
	if pl == nil || pl.new == pl.old {
		return moved, ""
	}
	if err := r.setRef(LiveRef, pl.old, pl.new); err != nil {
		// Only a git outside this process can move live under the
		// writer lock; main stays accepted and the next push or restart
		// merges it.
		h.opts.Logger.Error("update live", "repo", r.path, "err", err)
		p.out.say("quire: main is stored but live was not updated: %v", err)
		return moved, ""
	}
	return append(moved, RefUpdate{Name: LiveRef, Old: pl.old, New: pl.new}), ""
}

// forget removes a repository that a refused push to a new name created,
// unless something (a concurrent push) has put a ref in it meanwhile.
func (h *Host) forget(name string, r *Repository) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	empty := true
	_ = r.locked(func(storer.EncodedObjectStorer) error {
		iter, err := r.repo.Storer.IterReferences()
		if err != nil {
			empty = false
			return err
		}
		return iter.ForEach(func(ref *plumbing.Reference) error {
			if ref.Type() == plumbing.HashReference {
				empty = false
			}
			return nil
		})
	})
	if !empty {
		return
	}
	delete(h.repos, name)
	_ = os.RemoveAll(filepath.Join(h.dir, name+".git"))
}

// logPush logs a push and, for the operator a person asks about a
// refused push, why each refused ref was refused.
func (h *Host) logPush(name, user string, start time.Time, results []refResult, updates []RefUpdate) {
	h.opts.Logger.Info("push", "repo", name, "user", user, "refs", len(results), "accepted", len(updates), "took", time.Since(start))
	for _, res := range results {
		if res.reason != "" {
			h.opts.Logger.Warn("push refused", "repo", name, "user", user, "ref", res.cmd.Name.String(), "reason", res.reason)
		}
	}
}

// reportPush ends the response: a remote: line naming each ref's new
// commit, the after-push hook's report (e.Refs are the updates) and the
// status report, inside side-band channels when the client asked for
// them.
func (h *Host) reportPush(ctx context.Context, w http.ResponseWriter, out *pushOutput, results []refResult, e Event) {
	for _, u := range e.Refs {
		// Name the commit, so a client cut off before the status report
		// can find what was stored.
		if u.New.IsZero() {
			out.say("quire: deleted %s (was %s)", u.Name, u.Old)
		} else {
			out.say("quire: %s is at %s", u.Name, u.New)
		}
	}
	report := statusReport(out.unpack, results)
	if !out.sideband {
		_, _ = w.Write(report)
		// A client without side-band sees no remote: lines, but what
		// it pushed is deployed all the same.
		if len(e.Refs) > 0 && h.opts.AfterPush != nil {
			h.opts.AfterPush(ctx, e, io.Discard)
		}
		return
	}
	if len(out.messages) > 0 {
		_, _ = writeSideband(w, bandProgress, out.messages)
	}
	// The deploy report goes before the status report: a client may
	// stop reading at the status report's end (go-git does; git push
	// reads on to the final flush and shows both either way).
	if len(e.Refs) > 0 && h.opts.AfterPush != nil {
		h.opts.AfterPush(ctx, e, &remoteWriter{w: w})
	}
	_, _ = writeSideband(w, bandData, report)
	_, _ = w.Write([]byte("0000"))
}

// statusReport is the report-status answer: the unpack status, then
// "ok <ref>" or "ng <ref> <reason>" per ref, then a flush-pkt.
func statusReport(unpack string, results []refResult) []byte {
	var report []byte
	report = appendPkt(report, unpack+"\n")
	for _, res := range results {
		if res.reason == "" {
			report = appendPkt(report, "ok "+res.cmd.Name.String()+"\n")
		} else {
			report = appendPkt(report, "ng "+res.cmd.Name.String()+" "+res.reason+"\n")
		}
	}
	return append(report, "0000"...)
}

// Side-band channels.
const (
	bandData     = 1
	bandProgress = 2
)

// maxSidebandData is the payload of one side-band-64k packet: a pkt-line
// is at most 65520 bytes with its 4-byte length, and one byte names the
// band.
const maxSidebandData = 65520 - 4 - 1

// writeSideband writes p on band in packets of at most maxSidebandData.
// It is hand-written because go-git's sideband.Muxer fills a packet with
// 65,519 data bytes, more than a pkt-line holds, and fails any write over
// 64 KiB (go-git v5.19: "payload is too long").
func writeSideband(w io.Writer, band byte, p []byte) (int, error) {
	n := 0
	buf := make([]byte, 0, 5+min(len(p), maxSidebandData))
	for len(p) > 0 {
		chunk := p[:min(len(p), maxSidebandData)]
		buf = fmt.Appendf(buf[:0], "%04x", len(chunk)+5)
		buf = append(buf, band)
		buf = append(buf, chunk...)
		if _, err := w.Write(buf); err != nil {
			return n, err
		}
		n += len(chunk)
		p = p[len(chunk):]
	}
	return n, nil
}

// remoteWriter sends what the after-push hook writes as remote: lines.
type remoteWriter struct{ w io.Writer }

func (rw *remoteWriter) Write(p []byte) (int, error) {
	return writeSideband(rw.w, bandProgress, p)
}
