package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// refResult is the outcome for one pushed ref: "" is ok, otherwise the
// reason it was refused.
type refResult struct {
	cmd    command
	reason string
}

// serveReceivePack handles a push: parse the pack into an overlay,
// validate every updated ref's new tree, and only then write the objects
// and move the refs with compare-and-swap.
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
	r, err := h.Create(name)
	if err != nil {
		http.Error(w, "cannot open repository", http.StatusInternalServerError)
		return
	}

	out := &pushOutput{sideband: caps.has("side-band-64k")}
	results, updates := h.receive(ctx, r, body, cmds, caps, out)
	if len(updates) == 0 && !existed {
		h.forget(name, r)
	}
	h.opts.Logger.Info("push", "repo", name, "user", user, "refs", len(cmds), "accepted", len(updates))

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
		return
	}
	mux := sideband.NewMuxer(sideband.Sideband64k, w)
	if len(out.messages) > 0 {
		_, _ = mux.WriteChannel(sideband.ProgressMessage, out.messages)
	}
	_, _ = mux.Write(report)
	if len(updates) > 0 && h.opts.AfterPush != nil {
		h.opts.AfterPush(ctx, Event{Source: SourcePush, Name: name, Repository: r, User: user, Refs: updates}, &remoteWriter{mux: mux})
	}
	_, _ = w.Write([]byte("0000"))
}

// existing returns the open repository for name, if it already exists.
func (h *Host) existing(name string) (*Repository, bool) {
	r, err := h.Repository(name)
	return r, err == nil
}

// pushOutput collects what a push reports.
type pushOutput struct {
	sideband bool
	unpack   string // "unpack ok" or "unpack <error>"
	messages []byte // remote: lines sent before the status report
}

func (o *pushOutput) say(format string, args ...any) {
	o.messages = fmt.Appendf(o.messages, format+"\n", args...)
}

// remoteWriter sends what the after-push hook writes as remote: lines.
type remoteWriter struct{ mux *sideband.Muxer }

func (rw *remoteWriter) Write(p []byte) (int, error) {
	return rw.mux.WriteChannel(sideband.ProgressMessage, p)
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

	ov := newOverlay(r, h.opts.MaxRequestBytes)
	out.unpack = "unpack ok"
	needPack := false
	for _, c := range cmds {
		if !c.isDelete() {
			needPack = true
		}
	}
	if needPack {
		if err := ov.readPack(body); err != nil {
			out.unpack = "unpack " + oneLine(err.Error())
			return refuseAll("unpacker error")
		}
	}

	// Validate against the old values the client sent, without the
	// writer lock (validation may be slow; daemon commits go on).
	for i, c := range cmds {
		if err := ctx.Err(); err != nil {
			results[i].reason = "timed out"
			continue
		}
		results[i].reason = h.check(ctx, ov, c, out)
	}

	// Under the writer lock: every ref must still be where the client
	// saw it (compare-and-swap), then objects are written and refs move.
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
		case err != nil:
			results[i].reason = "cannot read ref"
		case cur != c.Old:
			// Someone (another push, the daemon) moved the ref after
			// this client looked at it.
			results[i].reason = "non-fast-forward"
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

	// Write the objects the accepted refs need, then move the refs.
	var tips []plumbing.Hash
	for _, res := range results {
		if res.reason == "" && !res.cmd.isDelete() {
			tips = append(tips, res.cmd.New)
		}
	}
	if len(tips) > 0 {
		if err := ov.write(tips); err != nil {
			h.opts.Logger.Error("write pushed objects", "repo", r.path, "err", err)
			return refuseAll("cannot store objects")
		}
	}
	var updates []RefUpdate
	err := r.locked(func(storer.EncodedObjectStorer) error {
		for i, res := range results {
			if res.reason != "" {
				continue
			}
			c := res.cmd
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
		}
		return nil
	})
	if err != nil {
		return refuseAll("failed to update ref")
	}
	return results, updates
}

