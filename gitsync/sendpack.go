package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// The native send-pack: a daemon's write to live on a quire host (one
// that advertises quire-live, see PushCAS) goes over smart HTTP from this
// process, two requests and no git processes. git push takes three
// processes (git, git-remote-http, pack-objects) and the same two
// requests; on loopback the processes were half of a push's time.
//
// It handles only what it can prove: a commit whose parents the remote
// has (advertised as refs or .have lines, acknowledged by an earlier
// push, or their ancestors this repository can see). The pack is the
// commit and the trees and blobs that differ from its parents' trees.
// Anything else, and any failure before the remote could have applied
// the push (an HTTP 401 or 403 included), is git push's (errUseCLI).
// Once the pack is sent only the remote's report decides: a push that
// gets none is ErrPushOutcomeUnknown, never sent again here.

// errUseCLI says the native send-pack did not push and the remote applied
// nothing: git push must.
var errUseCLI = errors.New("push with git")

// ErrPushOutcomeUnknown is a push that was sent but whose report never
// came back (the connection broke, the answer was cut or garbled): the
// remote may hold the commit or not. Before the write is applied again,
// fetch and look for the pushed commit in the remote's ref (IsAncestor):
// a write that landed must not be applied twice.
var ErrPushOutcomeUnknown = errors.New("the push's outcome is unknown")

// ErrPushNotSent is a push that certainly did not reach the remote (the
// connection could not be made, or its time was up before it started):
// nothing was applied.
var ErrPushNotSent = errors.New("the push was not sent")

// Bounds of the native send-pack.
const (
	// advertTimeout bounds the ref advertisement's request.
	advertTimeout = 10 * time.Second
	// sendPackTimeout bounds the push's request when ctx has no deadline.
	sendPackTimeout = 2 * time.Minute
	// maxAdvertBytes bounds a ref advertisement (about 50,000 refs).
	maxAdvertBytes = 4 << 20
	// maxResultBytes bounds a push's answer: the report, remote
	// messages and what the host's after-push hook writes.
	maxResultBytes = 4 << 20
	// maxReportBytes bounds the report-status part of the answer.
	maxReportBytes = 1 << 20
	// maxMessageBytes is how much of the remote's messages is kept (the
	// last bytes before the report).
	maxMessageBytes = 64 << 10
	// maxSendPackBytes is the largest pack sent natively; a larger one
	// goes with git push (which can stream and compress).
	maxSendPackBytes = 64 << 20
	// maxProveCommits bounds the walk that proves the remote has a parent
	// from commits it advertised.
	maxProveCommits = 256
	// ackedPerRemote is how many acknowledged commits are kept per URL.
	ackedPerRemote = 32
)

// sendPackAgent is the native send-pack's User-Agent (decidesLive's
// question is "git/quire").
const sendPackAgent = "git/quire-send-pack"

// sendPackState is a Repository's native send-pack bookkeeping.
type sendPackState struct {
	// native and cli count PushCAS's pushes by the path they took.
	native, cli atomic.Int64
	// gitOnly turns the native send-pack off (tests, benchmarks).
	gitOnly atomic.Bool
	// acked remembers per URL the commits the remote acknowledged
	// (*ackedCommits): what the next write's parent usually is, when the
	// host merged the last one onto a live that had moved.
	acked sync.Map
	// lastFallback is why the native send-pack last left a push to git.
	mu           sync.Mutex
	lastFallback error
	// helperCreds remembers per URL the Remote with the credential git's
	// credential helpers gave for a remote that has none of its own
	// (see helperRemote).
	helperCreds sync.Map
}

// ackedCommits is a small ring of commits one remote acknowledged.
type ackedCommits struct {
	mu     sync.Mutex
	hashes [ackedPerRemote]plumbing.Hash
	next   int
}

func (s *sendPackState) remember(rawURL string, hs ...plumbing.Hash) {
	v, _ := s.acked.LoadOrStore(rawURL, &ackedCommits{})
	a := v.(*ackedCommits)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, h := range hs {
		if h.IsZero() || slices.Contains(a.hashes[:], h) {
			continue
		}
		a.hashes[a.next] = h
		a.next = (a.next + 1) % ackedPerRemote
	}
}

func (s *sendPackState) remembered(rawURL string) []plumbing.Hash {
	v, ok := s.acked.Load(rawURL)
	if !ok {
		return nil
	}
	a := v.(*ackedCommits)
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(a.hashes[:]), plumbing.Hash.IsZero)
}

