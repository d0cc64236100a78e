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
	_, existed := h.existing(name)
	if !existed && !h.opts.AllowCreate {
		h.notFound(w, name, true)
		return
	}
	if !h.acquirePush(ctx) {
		http.Error(w, fmt.Sprintf("more than %d pushes at once; retry in a moment", cap(h.pushes)), http.StatusServiceUnavailable)
		return
	}
	defer func() { <-h.pushes }()
	r, err := h.Create(name)
	if err != nil {
		http.Error(w, "cannot open repository", http.StatusInternalServerError)
		return
	}

	out := &pushOutput{sideband: caps.has("side-band-64k"), url: repoURL(req, name), repo: name}
	start := time.Now()
	results, updates := h.receive(ctx, r, body, cmds, caps, out)
	if len(updates) == 0 && !existed {
		h.forget(name, r)
	}
	h.recordPush(name, user, start, out.unpack, results)
	h.opts.Logger.Info("push", "repo", name, "user", user, "refs", len(cmds), "accepted", len(updates), "took", time.Since(start))
	for _, res := range results {
		if res.reason != "" {
			// Why, for the operator a person asks about a refused push.
			h.opts.Logger.Warn("push refused", "repo", name, "user", user, "ref", res.cmd.Name.String(), "reason", res.reason)
		}
	}
	for _, u := range updates {
		// Name the commit, so a client cut off before the status report
		// can find what was stored.
		if u.New.IsZero() {
			out.say("quire: deleted %s (was %s)", u.Name, u.Old)
		} else {
			out.say("quire: %s is at %s", u.Name, u.New)
		}
	}

	// Report status (inside side-band channel 1 when asked for).
	var report []byte
	report = appendPkt(report, out.unpack+"\n")
	for _, res := range results {
		if res.reason == "" {
			report = appendPkt(report, "ok "+res.cmd.Name.String()+"\n")
		} else {
			report = appendPkt(report, "ng "+res.cmd.Name.String()+" "+res.reason+"\n")
		}
	}
	report = append(report, "0000"...)
	if !out.sideband {
		_, _ = w.Write(report)
		// A client without side-band sees no remote: lines, but what
		// it pushed is deployed all the same.
		if len(updates) > 0 && h.opts.AfterPush != nil {
			h.opts.AfterPush(ctx, Event{Source: SourcePush, Name: name, Repository: r, User: user, Refs: updates}, io.Discard)
		}
		return
	}
	if len(out.messages) > 0 {
		_, _ = writeSideband(w, bandProgress, out.messages)
	}
	// The deploy report goes before the status report: a client may
	// stop reading at the status report's end (go-git does; git push
	// reads on to the final flush and shows both either way).
	if len(updates) > 0 && h.opts.AfterPush != nil {
		h.opts.AfterPush(ctx, Event{Source: SourcePush, Name: name, Repository: r, User: user, Refs: updates}, &remoteWriter{w: w})
	}
	_, _ = writeSideband(w, bandData, report)
	_, _ = w.Write([]byte("0000"))
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

