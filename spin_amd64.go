//go:build !purego

package knit

import (
	"sync"

	"github.com/klauspost/cpuid/v2"
)

// Implemented in spin_amd64.s.

//go:noescape
func cpuidex(op, op2 uint32) (eax, ebx, ecx, edx uint32)

// waitUmwait is waitSpin with UMONITOR/UMWAIT (WAITPKG) in place of PAUSE.
//
//go:noescape
func waitUmwait(addr *uint32, old uint32, deadline uint64) bool

// waitMwaitx is waitSpin with MONITORX/MWAITX (AMD) in place of PAUSE.
//
//go:noescape
func waitMwaitx(addr *uint32, old uint32, deadline uint64) bool

// x86 feature bits the spin layer reads. WAITPKG comes from cpuid/v2;
// MONITORX (CPUID 0x8000_0001 ECX[29]) and the invariant TSC (CPUID
// 0x8000_0007 EDX[8]) it does not report, so they are read here, on
// first use and no more than needed: under a hypervisor each CPUID is a
// VM exit, which is slow (BENCHMARKS.md, "Import cost").
var hasWaitpkg = cpuid.CPU.Supports(cpuid.WAITPKG)

// hasMonitorx asks only AMD and Hygon parts, the only ones with
// MONITORX; every x86-64 CPU has leaf 0x8000_0001.
var hasMonitorx = sync.OnceValue(func() bool {
	if v := cpuid.CPU.VendorID; v != cpuid.AMD && v != cpuid.Hygon {
		return false
	}
	_, _, ecx, _ := cpuidex(0x8000_0001, 0)
	return ecx&(1<<29) != 0
})

// hasInvariantTSC is for CPU().Features only.
var hasInvariantTSC = sync.OnceValue(func() bool {
	maxExt, _, _, _ := cpuidex(0x8000_0000, 0)
	if maxExt < 0x8000_0007 {
		return false
	}
	_, _, _, edx := cpuidex(0x8000_0007, 0)
	return edx&(1<<8) != 0
})

func archFeatures() []string {
	var f []string
	if hasWaitpkg {
		f = append(f, "waitpkg")
	}
	if hasMonitorx() {
		f = append(f, "monitorx")
	}
	if hasInvariantTSC() {
		f = append(f, "invariant-tsc")
	}
	return f
}

func archSpinSupported(k Hint) (bool, string) {
	switch k {
	case HintPause:
		return true, ""
	case HintTPause:
		if hasWaitpkg {
			return true, ""
		}
		return false, "CPU does not report WAITPKG (CPUID.7.0:ECX[5]); hypervisors often hide it"
	case HintMWaitX:
		if hasMonitorx() {
			return true, ""
		}
		return false, "CPU does not report MONITORX (CPUID 0x80000001:ECX[29]); hypervisors often hide it"
	}
	return false, "not an amd64 instruction"
}

// autoSpin prefers the monitor-based waits, which sleep the core until the
// watched line is written instead of re-reading it: the wake is the
// delivery, and an SMT sibling gets the pipeline meanwhile. Where the CPU
// (or its hypervisor) hides both, PAUSE.
func autoSpin() Hint {
	switch {
	case hasWaitpkg:
		return HintTPause
	case hasMonitorx():
		return HintMWaitX
	}
	return HintPause
}

// The TSC frequency is measured against the monotonic clock (see
// calibrateClock).
func archCounterHz() int64 { return 0 }

func archPause(k Hint, n uint32) {
	if k == HintLoop {
		loopPause(n)
		return
	}
	pauseN(n)
}

func archWait(k Hint, addr *uint32, old uint32, deadline uint64) bool {
	switch k {
	case HintTPause:
		return waitUmwait(addr, old, deadline)
	case HintMWaitX:
		return waitMwaitx(addr, old, deadline)
	case HintLoop:
		return loopWait(addr, old, deadline)
	}
	return waitSpin(addr, old, deadline)
}
