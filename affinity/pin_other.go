//go:build !linux && !darwin

package affinity

import (
	"errors"
	"fmt"
	"runtime"
)

// errUnsupported is what every call returns on systems other than Linux
// and darwin.
var errUnsupported = fmt.Errorf("affinity: not implemented on %s: %w", runtime.GOOS, errors.ErrUnsupported)

// Available returns an error wrapping errors.ErrUnsupported on this system.
func Available() (CPUSet, error) { return CPUSet{}, errUnsupported }

// Pin returns an error wrapping errors.ErrUnsupported on this system.
func Pin(cpu int) (release func(), err error) { return nil, errUnsupported }

// PinSet returns an error wrapping errors.ErrUnsupported on this system.
func PinSet(set CPUSet) (release func(), err error) { return nil, errUnsupported }

// Current returns an error wrapping errors.ErrUnsupported on this system.
func Current() (int, error) { return -1, errUnsupported }