func (s *sendPackState) fellBack(err error) {
	s.mu.Lock()
	s.lastFallback = err
	s.mu.Unlock()
}

// advertisedRefs is a receive-pack ref advertisement.
type advertisedRefs struct {
	refs  map[plumbing.ReferenceName]plumbing.Hash
	haves []plumbing.Hash
	caps  capSet
}

// known is the set of commits the advertisement names (refs and .haves).
func (a *advertisedRefs) known() map[plumbing.Hash]bool {
	out := make(map[plumbing.Hash]bool, len(a.refs)+len(a.haves))
	for _, h := range a.refs {
		out[h] = true
	}
	for _, h := range a.haves {
		out[h] = true
	}
	return out
}

// sendLive pushes new to live of the quire host remote over smart
// HTTP, with live's current value (from the advertisement) as the old
// value: the host decides a write made on an older live itself, as with
// git push --force. It returns what PushCAS returns; errUseCLI (wrapped)
// when git push must do it, nothing having been applied.
func (r *Repository) sendLive(ctx context.Context, remote Remote, new plumbing.Hash) (plumbing.Hash, error) {
	rawURL := remote.target() // the key of what is remembered per remote
	client, base, auth, ok := httpRemote(remote, sendPackAgent)
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("%w: not an http(s) remote", errUseCLI)
	}
	adv, err := fetchAdvertisement(ctx, client, base, auth)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: %w", errUseCLI, err)
	}
	if !adv.caps.has(liveCap) {
		// No longer a host that decides live: the lease is git push's.
		r.liveHosts.Store(rawURL, false)
		return plumbing.ZeroHash, fmt.Errorf("%w: the remote no longer advertises %s", errUseCLI, liveCap)
	}
	if !adv.caps.has("report-status") || !adv.caps.has("side-band-64k") {
		return plumbing.ZeroHash, fmt.Errorf("%w: the remote does not offer report-status and side-band-64k", errUseCLI)
	}
	old, ok := adv.refs[LiveRef]
	if !ok || old.IsZero() {
		return plumbing.ZeroHash, fmt.Errorf("%w: the remote has no live", errUseCLI)
	}
	if old == new {
		return new, nil // git push: "Everything up-to-date"
	}
	known := adv.known()
	for _, h := range r.sp.remembered(rawURL) {
		known[h] = true
	}
	pack, parents, err := r.sendPackFor(new, known)
	if err != nil {
		return plumbing.ZeroHash, err
	}

	res, err := r.postLive(ctx, client, base, auth, rawURL, old, new, pack)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return r.liveOutcome(rawURL, base, res, old, new, parents)
}

// postLive sends the command that moves live from old to new, with pack,
// to the host at base and reads the host's report.
func (r *Repository) postLive(ctx context.Context, client *http.Client, base string, auth func(*http.Request), rawURL string, old, new plumbing.Hash, pack []byte) (*pushResult, error) {
	body := make([]byte, 0, len(pack)+200)
	body = appendPkt(body, old.String()+" "+new.String()+" "+LiveRef.String()+"\x00report-status side-band-64k agent=quire")
	body = append(body, "0000"...)
	body = append(body, pack...)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, sendPackTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/git-receive-pack", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUseCLI, err)
	}
	auth(req)
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	req.Header.Set("Accept", "application/x-git-receive-pack-result")
	resp, err := client.Do(req)
	if op := (*net.OpError)(nil); errors.As(err, &op) && op.Op == "dial" {
		return nil, fmt.Errorf("push live to %s: %w: %w", base, ErrPushNotSent, err)
	}
	if err != nil {
		return nil, fmt.Errorf("push live to %s: %w: %w", base, ErrPushOutcomeUnknown, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden,
		resp.StatusCode >= 300 && resp.StatusCode < 400:
		// Refused before receive-pack ran. A credential from git's
		// helpers is asked for again next time.
		r.sp.helperCreds.Delete(rawURL)
		return nil, fmt.Errorf("%w: git-receive-pack: %s", errUseCLI, resp.Status)
	case resp.StatusCode != http.StatusOK:
		// A proxy's 502 may come after the host applied the push.
		return nil, fmt.Errorf("push live to %s: %w: %s", base, ErrPushOutcomeUnknown, resp.Status)
	case resp.Header.Get("Content-Type") != "application/x-git-receive-pack-result":
		return nil, fmt.Errorf("push live to %s: %w: answered with %q", base, ErrPushOutcomeUnknown, resp.Header.Get("Content-Type"))
	}
	lr := &io.LimitedReader{R: resp.Body, N: maxResultBytes}
	res, err := readPushResult(lr)
	if err != nil {
		return nil, fmt.Errorf("push live to %s: %w: %w", base, ErrPushOutcomeUnknown, err)
	}
	// The report decided. The rest (what the host's after-push hook
	// writes: its deploy) is read as git push reads it, to its end, so
	// the push returns when the host's answer does; a failure there
	// changes nothing.
	_, _ = io.Copy(io.Discard, lr)
	return res, nil
}

