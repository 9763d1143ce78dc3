// Package emul detects user-mode emulation of a weakly ordered GOARCH on
// an x86 host (qemu-user, as in CI's arm64 runs) and supplies the one
// barrier that emulation breaks.
//
// Under qemu-user on x86 the guest's store-release followed by a
// load-acquire (ARMv8 orders them; that is what makes Go's atomics
// sequentially consistent on arm64) become a plain host store and load,
// and x86 lets the load pass the store. A store-buffering litmus test of
// sync/atomic failed 7 times in 200,000 under qemu-aarch64 7.2 on a
// 2-vCPU x86 VM, never natively, and knit's Dekker pairings (publish,
// then look for a sleeper; register, then re-check) lost wakeups there.
//
// Nothing runs at init. Where emulation is impossible (x86 itself, and
// every OS but Linux) the answer is a constant; elsewhere the first call
// that needs it reads /proc/cpuinfo once.
package emul

import (
	"bytes"
	"os"
	"sync"
	"sync/atomic"
)

var detectOnce sync.Once

// StoreLoadBroken reports that this process runs under emulation on an
// x86 host. The first call on a GOARCH that can be emulated reads
// /proc/cpuinfo; every later call is a load.
func StoreLoadBroken() bool {
	if !mayEmulate {
		return false
	}
	if Native() {
		return false
	}
	detectOnce.Do(func() {
		emulated = detect()
		if !emulated {
			markNative()
		}
	})
	return emulated
}

// emulated is what detect found; written once under detectOnce, read
// after it.
var emulated bool

var fenceWord atomic.Uint32

// StoreLoadFence orders the caller's earlier atomic stores before its
// later atomic loads where emulation does not. A locked read-modify-write
// is a full barrier on the host. On real hardware it is a constant false
// or a load and a predictable branch, and it inlines.
func StoreLoadFence() {
	if !Native() && StoreLoadBroken() {
		fenceWord.Add(0)
	}
}

// detect reports a non-x86 Linux process whose /proc/cpuinfo describes an
// x86 CPU: qemu-user passes the host's file through, and no native arm64,
// riscv64 or other kernel prints x86's vendor_id field.
func detect() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	return bytes.HasPrefix(b, []byte("vendor_id")) || bytes.Contains(b, []byte("\nvendor_id"))
}
