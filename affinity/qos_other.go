//go:build !darwin

package affinity

import (
	"errors"
	"fmt"
	"runtime"
)

// SetQoS returns an error wrapping errors.ErrUnsupported: QoS classes are
// darwin's. On Linux, Pin chooses the CPUs.
func SetQoS(class QoSClass) error {
	return fmt.Errorf("affinity: QoS classes are darwin's, not %s's: %w", runtime.GOOS, errors.ErrUnsupported)
}