// liveOutcome reads the host's report on a push of live from old to new
// (a commit whose parents are parents): the commit live is now, or why
// the push failed.
func (r *Repository) liveOutcome(rawURL, base string, res *pushResult, old, new plumbing.Hash, parents []plumbing.Hash) (plumbing.Hash, error) {
	st, ok := res.status(LiveRef)
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("push live to %s: %w: the report does not name %s", base, ErrPushOutcomeUnknown, LiveRef)
	}
	if st.ok && res.unpack != "ok" {
		return plumbing.ZeroHash, fmt.Errorf("push live to %s: %w: the report says unpack %s and ok %s", base, ErrPushOutcomeUnknown, res.unpack, LiveRef)
	}
	if res.unpack != "ok" || strings.Contains(st.reason, "missing necessary objects") {
		// The host refused the pack (nothing was applied): git push
		// negotiates what to send itself. A commit remembered as
		// acknowledged may be what the host no longer has.
		r.sp.acked.Delete(rawURL)
		return plumbing.ZeroHash, fmt.Errorf("%w: the remote refused the pack: unpack %s, %s", errUseCLI, res.unpack, st.reason)
	}
	if !st.ok {
		return plumbing.ZeroHash, &PushRejectedError{Ref: LiveRef, Reason: "[remote rejected] (" + st.reason + ")", Stale: staleReason(st.reason)}
	}
	now := mergedInto(string(res.messages))
	switch {
	case !now.IsZero():
	case slices.Contains(parents, old):
		now = new // a fast-forward
	default:
		// Merged onto live without saying which commit that made (an
		// older host).
	}
	r.sp.remember(rawURL, new, now)
	return now, nil
}

// httpRemote returns a smart-HTTP remote's base URL (it holds no
// credential: see Remote) and a function that sets a request's basic
// auth (from remote's credential) and User-Agent; ok is false for any
// other remote.
func httpRemote(remote Remote, agent string) (client *http.Client, base string, auth func(*http.Request), ok bool) {
	u, err := url.Parse(remote.target())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.RawQuery != "" {
		// A query (which may hold a token) is left to the git CLI, whose
		// messages are scrubbed: the base URL here is printed in errors.
		return nil, "", nil, false
	}
	client = &http.Client{
		// git would follow a redirect and keep the new base URL for the
		// push; git push does that here.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	auth = func(req *http.Request) {
		remote.setAuth(req)
		req.Header.Set("User-Agent", agent)
	}
	return client, strings.TrimSuffix(u.String(), "/"), auth, true
}

