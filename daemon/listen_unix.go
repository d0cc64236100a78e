//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// makeSocketDir creates the missing directories of dir with mode 0700 and
// checks that an existing one is safe to hold the socket: owned by this
// user or root, and not writable by others without the sticky bit.
func makeSocketDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := makeSocketDir(filepath.Dir(dir)); err != nil && filepath.Dir(dir) != dir {
			return err
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create socket directory %s: %w", dir, err)
		}
		// The umask may have taken bits away, never added: set exactly.
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("socket directory %s: %w", dir, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	uid := os.Getuid()
	if int(st.Uid) != uid && st.Uid != 0 {
		return fmt.Errorf("socket directory %s belongs to uid %d, not to you (uid %d): another user could take over the socket; choose another --socket", dir, st.Uid, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("socket directory %s is writable by others (mode %v) without the sticky bit: they could replace the socket; choose another --socket", dir, fi.Mode().Perm())
	}
	return nil
}

// allowPeer returns nil when the process at the other end of c runs as
// this daemon's user or as root, and otherwise an error saying why it is
// refused; peer names it for the log ("uid N").
func allowPeer(c *net.UnixConn) (peer string, err error) {
	uid, err := peerUID(c)
	if err != nil {
		return "unknown", err
	}
	if uid == os.Getuid() || uid == 0 {
		return "", nil
	}
	return "uid " + strconv.Itoa(uid), fmt.Errorf("uid %d is not this daemon's user (uid %d)", uid, os.Getuid())
}

// peerUID is the user id of the process at the other end of c, from the
// system's peer credentials (peerCredUID).
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid := -1
	var serr error
	err = raw.Control(func(fd uintptr) { uid, serr = peerCredUID(int(fd)) })
	if err == nil {
		err = serr
	}
	if err != nil {
		return -1, fmt.Errorf("peer credentials: %w", err)
	}
	return uid, nil
}
