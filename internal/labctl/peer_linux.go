package labctl

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// peerIsOwner refuses a peer whose user is not this process's
// (SO_PEERCRED, unix(7)): the socket's mode already keeps others out,
// this holds even where a directory's mode was loosened.
func peerIsOwner(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("lab control socket: peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("lab control socket: user %d is not the lab's owner", cred.Uid)
	}
	return nil
}