// fetchAdvertisement reads the receive-pack ref advertisement at base.
func fetchAdvertisement(ctx context.Context, client *http.Client, base string, auth func(*http.Request)) (*advertisedRefs, error) {
	ctx, cancel := context.WithTimeout(ctx, advertTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/info/refs?service=git-receive-pack", nil)
	if err != nil {
		return nil, err
	}
	auth(req)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, fmt.Errorf("git-receive-pack advertisement: %w", errUnauthorized)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("git-receive-pack advertisement: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-git-receive-pack-advertisement" {
		return nil, fmt.Errorf("git-receive-pack advertisement: content type %q", ct)
	}
	lr := &io.LimitedReader{R: resp.Body, N: maxAdvertBytes + 1}
	adv, err := readAdvertisement(lr)
	if lr.N <= 0 {
		return nil, fmt.Errorf("git-receive-pack advertisement: over %d bytes", maxAdvertBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("git-receive-pack advertisement: %w", err)
	}
	_, _ = io.Copy(io.Discard, lr) // lets the connection be reused
	return adv, nil
}

// readAdvertisement parses a smart-HTTP receive-pack advertisement: the
// "# service=…" line and its flush, then "<hash> <ref>" lines (the first
// with "\x00<capabilities>"; an empty repository's is the zero hash and
// "capabilities^{}"), "<hash> .have" lines, and a flush.
func readAdvertisement(rd io.Reader) (*advertisedRefs, error) {
	adv := &advertisedRefs{refs: map[plumbing.ReferenceName]plumbing.Hash{}}
	pr := newPktReader(rd)
	line, err := pr.next()
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(line, []byte("# service=")) {
		if line, err = pr.next(); err != nil {
			return nil, err
		}
		if line != nil {
			return nil, errors.New("no flush after the service line")
		}
		if line, err = pr.next(); err != nil {
			return nil, err
		}
	}
	for first := true; line != nil; first = false {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if first {
			l, caps, ok := bytes.Cut(line, []byte{0})
			if !ok {
				return nil, errors.New("no capabilities on the first ref line")
			}
			adv.caps = parseCaps(string(caps))
			line = l
		}
		hash, name, ok := strings.Cut(string(line), " ")
		h, okh := parseHash(hash)
		if !ok || !okh {
			return nil, fmt.Errorf("malformed ref line %q", line)
		}
		switch {
		case name == ".have":
			adv.haves = append(adv.haves, h)
		case first && name == "capabilities^{}" && h.IsZero():
		case validRefName(plumbing.ReferenceName(name)):
			adv.refs[plumbing.ReferenceName(name)] = h
		default:
			return nil, fmt.Errorf("malformed ref line %q", line)
		}
		if line, err = pr.next(); err != nil {
			return nil, err
		}
	}
	if adv.caps == nil {
		return nil, errors.New("no ref line")
	}
	return adv, nil
}

// sendPackFor builds the pack of commit new for a remote that has every
// object the commits in known reach: new itself and the trees and blobs
// of its tree that differ from its parents' at the same path (a subtree
// one of them has is left out whole). It returns the pack and new's
// parents; errUseCLI when new is a root commit or a parent is not proven
// to be on the remote.
func (r *Repository) sendPackFor(new plumbing.Hash, known map[plumbing.Hash]bool) ([]byte, []plumbing.Hash, error) {
	var pack bytes.Buffer
	var parents []plumbing.Hash
	err := r.withStore(func(st storer.EncodedObjectStorer) error {
		pack.Reset()
		c, err := object.GetCommit(st, new)
		if err != nil {
			return err
		}
		parents = c.ParentHashes
		if len(parents) == 0 {
			return fmt.Errorf("%w: %s is a root commit", errUseCLI, new)
		}
		var parentTrees []plumbing.Hash
		for _, p := range parents {
			if !remoteHas(st, r.hasCached, p, known) {
				return fmt.Errorf("%w: the remote is not known to have %s, the parent of %s", errUseCLI, p, new)
			}
			pc, err := object.GetCommit(st, p)
			if err != nil {
				return err
			}
			parentTrees = append(parentTrees, pc.TreeHash)
		}
		objs, err := packObjects(st, new, c.TreeHash, parentTrees)
		if err != nil {
			return err
		}
		_, err = packfile.NewEncoder(&pack, st, false).Encode(objs, 0)
		return err
	})
	if errors.Is(err, errUseCLI) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: pack of %s: %w", errUseCLI, new, err)
	}
	if pack.Len() > maxSendPackBytes {
		return nil, nil, fmt.Errorf("%w: a pack of %d bytes", errUseCLI, pack.Len())
	}
	return pack.Bytes(), parents, nil
}

// remoteHas reports whether the remote has commit h: it is in known, or
// an ancestor of a commit in known that this repository has (has; a walk
// of at most maxProveCommits commits).
func remoteHas(st storer.EncodedObjectStorer, has func(plumbing.Hash) bool, h plumbing.Hash, known map[plumbing.Hash]bool) bool {
	if known[h] {
		return true
	}
	var queue []plumbing.Hash
	for k := range known {
		if has(k) {
			queue = append(queue, k)
		}
	}
	seen := map[plumbing.Hash]bool{}
	for len(queue) > 0 && len(seen) < maxProveCommits {
		k := queue[0]
		queue = queue[1:]
		if seen[k] {
			continue
		}
		seen[k] = true
		c, err := object.GetCommit(st, k)
		if err != nil {
			continue
		}
		for _, p := range c.ParentHashes {
			if p == h {
				return true
			}
			queue = append(queue, p)
		}
	}
	return false
}

// hasCached reports whether the repository has object h as far as the
// packs already read know: unlike HasEncodedObject, a miss does not
// re-read the pack directory (a remote's refs are mostly commits this
// repository never fetched). Callers hold r.mu.
func (r *Repository) hasCached(h plumbing.Hash) bool {
	return r.st.has(h) == nil
}

// packObjects lists commit and the objects of tree that the trees in
// parents do not hold at the same path.
func packObjects(st storer.EncodedObjectStorer, commit, tree plumbing.Hash, parents []plumbing.Hash) ([]plumbing.Hash, error) {
	out := []plumbing.Hash{commit}
	seen := map[plumbing.Hash]bool{}
	var walk func(tree plumbing.Hash, parents []plumbing.Hash) error
	walk = func(tree plumbing.Hash, parents []plumbing.Hash) error {
		if seen[tree] || slices.Contains(parents, tree) {
			return nil
		}
		seen[tree] = true
		out = append(out, tree)
		t, err := object.GetTree(st, tree)
		if err != nil {
			return err
		}
		var theirs []map[string]object.TreeEntry
		for _, p := range parents {
			pt, err := object.GetTree(st, p)
			if err != nil {
				return err
			}
			m := make(map[string]object.TreeEntry, len(pt.Entries))
			for _, e := range pt.Entries {
				m[e.Name] = e
			}
			theirs = append(theirs, m)
		}
		for _, e := range t.Entries {
			if e.Mode == filemode.Submodule {
				continue // a commit of another repository
			}
			var sub []plumbing.Hash
			same := false
			for _, m := range theirs {
				pe, ok := m[e.Name]
				same = same || ok && pe.Hash == e.Hash
				if ok && pe.Mode == filemode.Dir {
					sub = append(sub, pe.Hash)
				}
			}
			switch {
			case same:
			case e.Mode == filemode.Dir:
				if err := walk(e.Hash, sub); err != nil {
					return err
				}
			case !seen[e.Hash]:
				seen[e.Hash] = true
				out = append(out, e.Hash)
			}
		}
		return nil
	}
	if err := walk(tree, parents); err != nil {
		return nil, err
	}
	return out, nil
}

// pushResult is a receive-pack answer up to the end of its report.
type pushResult struct {
	unpack   string // "ok" or the error
	refs     []refStatus
	messages []byte // the remote's messages before the report (their end)
}

// refStatus is one ref's line of a report: ok, or ng with a reason.
type refStatus struct {
	name   plumbing.ReferenceName
	ok     bool
	reason string
}

func (p *pushResult) status(name plumbing.ReferenceName) (refStatus, bool) {
	for _, s := range p.refs {
		if s.name == name {
			return s, true
		}
	}
	return refStatus{}, false
}

// readPushResult reads a receive-pack answer in side-band-64k up to the
// end of its report-status (band 1: pkt-lines "unpack …", "ok <ref>",
// "ng <ref> <reason>", then a flush); band 2 carries the remote's
// messages, band 3 a fatal error. What follows the report is left
// unread. An answer that ends or breaks before the report's flush is an
// error.
func readPushResult(rd io.Reader) (*pushResult, error) {
	rep := &reportParser{res: &pushResult{}}
	pr := newPktReader(rd)
	for {
		pkt, err := pr.next()
		if err != nil {
			return nil, err
		}
		if pkt == nil {
			return nil, errors.New("the answer ended before the report")
		}
		if len(pkt) == 0 {
			return nil, errors.New("an empty side-band packet")
		}
		switch band, data := pkt[0], pkt[1:]; band {
		case 1:
			if len(rep.report)+len(data) > maxReportBytes {
				return nil, fmt.Errorf("a report over %d bytes", maxReportBytes)
			}
			rep.report = append(rep.report, data...)
		case 2:
			rep.res.addMessages(data)
			continue
		case 3:
			return nil, fmt.Errorf("remote: %s", strings.TrimSpace(string(data)))
		default:
			return nil, fmt.Errorf("side-band packet on band %d", band)
		}
		done, err := rep.parse()
		if err != nil {
			return nil, err
		}
		if done {
			return rep.res, nil
		}
	}
}

// addMessages adds data to the remote's messages, keeping the last
// maxMessageBytes.
func (res *pushResult) addMessages(data []byte) {
	res.messages = append(res.messages, data...)
	if n := len(res.messages); n > maxMessageBytes {
		res.messages = append(res.messages[:0], res.messages[n-maxMessageBytes:]...)
	}
}

// reportParser parses a report-status as its side-band packets arrive.
type reportParser struct {
	res       *pushResult
	report    []byte // band 1 not parsed yet
	gotUnpack bool
}

// parse parses the report's complete pkt-lines, done at its flush.
func (p *reportParser) parse() (done bool, err error) {
	for {
		line, rest, ok, err := cutPkt(p.report)
		if err != nil {
			return false, fmt.Errorf("report: %w", err)
		}
		if !ok {
			return false, nil
		}
		p.report = rest
		if line == nil {
			if !p.gotUnpack {
				return false, errors.New("report: no unpack line")
			}
			return true, nil
		}
		if err := p.line(strings.TrimSuffix(string(line), "\n")); err != nil {
			return false, err
		}
	}
}

// line parses one line of the report: the unpack line first, then a
// ref's status.
func (p *reportParser) line(s string) error {
	res := p.res
	switch {
	case !p.gotUnpack:
		u, ok := strings.CutPrefix(s, "unpack ")
		if !ok {
			return fmt.Errorf("report: %q where the unpack line belongs", s)
		}
		res.unpack, p.gotUnpack = u, true
	case strings.HasPrefix(s, "ok "):
		res.refs = append(res.refs, refStatus{name: plumbing.ReferenceName(s[len("ok "):]), ok: true})
	case strings.HasPrefix(s, "ng "):
		name, reason, _ := strings.Cut(s[len("ng "):], " ")
		res.refs = append(res.refs, refStatus{name: plumbing.ReferenceName(name), reason: reason})
	default:
		return fmt.Errorf("report: unexpected line %q", s)
	}
	return nil
}

// pktReader reads pkt-lines with go-git's scanner: next returns a line's
// payload, nil for a flush-pkt. Unlike the scanner, it reports a stream
// that ends where a pkt-line belongs as io.ErrUnexpectedEOF: an answer
// cut short must not read as a complete one.
type pktReader struct{ sc *pktline.Scanner }

func newPktReader(r io.Reader) pktReader { return pktReader{pktline.NewScanner(r)} }

func (p pktReader) next() ([]byte, error) {
	if !p.sc.Scan() {
		switch err := p.sc.Err(); {
		case err == nil:
			return nil, io.ErrUnexpectedEOF
		case errors.Is(err, pktline.ErrInvalidPktLen):
			return nil, fmt.Errorf("pkt-line length: %w", err)
		default:
			return nil, err
		}
	}
	if b := p.sc.Bytes(); len(b) > 0 {
		return b, nil
	}
	return nil, nil
}

// cutPkt takes the first complete pkt-line off b: its payload (nil for a
// flush-pkt) and the rest; ok false when b holds no complete one yet. It
// is hand-written because the report's pkt-lines arrive split across
// side-band packets, and go-git's Demuxer, which would join them, reads
// band 2 into an unbounded writer and answers band 3 with its own error.
func cutPkt(b []byte) (line, rest []byte, ok bool, err error) {
	if len(b) < 4 {
		return nil, b, false, nil
	}
	n, err := pktLen(b[:4])
	if err != nil {
		return nil, b, false, err
	}
	if n == 0 {
		return nil, b[4:], true, nil
	}
	if len(b) < 4+n {
		return nil, b, false, nil
	}
	return b[4 : 4+n], b[4+n:], true, nil
}

// pktLen decodes a pkt-line's length header and returns its payload's
// length (0 for a flush-pkt).
func pktLen(h []byte) (int, error) {
	v, err := strconv.ParseUint(string(h), 16, 16)
	if err != nil {
		return 0, fmt.Errorf("pkt-line length %q", h)
	}
	switch {
	case v == 0:
		return 0, nil
	case v < 4 || v > 65520:
		return 0, fmt.Errorf("pkt-line length %d", v)
	case v == 4:
		return 0, errors.New("an empty pkt-line") // a flush is 0000; 0004 carries nothing
	}
	return int(v) - 4, nil
}

// staleReason reports whether a refusal's reason says the ref had moved
// (fetch, re-apply, push again) rather than that the content was refused.
func staleReason(reason string) bool {
	lower := strings.ToLower(reason)
	for _, s := range []string{"stale info", "non-fast-forward", "fetch first", "failed to lock",
		"cannot lock", "failed to update ref", "incorrect old value", alreadyInLive} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}
