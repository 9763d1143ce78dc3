// Package emul detects user-mode emulation of a weakly ordered GOARCH on
// an x86 host (qemu-user, as in CI's arm64 runs) and supplies the one
// barrier that emulation breaks.
//
// Under qemu-user on x86 the guest's store-release followed by a
// load-acquire (ARMv8 orders them; that is what makes Go's atomics
// sequentially consistent on arm64) become a plain host store and load,
// and x86 lets the load pass the store. A store-buffering litmus test of
// sync/atomic failed 7 times in 200,000 under qemu-aarch64 7.2 on the
// 2-vCPU CI VM, never natively, and knit's Dekker pairings (publish, then
// look for a sleeper; register, then re-check) lost wakeups there.
package emul

import (
	"bytes"
	"os"
	"runtime"
	"sync/atomic"
)

// StoreLoadBroken is set when this non-x86 Linux process runs under
// emulation on an x86 host. It is read-only after init.
var StoreLoadBroken = detect()

var fenceWord atomic.Uint32

// StoreLoadFence orders the caller's earlier atomic stores before its
// later atomic loads where emulation does not. A locked read-modify-write
// is a full barrier on the host. On real hardware it is a load of a
// read-only flag and a predictable branch, and it inlines.
func StoreLoadFence() {
	if StoreLoadBroken {
		fenceWord.Add(0)
	}
}

// detect reports a non-x86 Linux process whose /proc/cpuinfo describes an
// x86 CPU: qemu-user passes the host's file through, and no native arm64,
// riscv64 or other kernel prints x86's vendor_id field.
func detect() bool {
	if runtime.GOOS != "linux" || runtime.GOARCH == "amd64" || runtime.GOARCH == "386" {
		return false
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	return bytes.HasPrefix(b, []byte("vendor_id")) || bytes.Contains(b, []byte("\nvendor_id"))
}
