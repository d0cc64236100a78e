package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
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
//
// What "another user" means and how it is checked is each system's
// (makeSocketDir and allowPeer, behind build tags): on Linux the peer's
// uid from SO_PEERCRED, on macOS and FreeBSD from LOCAL_PEERCRED
// (getpeereid); on Windows, where an AF_UNIX socket has no peer
// credentials, the socket's directory has an ACL that admits only the
// daemon's user (and SYSTEM and Administrators, as root on unix), so
// nobody else can connect at all.
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
	return &peerListener{UnixListener: ul, log: log}, nil
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
	log *slog.Logger
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.UnixListener.AcceptUnix()
		if err != nil {
			return nil, err
		}
		peer, err := allowPeer(c)
		if err == nil {
			return c, nil
		}
		l.log.Warn("refused a connection on the API socket from another user", "peer", peer, "err", err)
		c.Close()
	}
}
