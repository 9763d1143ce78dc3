//go:build !linux || amd64 || 386

package emul

// No x86 host can be emulating this process: it is x86, or not on Linux
// (qemu-user is Linux-only).
const mayEmulate = false

// Native reports that this process is known to run on real hardware. It
// is the fast-path test, and inlines: here a constant true. False means
// "emulated, or not yet known": the caller takes its slow path and asks
// StoreLoadBroken.
func Native() bool { return true }

// Pending is !Native() as a word, for a fast path that ORs it into a
// count it tests anyway: here a constant 0.
func Pending() uint64 { return 0 }

func markNative() {}
