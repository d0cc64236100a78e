package daemon

import (
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
)

// diskFull answers a write that failed for want of space (ENOSPC,
// EDQUOT: a pack, a ref or a working tree's file could not be written)
// with 507 insufficient_storage naming the path; commit, branch and any
// other error pass through.
func diskFull(c committed, err error) (committed, error) {
	if df := gitsync.DiskFull(err); df != nil {
		return c, api.Errorf(api.CodeInsufficientStorage, "%v", df)
	}
	return c, err
}
