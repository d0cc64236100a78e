package gitsync

import (
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// PushRecord is the outcome of a push, kept per repository so that a
// client cut off before the status report can find what happened
// (`quire status`).
type PushRecord struct {
	Repo string    `json:"repo"`
	User string    `json:"user,omitempty"`
	At   time.Time `json:"at"`
	// Result is "ok" (every ref moved), "refused" (none did) or
	// "partial".
	Result string `json:"result"`
	// Unpack is "ok" or why the pack was refused.
	Unpack string      `json:"unpack"`
	Refs   []PushedRef `json:"refs"`
}

// PushedRef is one ref of a push.
type PushedRef struct {
	Name string `json:"name"`
	Old  string `json:"old"`
	New  string `json:"new"`
	// Result is "ok" or the reason the ref was refused.
	Result string `json:"result"`
}

// maxRecordedRefs bounds the refs kept per push record.
const maxRecordedRefs = 50

func (h *Host) recordPush(name, user string, at time.Time, unpack string, results []refResult) {
	rec := PushRecord{Repo: name, User: user, At: at, Unpack: strings.TrimPrefix(unpack, "unpack ")}
	ok := 0
	for _, res := range results {
		if res.reason == "" {
			ok++
		}
		if len(rec.Refs) < maxRecordedRefs {
			pr := PushedRef{Name: res.cmd.Name.String(), Old: hashText(res.cmd.Old), New: hashText(res.cmd.New), Result: "ok"}
			if res.reason != "" {
				pr.Result = res.reason
			}
			rec.Refs = append(rec.Refs, pr)
		}
	}
	switch ok {
	case len(results):
		rec.Result = "ok"
	case 0:
		rec.Result = "refused"
	default:
		rec.Result = "partial"
	}
	h.pushMu.Lock()
	defer h.pushMu.Unlock()
	h.lastPush[name] = rec
}

func hashText(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// LastPushes returns the last push to each repository since the host
// started, by repository name.
func (h *Host) LastPushes() []PushRecord {
	h.pushMu.Lock()
	defer h.pushMu.Unlock()
	out := make([]PushRecord, 0, len(h.lastPush))
	for _, r := range h.lastPush {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b PushRecord) int { return strings.Compare(a.Repo, b.Repo) })
	return out
}
