//go:build !linux && !darwin

package shm

import (
	"errors"
	"fmt"
	"runtime"
)

// No regions here (region_other.go), so no peers to watch.

var errProcessGone = errors.New("process gone")

type procWatch struct{ pid int }

func watchProcess(pid int) (*procWatch, error) {
	return nil, fmt.Errorf("shm: watching a process on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (w *procWatch) exited() bool { return false }

func (w *procWatch) close() {}