// receive runs one push against r and returns each ref's result and the
// updates that were applied.
func (h *Host) receive(ctx context.Context, r *Repository, body io.Reader, cmds []command, caps capSet, out *pushOutput) ([]refResult, []RefUpdate) {
	results := make([]refResult, len(cmds))
	for i, c := range cmds {
		results[i].cmd = c
	}
	refuseAll := func(reason string) ([]refResult, []RefUpdate) {
		for i := range results {
			results[i].reason = reason
		}
		return results, nil
	}

	out.unpack = "unpack ok"
	needPack := false
	for _, c := range cmds {
		if !c.isDelete() {
			needPack = true
		}
	}
	var q *quarantine
	if needPack {
		var err error
		q, err = receivePack(ctx, r, body, h.opts.MaxRequestBytes)
		if err != nil {
			out.unpack = "unpack " + oneLine(err.Error())
			// Every refusal has a remote: line (git shows the unpack
			// status only as "remote unpack failed").
			out.say("error: the pack was not stored: %s", oneLine(err.Error()))
			return refuseAll("unpacker error")
		}
		defer q.close()
		h.opts.Logger.Debug("pack received", "repo", r.path, "pack", q.sum, "index_pack_peak_rss", q.indexRSS)
	}
	ov := newOverlay(r, q)

	// Validate against the old values the client sent, without the
	// writer lock (validation may be slow; daemon commits go on). With
	// two branches, a push to main is validated on its merge with live.
	plans := make([]*livePlan, len(cmds))
	rebase := make([]bool, len(cmds)) // a daemon's write on an older live
	both := h.opts.Live && pushesBoth(cmds)
	vctx, cancel := context.WithTimeout(ctx, h.opts.ValidateTimeout)
	defer cancel()
	memo := checkMemo{}
	for i, c := range cmds {
		said := len(out.messages)
		switch {
		case vctx.Err() != nil:
			results[i].reason = fmt.Sprintf("not validated: validating this push took longer than %s; push fewer refs at once", h.opts.ValidateTimeout)
		case h.opts.Live && both && (c.Name == MainRef || c.Name == LiveRef):
			results[i].reason = "push main and live separately"
		case h.opts.Live:
			reason, ff := h.livePolicy(ov, c)
			rebase[i] = c.Name == LiveRef && !ff
			switch {
			case reason != "":
				results[i].reason = reason
			case c.Name == MainRef:
				plans[i], results[i].reason = h.checkMain(vctx, r, ov, c, out)
			default:
				results[i].reason = memo.check(vctx, h, ov, c, out)
			}
		default:
			results[i].reason = memo.check(vctx, h, ov, c, out)
		}
		if results[i].reason != "" && len(out.messages) == said {
			// Every refusal has a remote: line saying what and where.
			out.say("error: %s refused: %s", c.Name.Short(), results[i].reason)
		}
	}

	// Under the writer lock: every ref must still be where the client
	// saw it (compare-and-swap), then the pack joins the repository and
	// the refs move.
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	for i, c := range cmds {
		if results[i].reason != "" {
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
			results[i].reason = "cannot read ref"
			h.opts.Logger.Error("read ref", "repo", r.path, "ref", c.Name, "err", err)
		case h.opts.Live && c.Name == LiveRef && (cur != c.Old || rebase[i]):
			// Another writer moved live: a daemon's write is merged
			// onto it when re-applying it would give the same.
			plans[i], results[i].reason = h.rebaseLive(ctx, r, ov, c, cur, out)
		case cur != c.Old:
			// Someone (another push, the daemon) moved the ref after
			// this client looked at it.
			results[i].reason = "non-fast-forward"
		case plans[i] != nil && plans[i].old != r.liveValue():
			// An agent wrote to live since the merge was computed:
			// merge again (under the lock now, so nothing slips in).
			plans[i], results[i].reason = h.checkMain(ctx, r, ov, c, out)
		}
	}
	if caps.has("atomic") {
		failed := false
		for _, res := range results {
			failed = failed || res.reason != ""
		}
		if failed {
			for i := range results {
				if results[i].reason == "" {
					results[i].reason = "atomic push failed"
				}
			}
			return results, nil
		}
	}

	// The pack joins the repository (synced) before any ref names it.
	accepted := false
	for _, res := range results {
		accepted = accepted || res.reason == "" && !res.cmd.isDelete()
	}
	if accepted && q != nil {
		if err := q.migrate(r); err != nil {
			h.opts.Logger.Error("store pushed pack", "repo", r.path, "err", err)
			return refuseAll("cannot store objects")
		}
	}
	var updates []RefUpdate
	_ = r.locked(func(storer.EncodedObjectStorer) error {
		for i, res := range results {
			if res.reason != "" {
				continue
			}
			c := res.cmd
			pl := plans[i]
			if pl != nil && pl.p != nil {
				// The merge's objects are durable before live names them.
				if err := r.st.writePending(pl.p); err != nil {
					results[i].reason = "cannot store the merge with live"
					h.opts.Logger.Error("store merge", "repo", r.path, "err", err)
					continue
				}
			}
			if pl != nil && pl.rebased {
				if err := r.setRef(LiveRef, pl.old, pl.new); err != nil {
					results[i].reason = "non-fast-forward"
					continue
				}
				if pl.new != c.New {
					// The pusher (a daemon) answers its write with the
					// commit live is now: say which (see PushCAS).
					out.say("quire: merged onto live, which had moved: %s %s", liveIsNow, pl.new)
				}
				updates = append(updates, RefUpdate{Name: LiveRef, Old: pl.old, New: pl.new})
				continue
			}
			if err := r.setRef(c.Name, c.Old, c.New); err != nil {
				if errors.Is(err, ErrStale) {
					results[i].reason = "non-fast-forward"
				} else {
					results[i].reason = "failed to update ref"
					h.opts.Logger.Error("update ref", "repo", r.path, "ref", c.Name, "err", err)
				}
				continue
			}
			updates = append(updates, RefUpdate{Name: c.Name, Old: c.Old, New: c.New})
			if pl != nil && pl.new != pl.old {
				if err := r.setRef(LiveRef, pl.old, pl.new); err != nil {
					// Only a git outside this process can move live
					// under the writer lock; main stays accepted and the
					// next push or restart merges it.
					h.opts.Logger.Error("update live", "repo", r.path, "err", err)
					out.say("quire: main is stored but live was not updated: %v", err)
					continue
				}
				updates = append(updates, RefUpdate{Name: LiveRef, Old: pl.old, New: pl.new})
			}
		}
		return nil
	})
	return results, updates
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