// check validates one command against the old value the client sent:
// "" accepts it.
func (h *Host) check(ctx context.Context, ov *overlay, c command, out *pushOutput) string {
	cur := c.Old
	if c.isDelete() {
		return ""
	}
	obj, err := ov.EncodedObject(plumbing.AnyObject, c.New)
	if err != nil {
		return "missing necessary objects"
	}
	commit := c.New
	if obj.Type() == plumbing.TagObject {
		tag, err := object.DecodeTag(ov, obj)
		if err != nil {
			return "bad tag object"
		}
		if tag.TargetType != plumbing.CommitObject {
			return "" // a tag of a tree or blob: nothing to deploy
		}
		commit = tag.Target
	} else if obj.Type() != plumbing.CommitObject {
		if strings.HasPrefix(c.Name.String(), "refs/heads/") {
			return "not a commit"
		}
		return ""
	}
	var old plumbing.Hash
	if !cur.IsZero() {
		old = cur
		if o, err := ov.EncodedObject(plumbing.AnyObject, old); err != nil || o.Type() != plumbing.CommitObject {
			old = plumbing.ZeroHash
		}
	}
	if err := ov.connected(c.New, old); err != nil {
		return "missing necessary objects"
	}
	tree, err := ov.snapshot(commit)
	if err != nil {
		return "bad commit"
	}
	changed, err := changes(ctx, ov, old, commit)
	if err != nil {
		return "cannot compare trees"
	}
	problems := h.opts.Validator.Validate(ctx, RefUpdate{Name: c.Name, Old: c.Old, New: c.New}, tree, changed)
	if len(problems) == 0 {
		return ""
	}
	out.say("error: %s refused:", c.Name.Short())
	for _, p := range problems {
		out.say("error:   %s", oneLine(p.String()))
	}
	reason := oneLine(problems[0].String())
	if len(problems) > 1 {
		reason += fmt.Sprintf(" (and %d more)", len(problems)-1)
	}
	return reason
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// connected checks that every object reachable from h is either in the
// push or already in the repository. old (zero when none) is the ref's
// previous commit: an entry of a pushed tree that has the same hash at the
// same place in old's tree is known to exist without a lookup, which keeps
// a one-file push from probing every unchanged file.
func (o *overlay) connected(h, old plumbing.Hash) error {
	return o.walk([]plumbing.Hash{h}, old, nil, true)
}

// walkItem is an object to visit and the hash of the tree at the same
// place in the old commit (zero when unknown).
type walkItem struct {
	h, old plumbing.Hash
}

// walk visits the pushed objects reachable from tips. With check, objects
// outside the push must exist in the repository (their closure is then
// complete).
func (o *overlay) walk(tips []plumbing.Hash, oldCommit plumbing.Hash, visit func(plumbing.Hash), check bool) error {
	var oldRoot plumbing.Hash
	if !oldCommit.IsZero() {
		if c, err := object.GetCommit(o, oldCommit); err == nil {
			oldRoot = c.TreeHash
		}
	}
	seen := map[plumbing.Hash]bool{}
	var stack []walkItem
	for _, t := range tips {
		stack = append(stack, walkItem{h: t})
	}
	var boundary []plumbing.Hash
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[it.h] {
			continue
		}
		seen[it.h] = true
		obj, ok := o.objects[it.h]
		if !ok {
			boundary = append(boundary, it.h)
			continue
		}
		if visit != nil {
			visit(it.h)
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			c, err := object.DecodeCommit(o, obj)
			if err != nil {
				return err
			}
			stack = append(stack, walkItem{h: c.TreeHash, old: oldRoot})
			for _, p := range c.ParentHashes {
				stack = append(stack, walkItem{h: p})
			}
		case plumbing.TreeObject:
			t, err := object.DecodeTree(o, obj)
			if err != nil {
				return err
			}
			var oldEntries map[string]plumbing.Hash
			if !it.old.IsZero() {
				if ot, err := object.GetTree(o, it.old); err == nil {
					oldEntries = make(map[string]plumbing.Hash, len(ot.Entries))
					for _, e := range ot.Entries {
						oldEntries[e.Name] = e.Hash
					}
				}
			}
			for _, e := range t.Entries {
				if e.Mode == filemode.Submodule {
					continue
				}
				if _, pushed := o.objects[e.Hash]; !pushed && oldEntries[e.Name] == e.Hash {
					continue // unchanged: exists in the repository
				}
				stack = append(stack, walkItem{h: e.Hash, old: oldEntries[e.Name]})
			}
		case plumbing.TagObject:
			t, err := object.DecodeTag(o, obj)
			if err != nil {
				return err
			}
			stack = append(stack, walkItem{h: t.Target})
		}
	}
	if !check {
		return nil
	}
	return o.repo.locked(func(st storer.EncodedObjectStorer) error {
		for _, h := range boundary {
			if err := st.HasEncodedObject(h); err != nil {
				return fmt.Errorf("object %s: %w", h, err)
			}
		}
		return nil
	})
}

// write stores the pushed objects reachable from tips in the repository
// (connectivity was checked before).
func (o *overlay) write(tips []plumbing.Hash) error {
	var hs []plumbing.Hash
	if err := o.walk(tips, plumbing.ZeroHash, func(h plumbing.Hash) { hs = append(hs, h) }, false); err != nil {
		return err
	}
	return o.repo.locked(func(st storer.EncodedObjectStorer) error {
		var missing []plumbing.Hash
		for _, h := range hs {
			if st.HasEncodedObject(h) != nil {
				missing = append(missing, h)
			}
		}
		if pw, ok := st.(storer.PackfileWriter); ok && len(missing) >= packThreshold {
			return o.writePack(pw, missing)
		}
		for _, h := range missing {
			if _, err := st.SetEncodedObject(o.objects[h]); err != nil {
				return fmt.Errorf("write object %s: %w", h, err)
			}
		}
		return nil
	})
}

// packThreshold is the number of new objects from which a push is stored
// as one pack file instead of loose objects.
const packThreshold = 100

// writePack stores objects hs of the overlay as one new, complete pack.
func (o *overlay) writePack(pw storer.PackfileWriter, hs []plumbing.Hash) (err error) {
	w, err := pw.PackfileWriter()
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	defer func() {
		if cerr := w.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write pack: %w", cerr)
		}
	}()
	// No delta search: the objects are stored as sent, compressed.
	if _, err := packfile.NewEncoder(w, o, false).Encode(hs, 0); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	return nil
}
