package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// advertisement lists r's refs in the v0 smart protocol format with caps
// on the first line (r nil: an empty repository), for receive-pack.
// Broken refs are left out (and logged): a push can replace them.
func advertisement(r *Repository, caps string, log *slog.Logger) ([]byte, error) {
	var refs []*plumbing.Reference
	if r != nil {
		err := r.locked(func(storer.EncodedObjectStorer) error {
			var broken []error
			var err error
			refs, broken, err = r.st.refs.list()
			for _, b := range broken {
				log.Error("broken ref", "repo", r.path, "err", b)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	refs = slices.DeleteFunc(refs, func(ref *plumbing.Reference) bool { return ref.Type() != plumbing.HashReference })
	var out []byte
	if len(refs) == 0 {
		out = appendPkt(out, plumbing.ZeroHash.String()+" capabilities^{}\x00"+caps+"\n")
	}
	for i, ref := range refs {
		s := ref.Hash().String() + " " + ref.Name().String()
		if i == 0 {
			s += "\x00" + caps
		}
		out = appendPkt(out, s+"\n")
	}
	return append(out, "0000"...), nil
}

// recentLiveHaves is how many of live's recent values (its first-parent
// chain below the tip) a receive-pack advertisement names as ".have".
const recentLiveHaves = 64

// withHaves adds a ".have" line for each of haves to a receive-pack
// advertisement (before its flush): commits the repository has that no
// ref names. A git client leaves out of its pack whatever they reach.
// A daemon writing to live pushes a commit made on live as it last
// fetched it, which live has moved past since: without these lines its
// git would send every commit on live since main, a pack (and a check of
// every commit in it) that grows with live's history.
func withHaves(adv []byte, haves []plumbing.Hash) []byte {
	if len(haves) == 0 || !bytes.HasSuffix(adv, []byte("0000")) {
		return adv
	}
	out := adv[: len(adv)-4 : len(adv)-4]
	for _, h := range haves {
		out = appendPkt(out, h.String()+" .have\n")
	}
	return append(out, "0000"...)
}

// recentLive returns up to n commits of live's first-parent chain below
// its tip (the values live had before its last n moves); nil when there
// is no live.
func (r *Repository) recentLive(n int) []plumbing.Hash {
	var out []plumbing.Hash
	_ = r.locked(func(st storer.EncodedObjectStorer) error {
		h, err := r.refValue(LiveRef)
		if err != nil || h.IsZero() {
			return nil
		}
		for len(out) < n {
			c, err := object.GetCommit(st, h)
			if err != nil || len(c.ParentHashes) == 0 {
				return nil
			}
			h = c.ParentHashes[0]
			out = append(out, h)
		}
		return nil
	})
	return out
}

// The fetch side is git's own upload-pack (`git upload-pack
// --stateless-rpc`): it streams the pack as it builds it, supports
// shallow clones, serves only objects reachable from the refs, and reads
// the repository without any of this package's locks, so a clone never
// stalls a commit.
//
// It always speaks protocol v0: git's v2 upload-pack hands out any
// object by id, reachable or not (a commit dropped from every ref would
// stay fetchable). A client asking for v2 (Git-Protocol: version=2)
// falls back to v0 by itself.

// uploadPack runs git upload-pack on r with in as its input and out as its
// output; advertise lists the refs instead of answering a request.
func (h *Host) uploadPack(ctx context.Context, r *Repository, req *http.Request, in io.Reader, out io.Writer, advertise bool) error {
	args := []string{"upload-pack", "--strict", "--stateless-rpc"}
	if advertise {
		args = append(args, "--advertise-refs")
	}
	args = append(args, r.st.refs.commonDir)
	cmd := backgroundGit(ctx, args...)
	cmd.Env = gitEnv()
	cmd.Stdin = in
	cmd.Stdout = out
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("git upload-pack: %w: %s", err, oneLine(msg))
		}
		return fmt.Errorf("git upload-pack: %w", err)
	}
	return nil
}

// backgroundGit is a git command that runs at a lower CPU priority (nice
// 10, when nice(1) is there), so that serving reads and repacking yield
// the CPU to the daemon's commits and pushes.
func backgroundGit(ctx context.Context, args ...string) *exec.Cmd {
	if nice, err := exec.LookPath("nice"); err == nil {
		return exec.CommandContext(ctx, nice, append([]string{"-n", "10", "git"}, args...)...)
	}
	return exec.CommandContext(ctx, "git", args...)
}

type limitedWriter struct {
	w *strings.Builder
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (h *Host) serveUploadRefs(w http.ResponseWriter, req *http.Request, r *Repository) {
	w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
	var pre []byte
	pre = appendPkt(pre, "# service=git-upload-pack\n")
	pre = append(pre, "0000"...)
	if _, err := w.Write(pre); err != nil {
		return
	}
	if err := h.uploadPack(req.Context(), r, req, nil, w, true); err != nil {
		h.opts.Logger.Error("advertise refs", "repo", r.path, "err", err)
	}
}

// serveUploadPack answers one request of a fetch (negotiation, or the
// pack once the client is done).
func (h *Host) serveUploadPack(ctx context.Context, w http.ResponseWriter, req *http.Request, name string) {
	r, err := h.Repository(name)
	if errors.Is(err, ErrNoRepository) {
		h.notFound(w, name, false)
		return
	}
	if err != nil {
		h.opts.Logger.Error("open repository", "repo", name, "err", err)
		http.Error(w, "cannot open repository", http.StatusInternalServerError)
		return
	}
	body, err := h.body(w, req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	if err := h.uploadPack(ctx, r, req, body, w, false); err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		h.opts.Logger.Error("upload-pack", "repo", name, "err", err)
	}
}
