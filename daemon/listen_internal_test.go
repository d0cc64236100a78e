//go:build unix

package daemon

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListenUnixRestrictsOnlyWhatItCreates: an existing directory keeps
// its mode, missing ones are created 0700, and a path that is not a stale
// socket is refused, never deleted.
func TestListenUnixRestrictsOnlyWhatItCreates(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := listenUnix(filepath.Join(shared, "q.sock"), log)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if fi, _ := os.Stat(shared); fi.Mode().Perm() != 0o755 {
		t.Errorf("existing directory chmodded to %v", fi.Mode().Perm())
	}

	nested := filepath.Join(shared, "a", "b", "q.sock")
	l, err = listenUnix(nested, log)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(nested); fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	l.Close()
	for _, d := range []string{filepath.Join(shared, "a"), filepath.Join(shared, "a", "b")} {
		if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
			t.Errorf("created directory %s has mode %v, want 0700", d, fi.Mode().Perm())
		}
	}

	file := filepath.Join(shared, "notes.txt")
	if err := os.WriteFile(file, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := listenUnix(file, log); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("listen on a regular file: %v", err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep me" {
		t.Errorf("the regular file was touched: %q %v", b, err)
	}

	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := listenUnix(filepath.Join(open, "q.sock"), log); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("listen in a world-writable directory without the sticky bit: %v", err)
	}
	if os.Getuid() == 0 {
		other := t.TempDir()
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := listenUnix(filepath.Join(other, "q.sock"), log); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("listen in another user's directory: %v", err)
		}
	}
}

// TestPeerUID: the peer credentials of a connection from this process
// name this process's user (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS
// and FreeBSD), and allowPeer admits it.
func TestPeerUID(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "q.sock")
	l, err := listenUnix(sock, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := l.(*peerListener).UnixListener.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if uid, err := peerUID(s); err != nil || uid != os.Getuid() {
		t.Errorf("peerUID = %d, %v; want %d", uid, err, os.Getuid())
	}
	if peer, err := allowPeer(s); err != nil {
		t.Errorf("allowPeer refused this process's own user: %s: %v", peer, err)
	}
}
