package draft

import (
	"context"
	"io/fs"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/workspace"
)

// check runs agent.Check on base with d's files written over it and
// keeps what the draft brought: a problem the tree had before (the
// same path, code and message) is not the draft's doing and is left
// out. Errors refuse the draft (*InvalidError), warnings are returned.
func check(ctx context.Context, base fs.FS, d *Draft, what string) ([]workspace.Problem, error) {
	type key struct{ path, code, msg string }
	before := map[key]bool{}
	for _, p := range agent.Check(ctx, base, agent.CheckOptions{}) {
		before[key{p.Path, p.Code, p.Message}] = true
	}
	tree := workspace.WithFiles(base, d.Files)
	var errs, warns []workspace.Problem
	for _, p := range agent.Check(ctx, tree, agent.CheckOptions{}) {
		if before[key{p.Path, p.Code, p.Message}] {
			continue
		}
		if p.Severity == workspace.SeverityError {
			errs = append(errs, p)
		} else {
			warns = append(warns, p)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, &InvalidError{What: what, Problems: errs}
	}
	return warns, nil
}
