package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// listenUnix listens on the unix socket path, restricting only what it
// creates itself:
//   - missing directories on the way are created with mode 0700; an
//     existing directory is left as it is, but refused when another user
//     owns it, or when others may write to it without the sticky bit (they
//     could replace the socket);
//   - an existing path is removed only when it is a socket that nobody
//     answers on (a daemon that crashed left it); a live socket, a regular
//     file, a directory or a link is refused, never deleted;
//   - the socket is mode 0600, and connections from other users are closed
//     on accept (peer credentials), so the mode is not the only guard.
func listenUnix(path string, log *slog.Logger) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := makeSocketDir(dir); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("socket %s: the path exists and is not a socket (%s); remove it yourself or choose another --socket", path, describeMode(fi.Mode()))
		}
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("socket %s: another daemon is listening on it; stop it or choose another --socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	ul := l.(*net.UnixListener)
	ul.SetUnlinkOnClose(true)
	return &peerListener{UnixListener: ul, uid: os.Getuid(), log: log}, nil
}

// makeSocketDir creates the missing directories of dir with mode 0700 and
// checks that an existing one is safe to hold the socket.
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

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return m.Type().String()
}

// peerListener closes connections from processes of other users (root
// excepted): the socket's mode should already keep them out, and this
// keeps them out even if it does not.
type peerListener struct {
	*net.UnixListener
	uid int
	log *slog.Logger
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.UnixListener.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && (uid == l.uid || uid == 0) {
			return c, nil
		}
		l.log.Warn("refused a connection on the API socket from another user", "peer_uid", uid, "err", err)
		c.Close()
	}
}

// peerUID is the user id of the process at the other end of c.
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *syscall.Ucred
	var serr error
	err = raw.Control(func(fd uintptr) {
		cred, serr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return -1, fmt.Errorf("peer credentials: %w", err)
	}
	return int(cred.Uid), nil
}
