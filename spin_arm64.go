//go:build !purego

package knit

import (
	"runtime"

	"github.com/klauspost/cpuid/v2"
)

// Implemented in spin_arm64.s.

// counterFreq reads CNTFRQ_EL0, the frequency of CNTVCT_EL0.
func counterFreq() uint64

// yieldN executes YIELD n times.
func yieldN(n uint32)

// waitYield is waitSpin with YIELD in place of ISB.
//
//go:noescape
func waitYield(addr *uint32, old uint32, deadline uint64) bool

// waitWFE is waitSpin that sleeps in WFE after arming the exclusive
// monitor on addr with LDAXR.
//
//go:noescape
func waitWFE(addr *uint32, old uint32, deadline uint64) bool

func archFeatures() []string {
	var f []string
	for _, x := range []struct {
		id   cpuid.FeatureID
		name string
	}{{cpuid.ATOMICS, "atomics"}, {cpuid.SB, "sb"}, {cpuid.WFXT, "wfxt"}} {
		if cpuid.CPU.Supports(x.id) {
			f = append(f, x.name)
		}
	}
	return f
}

func archSpinSupported(k Hint) (bool, string) {
	switch k {
	case HintISB, HintYield:
		return true, ""
	case HintWFE:
		if wfeHasEventStream {
			return true, ""
		}
		return false, "WFE needs the kernel's timer event stream to bound its sleep; only Linux is known to enable it"
	}
	return false, "not an arm64 instruction"
}

// wfeHasEventStream: Linux enables the arch timer's event stream (its
// period is on HintWFE), which bounds how long a WFE with no store to
// the watched word can sleep. Without that bound a WFE could outlive its
// budget, and a goroutine in assembly cannot be preempted, so WFE is
// offered on Linux only.
const wfeHasEventStream = runtime.GOOS == "linux"

// autoSpin picks ISB, as Rust's spin_loop and HotSpot do on arm64: YIELD
// is a NOP on cores without SMT, so a YIELD loop hammers the line. WFE is
// available by override (KNIT_HINT=wfe) until it is measured on hardware;
// under qemu-user it does not sleep at all, so qemu cannot rank it.
func autoSpin() Hint { return HintISB }

func archCounterHz() int64 { return int64(counterFreq()) }

func archPause(k Hint, n uint32) {
	switch k {
	case HintYield:
		yieldN(n)
	case HintLoop:
		loopPause(n)
	default:
		pauseN(n)
	}
}

func archWait(k Hint, addr *uint32, old uint32, deadline uint64) bool {
	switch k {
	case HintYield:
		return waitYield(addr, old, deadline)
	case HintWFE:
		return waitWFE(addr, old, deadline)
	case HintLoop:
		return loopWait(addr, old, deadline)
	}
	return waitSpin(addr, old, deadline)
}
