package gitsync

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/revlist"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// advertisement lists r's refs in the v0 smart protocol format with caps
// on the first line (r nil: an empty repository). With peel, annotated
// tags are followed by a "<tag>^{}" line naming what they point at.
func advertisement(r *Repository, caps string, peel bool) ([]byte, error) {
	type line struct {
		name string
		hash plumbing.Hash
	}
	var lines []line
	if r != nil {
		err := r.locked(func(storer.EncodedObjectStorer) error {
			iter, err := r.repo.Storer.IterReferences()
			if err != nil {
				return err
			}
			err = iter.ForEach(func(ref *plumbing.Reference) error {
				if ref.Type() == plumbing.HashReference && strings.HasPrefix(ref.Name().String(), "refs/") {
					lines = append(lines, line{ref.Name().String(), ref.Hash()})
				}
				return nil
			})
			if err != nil {
				return err
			}
			slices.SortFunc(lines, func(a, b line) int { return strings.Compare(a.name, b.name) })
			if peel {
				var peeled []line
				for _, l := range lines {
					peeled = append(peeled, l)
					if !strings.HasPrefix(l.name, "refs/tags/") {
						continue
					}
					if tag, err := object.GetTag(r.repo.Storer, l.hash); err == nil {
						peeled = append(peeled, line{l.name + "^{}", tag.Target})
					}
				}
				lines = peeled
			}
			head, err := r.repo.Storer.Reference(plumbing.HEAD)
			if err != nil {
				return nil
			}
			if head.Type() == plumbing.SymbolicReference {
				caps += " symref=HEAD:" + head.Target().String()
				if i := slices.IndexFunc(lines, func(l line) bool { return l.name == head.Target().String() }); i >= 0 {
					lines = slices.Insert(lines, 0, line{"HEAD", lines[i].hash})
				}
			} else {
				lines = slices.Insert(lines, 0, line{"HEAD", head.Hash()})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var out []byte
	if len(lines) == 0 {
		out = appendPkt(out, plumbing.ZeroHash.String()+" capabilities^{}\x00"+caps+"\n")
	}
	for i, l := range lines {
		s := l.hash.String() + " " + l.name
		if i == 0 {
			s += "\x00" + caps
		}
		out = appendPkt(out, s+"\n")
	}
	return append(out, "0000"...), nil
}

// serveUploadPack answers one round of fetch negotiation, or sends the
// pack once the client is done. Haves the repository lacks are ignored.
func (h *Host) serveUploadPack(ctx context.Context, w http.ResponseWriter, req *http.Request, name string) {
	r, err := h.Repository(name)
	if err != nil {
		http.Error(w, "repository not found", http.StatusNotFound)
		return
	}
	body, err := h.body(w, req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ur, err := parseUploadRequest(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	var out []byte
	if len(ur.Wants) == 0 {
		_, _ = w.Write(out)
		return
	}
	var common []plumbing.Hash
	var missing plumbing.Hash
	_ = r.locked(func(st storer.EncodedObjectStorer) error {
		for _, want := range ur.Wants {
			if st.HasEncodedObject(want) != nil {
				missing = want
				return nil
			}
		}
		for _, have := range ur.Haves {
			if st.HasEncodedObject(have) == nil {
				common = append(common, have)
			}
		}
		return nil
	})
	if !missing.IsZero() {
		out = appendPkt(out, "ERR upload-pack: not our ref "+missing.String()+"\n")
		_, _ = w.Write(out)
		return
	}
	if !ur.Done {
		for _, c := range common {
			out = appendPkt(out, "ACK "+c.String()+" common\n")
		}
		out = appendPkt(out, "NAK\n")
		_, _ = w.Write(out)
		return
	}
	if len(common) > 0 {
		out = appendPkt(out, "ACK "+common[len(common)-1].String()+"\n")
	} else {
		out = appendPkt(out, "NAK\n")
	}
	var pack bytes.Buffer
	err = r.withStore(func(st storer.EncodedObjectStorer) error {
		pack.Reset()
		objs, err := revlist.Objects(st, ur.Wants, common)
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		enc := packfile.NewEncoder(&pack, st, !ur.Caps.has("ofs-delta"))
		_, err = enc.Encode(objs, 10)
		return err
	})
	if err != nil {
		h.opts.Logger.Error("upload-pack", "repo", name, "err", err)
		if errors.Is(err, context.DeadlineExceeded) {
			out = appendPkt(out, "ERR upload-pack: timed out\n")
		} else {
			out = appendPkt(out, "ERR upload-pack: cannot build pack\n")
		}
		_, _ = w.Write(out)
		return
	}
	if _, err := w.Write(out); err != nil {
		return
	}
	switch {
	case ur.Caps.has("side-band-64k"):
		mux := sideband.NewMuxer(sideband.Sideband64k, w)
		_, _ = mux.Write(pack.Bytes())
		_, _ = w.Write([]byte("0000"))
	case ur.Caps.has("side-band"):
		mux := sideband.NewMuxer(sideband.Sideband, w)
		_, _ = mux.Write(pack.Bytes())
		_, _ = w.Write([]byte("0000"))
	default:
		_, _ = w.Write(pack.Bytes())
	}
}
