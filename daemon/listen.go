package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// listenUnix listens on the unix socket path: its directory is created
// with mode 0700, the socket gets mode 0600, and an existing socket file
// is removed only when dialing it fails (a daemon that crashed left it),
// never while another daemon answers on it.
func listenUnix(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create socket directory %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if _, err := os.Lstat(path); err == nil {
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
	l.(*net.UnixListener).SetUnlinkOnClose(true)
	return l, nil
}
