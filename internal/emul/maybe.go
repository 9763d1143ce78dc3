//go:build linux && !amd64 && !386

package emul

import "sync/atomic"

// A weakly ordered GOARCH on Linux: qemu-user on an x86 host may be
// running it.
const mayEmulate = true

// Native reports that this process is known to run on real hardware. It
// is the fast-path test, and inlines: here one load, false until the
// first StoreLoadBroken has looked. False means "emulated, or not yet
// known": the caller takes its slow path and asks StoreLoadBroken.
func Native() bool { return atomic.LoadUint32(&unresolved) == 0 }

// Pending is !Native() as a word, for a fast path that ORs it into a
// count it tests anyway: 0 on hardware known to be real.
func Pending() uint64 { return uint64(atomic.LoadUint32(&unresolved)) }

// unresolved is 1 (statically: no init code) until the detection has
// found real hardware; it stays 1 under emulation.
var unresolved uint32 = 1

func markNative() { atomic.StoreUint32(&unresolved, 0) }
