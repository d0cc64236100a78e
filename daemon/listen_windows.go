//go:build windows

package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Windows socket is an AF_UNIX socket (Windows 10 1803 and later),
// like on unix, chosen over a named pipe so that every client (the CLI,
// curl --unix-socket, the MCP bridge) speaks to one kind of endpoint on
// every system. Windows gives an AF_UNIX socket no peer credentials, so
// the guard is the directory: connecting needs write access to the
// socket file, and the socket's directory admits only the daemon's user
// (and SYSTEM and Administrators, who are root's equivalents), which the
// socket file inherits. makeSocketDir creates a missing directory with
// that ACL (protected: nothing inherited from its parent) and refuses an
// existing one whose ACL admits anyone else.

// makeSocketDir creates the missing directories of dir, the last one
// admitting only this user, or checks that an existing one does.
func makeSocketDir(dir string) error {
	user, err := currentUserSID()
	if err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return fmt.Errorf("create socket directory %s: %w", filepath.Dir(dir), err)
		}
		return createPrivateDir(dir, user)
	}
	if err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory", dir)
	}
	return checkPrivateDir(dir, user)
}

// createPrivateDir creates dir with a protected DACL that grants full
// access to user alone, inherited by what is created in it.
func createPrivateDir(dir string, user *windows.SID) error {
	sd, err := windows.SecurityDescriptorFromString("O:" + user.String() + "D:P(A;OICI;GA;;;" + user.String() + ")")
	if err != nil {
		return fmt.Errorf("socket directory %s: security descriptor: %w", dir, err)
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	if err := windows.CreateDirectory(p, sa); err != nil && !errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		return fmt.Errorf("create socket directory %s: %w", dir, err)
	}
	return checkPrivateDir(dir, user)
}

// checkPrivateDir refuses dir when it is not user's or when an entry of
// its DACL grants access to anyone but user, SYSTEM or Administrators.
func checkPrivateDir(dir string, user *windows.SID) error {
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("socket directory %s: read its ACL: %w", dir, err)
	}
	trusted := []*windows.SID{user}
	for _, k := range []windows.WELL_KNOWN_SID_TYPE{windows.WinLocalSystemSid, windows.WinBuiltinAdministratorsSid} {
		if sid, err := windows.CreateWellKnownSid(k); err == nil {
			trusted = append(trusted, sid)
		}
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil || !anySID(trusted, owner) {
		return fmt.Errorf("socket directory %s does not belong to you (%s): another user could take over the socket; choose another --socket", dir, user)
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return fmt.Errorf("socket directory %s has no access list (everyone may use it): another user could connect; choose another --socket", dir)
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return fmt.Errorf("socket directory %s: read its ACL: %w", dir, err)
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE {
			continue // a deny entry only takes access away
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if !anySID(trusted, sid) {
			return fmt.Errorf("socket directory %s admits %s, not only you (%s): they could connect to the socket; choose another --socket", dir, sid, user)
		}
	}
	return nil
}

func anySID(sids []*windows.SID, s *windows.SID) bool {
	for _, t := range sids {
		if t.Equals(s) {
			return true
		}
	}
	return false
}

// currentUserSID is the SID of the user this process runs as.
func currentUserSID() (*windows.SID, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("this process's user: %w", err)
	}
	return tu.User.Sid.Copy()
}

// allowPeer admits every connection: on Windows the socket directory's
// ACL (makeSocketDir) is what keeps other users from connecting, since
// an AF_UNIX socket there has no peer credentials to check.
func allowPeer(*net.UnixConn) (peer string, err error) { return "", nil }
