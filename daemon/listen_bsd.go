//go:build darwin || freebsd

package daemon

import "golang.org/x/sys/unix"

// peerCredUID is the uid of the peer of the connected unix socket fd,
// from LOCAL_PEERCRED (what getpeereid(3) reads on macOS and FreeBSD:
// the credentials it had when it connected).
func peerCredUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
