package affinity

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// Topology returns the layout darwin describes through sysctl: counts of
// performance and efficiency cores, their cache sizes and L2 clusters.
// The CPU ids are synthetic (see Available); Source is "sysctl".
func Topology() (Layout, error) {
	return layoutFromSysctl(sysctlInt)
}

// sysctlInt reads an integer sysctl. XNU declares some hw.* values 32-bit
// and others 64-bit, so take either.
func sysctlInt(name string) (int, error) {
	b, err := unix.SysctlRaw(name)
	if err != nil {
		return 0, err
	}
	switch len(b) {
	case 4:
		return int(int32(binary.LittleEndian.Uint32(b))), nil
	case 8:
		return int(int64(binary.LittleEndian.Uint64(b))), nil
	}
	return 0, fmt.Errorf("%d-byte value", len(b))
}
