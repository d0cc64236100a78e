package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/quirehq/quire/daemon/api"
)

// TestDiskFullIs507: a write that failed for want of space answers 507
// insufficient_storage naming the path, wherever the error came from;
// other errors pass through.
func TestDiskFullIs507(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
		path string
	}{
		{fmt.Errorf("commit on refs/heads/live: %w", &fs.PathError{Op: "write", Path: "/srv/repos/a.git/objects/pack/tmp_quire_pack_1", Err: syscall.ENOSPC}),
			507, "/srv/repos/a.git/objects/pack/tmp_quire_pack_1"},
		{&fs.PathError{Op: "open", Path: "/srv/ws/memory/x.md", Err: syscall.EDQUOT}, 507, "/srv/ws/memory/x.md"},
		{api.Errorf(api.CodeStale, "x"), 409, ""},
		{errors.New("boom"), 500, ""},
	} {
		c1, err := diskFull(committed{commit: "c", branch: "b"}, c.err)
		if c1.commit != "c" || c1.branch != "b" || api.StatusOf(err) != c.want {
			t.Errorf("diskFull(%v) = %+v %v (%d), want %d", c.err, c1, err, api.StatusOf(err), c.want)
		}
		if c.path != "" && (api.AsError(err).Code != api.CodeInsufficientStorage || !strings.Contains(err.Error(), " writing "+c.path+": free space on its file system, then retry")) {
			t.Errorf("diskFull(%v) = %v, want insufficient_storage naming %s", c.err, err, c.path)
		}
	}
}
