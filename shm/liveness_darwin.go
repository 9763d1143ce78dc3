package shm

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Peer liveness on macOS: a kqueue with EVFILT_PROC/NOTE_EXIT on the
// peer's pid fires once the process exits, zombie or reaped, and polling
// it with a zero timeout costs one kevent call.

var errProcessGone = errors.New("process gone")

type procWatch struct {
	pid  int
	kq   int
	gone bool
}

func watchProcess(pid int) (*procWatch, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(kq)
		if err == unix.ESRCH {
			return nil, errProcessGone
		}
		return nil, err
	}
	return &procWatch{pid: pid, kq: kq}, nil
}

func (w *procWatch) exited() bool {
	if w.gone {
		return true
	}
	var out [1]unix.Kevent_t
	n, err := unix.Kevent(w.kq, nil, out[:], &unix.Timespec{})
	if err == nil && n > 0 && out[0].Filter == unix.EVFILT_PROC {
		w.gone = true
	}
	return w.gone
}

func (w *procWatch) close() {
	if w.kq >= 0 {
		unix.Close(w.kq)
		w.kq = -1
	}
}
