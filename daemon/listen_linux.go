//go:build linux

package daemon

import "golang.org/x/sys/unix"

// peerCredUID is the uid of the peer of the connected unix socket fd,
// from SO_PEERCRED (the credentials it had when it connected).
func peerCredUID(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
