package shm

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Peer liveness on Linux: a pidfd (pidfd_open, Linux 5.3) names one
// process, not a pid that could be reused, and polls readable once it has
// exited, zombie or reaped. Where pidfd_open is missing (old kernels,
// some sandboxes and emulators) the fallback is kill(pid, 0) plus the
// process state in /proc, which cannot tell a reused pid from the peer.

var errProcessGone = errors.New("process gone")

type procWatch struct {
	pid int
	fd  int // pidfd, or -1 for the fallback
}

func watchProcess(pid int) (*procWatch, error) {
	fd, err := unix.PidfdOpen(pid, 0) // always close-on-exec
	switch err {
	case nil:
		return &procWatch{pid: pid, fd: fd}, nil
	case unix.ESRCH:
		return nil, errProcessGone
	}
	w := &procWatch{pid: pid, fd: -1}
	if w.exited() {
		return nil, errProcessGone
	}
	return w, nil
}

func (w *procWatch) exited() bool {
	if w.fd >= 0 {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		return err == nil && n > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0
	}
	if err := unix.Kill(w.pid, 0); err == unix.ESRCH {
		return true
	}
	// A zombie answers kill(pid, 0): read its state.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.pid))
	if err != nil {
		return os.IsNotExist(err)
	}
	// The state follows the parenthesised command, which may itself
	// contain ") ".
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' {
			if i+2 < len(b) {
				s := b[i+2]
				return s == 'Z' || s == 'X'
			}
			break
		}
	}
	return false
}

func (w *procWatch) close() {
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}
