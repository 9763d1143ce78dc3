//go:build !linux && !darwin

package shm

import (
	"errors"
	"fmt"
	"runtime"
)

// Regions exist on Linux and macOS only: elsewhere knit has no
// process-shared futex to sleep on.

var errNoRegions = fmt.Errorf("shm: shared-memory regions on %s: %w", runtime.GOOS, errors.ErrUnsupported)

func create(name string, size int) (*Region, error) { return nil, errNoRegions }

func openFD(fd int) ([]byte, error) { return nil, errNoRegions }

func unmap(mem []byte) error { return nil }
