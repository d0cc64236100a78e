package daemon

import (
	"context"
	"io/fs"
	"strings"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// checked wraps build so that the tree a write would make goes through
// the validation a push goes through (agent.Check, the one `quire
// check` runs) before anything is committed: an error on a file the
// write changes refuses the write with a 422 naming it, instead of
// committing a tree that then blocks every push. The content checks run
// for an agent under the reject policy only: under the truncate policy a
// memory or user file's text cannot make a content error (budgets are
// warnings there), and the file rules still run.
func (wr *writer) checked(ctx context.Context, ref agentRef, build buildFunc) buildFunc {
	filesOnly := ref.ag.agent.Config.Policy != prompt.PolicyReject
	return func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		writes, err := build(fsys)
		if err != nil || len(writes) == 0 {
			return writes, err
		}
		files := map[string][]byte{}
		var paths []string
		for _, w := range writes {
			if w.Delete {
				files[w.Path] = nil
				continue
			}
			files[w.Path] = w.Content
			paths = append(paths, w.Path)
		}
		if len(paths) == 0 {
			return writes, nil
		}
		// The tree the write would make: a pendingFS lists a directory
		// the write leaves as it was at the cost of its base listing.
		view := newPendingFS(fsys)
		view.apply(writes)
		memo := &ref.src.writes.checked
		checked, fps := checkedPrefixes(view, memo, paths)
		var refused []string
		if filesOnly {
			// agent.Check of the file rules alone is workspace.CheckFiles,
			// of which only what it finds about the written files can
			// refuse the write: CheckPaths finds that without the case
			// rule's look-ups in the large directories above them. A
			// file that extends a text that passed them has only what
			// it adds scanned.
			refused = refusals(workspace.CheckPaths(ctx, view, paths, checked), files)
		} else {
			refused = refusals(agent.Check(ctx, view, agent.CheckOptions{Paths: paths, Cache: wr.tokens}), files)
		}
		if len(refused) > 0 {
			return nil, api.Errorf(api.CodeInvalid,
				"the write would make a workspace the git endpoint refuses: %s; nothing was written", strings.Join(refused, "; "))
		}
		for p, fp := range fps {
			memo.passed(p, fp)
		}
		return writes, nil
	}
}

// refusals are the errors of probs about the files a write writes.
func refusals(probs []workspace.Problem, files map[string][]byte) []string {
	var refused []string
	for _, p := range workspace.Errors(probs) {
		if _, written := files[p.Path]; written {
			refused = append(refused, p.String())
		}
	}
	return refused
}

// checkedPrefixes returns, for the files of paths that extend a text
// memo holds as checked, the length of that text, and the fingerprints
// of the files of paths (passed records them).
func checkedPrefixes(view *pendingFS, memo *checkedTexts, paths []string) (map[string]int, map[string]fingerprint) {
	checked := make(map[string]int, len(paths))
	fps := make(map[string]fingerprint, len(paths))
	for _, p := range paths {
		w, ok := view.files[p]
		if !ok || w.Delete {
			continue
		}
		checked[p], fps[p] = memo.checked(p, w.Content)
	}
	return checked, fps
}
