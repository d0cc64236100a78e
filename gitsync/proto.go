package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
)

// capSet is the set of capabilities a client asked for.
type capSet map[string]string

func parseCaps(s string) capSet {
	caps := capSet{}
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		caps[k] = v
	}
	return caps
}

func (c capSet) has(name string) bool { _, ok := c[name]; return ok }

// errProtocol marks a malformed request.
var errProtocol = errors.New("protocol error")

func parseHash(s string) (plumbing.Hash, bool) {
	if len(s) != 40 {
		return plumbing.ZeroHash, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return plumbing.ZeroHash, false
		}
	}
	return plumbing.NewHash(s), true
}

// validRefName follows git check-ref-format for names under refs/.
func validRefName(n plumbing.ReferenceName) bool {
	s := string(n)
	if !strings.HasPrefix(s, "refs/") || strings.HasSuffix(s, "/") || strings.HasSuffix(s, ".") ||
		strings.HasSuffix(s, ".lock") || strings.Contains(s, "..") || strings.Contains(s, "//") ||
		strings.Contains(s, "@{") || len(s) > 1024 {
		return false
	}
	for _, part := range strings.Split(s, "/") {
		if part == "" || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	return true
}

// uploadRequest is one upload-pack request of the stateless (HTTP)
// protocol: wants, the haves of this round, and whether the client is
// done negotiating.
type uploadRequest struct {
	Wants []plumbing.Hash
	Haves []plumbing.Hash
	Caps  capSet
	Done  bool
}

// maxUploadLines bounds the number of want/have lines in one request.
const maxUploadLines = 1 << 20

// parseUploadRequest reads an upload-pack request: "want" lines (the
// first carrying capabilities), a flush-pkt, then "have" lines with
// flush-pkts between rounds, ending in "done" or the end of the body.
func parseUploadRequest(r io.Reader) (*uploadRequest, error) {
	sc := pktline.NewScanner(r)
	req := &uploadRequest{Caps: capSet{}}
	inHaves := false
	n := 0
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\n"))
		if len(line) == 0 {
			inHaves = true
			continue
		}
		if n++; n > maxUploadLines {
			return nil, fmt.Errorf("%w: too many lines", errProtocol)
		}
		s := string(line)
		switch {
		case s == "done":
			req.Done = true
			return req, nil
		case strings.HasPrefix(s, "want ") && !inHaves:
			rest := s[len("want "):]
			if len(req.Wants) == 0 && len(rest) > 40 {
				req.Caps = parseCaps(rest[40:])
				rest = rest[:40]
			}
			h, ok := parseHash(rest)
			if !ok {
				return nil, fmt.Errorf("%w: malformed want %q", errProtocol, s)
			}
			req.Wants = append(req.Wants, h)
		case strings.HasPrefix(s, "have "):
			h, ok := parseHash(s[len("have "):])
			if !ok {
				return nil, fmt.Errorf("%w: malformed have %q", errProtocol, s)
			}
			req.Haves = append(req.Haves, h)
		case strings.HasPrefix(s, "shallow ") || strings.HasPrefix(s, "deepen"):
			return nil, fmt.Errorf("%w: shallow fetches are not supported", errProtocol)
		default:
			return nil, fmt.Errorf("%w: unexpected line %q", errProtocol, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", errProtocol, err)
	}
	return req, nil
}
