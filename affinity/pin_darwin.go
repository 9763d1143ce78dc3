package affinity

import (
	"errors"
	"fmt"
)

// Available returns every CPU (hw.logicalcpu), numbered as in Topology:
// darwin has no per-process CPU mask.
func Available() (CPUSet, error) {
	n, err := sysctlInt("hw.logicalcpu")
	if err != nil {
		return CPUSet{}, fmt.Errorf("affinity: sysctl hw.logicalcpu: %w", err)
	}
	if n < 1 || n > cpuLimit {
		return CPUSet{}, fmt.Errorf("affinity: sysctl hw.logicalcpu is %d", n)
	}
	return spanFrom(0, n), nil
}

// errNoAffinity explains why: THREAD_AFFINITY_POLICY is only a hint on
// Intel Macs and returns KERN_NOT_SUPPORTED on Apple silicon, and darwin
// does not say which CPU a thread runs on. SetQoS is the lever darwin
// offers.
var errNoAffinity = fmt.Errorf("affinity: darwin has no thread affinity (use SetQoS): %w", errors.ErrUnsupported)

// Pin returns an error wrapping errors.ErrUnsupported on darwin.
func Pin(cpu int) (release func(), err error) { return nil, errNoAffinity }

// PinSet returns an error wrapping errors.ErrUnsupported on darwin.
func PinSet(set CPUSet) (release func(), err error) { return nil, errNoAffinity }

// Current returns an error wrapping errors.ErrUnsupported on darwin.
func Current() (int, error) { return -1, errNoAffinity }
