//go:build (amd64 || arm64) && !purego

package knit

// haveAsm reports that the assembly routines in ring_$GOARCH.s are in use.
const haveAsm = true

// Implemented in spin_amd64.s and spin_arm64.s; the pure-Go equivalents
// are in spin_generic.go.

// cycles reads the cycle counter: RDTSC on amd64, CNTVCT_EL0 on arm64.
//
//go:noescape
func cycles() uint64

// pauseN executes the default hint n times: PAUSE on amd64, ISB on arm64.
func pauseN(n uint32)

// waitSpin returns true as soon as *addr != old, or false once the cycle
// counter reaches deadline, spinning with the default hint between loads.
//
//go:noescape
func waitSpin(addr *uint32, old uint32, deadline uint64) bool

func archCycles() uint64 { return cycles() }
