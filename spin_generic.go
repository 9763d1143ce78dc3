//go:build purego || !(amd64 || arm64)

package knit

import "github.com/klauspost/cpuid/v2"

// The pure-Go path: used with -tags purego and on every GOARCH without
// ring_$GOARCH.s. The cycle counter is the monotonic clock in ns, and the
// only hints are HintLoop and HintNone.

const haveAsm = false

func archCycles() uint64 { return monoNow() }

func archCounterHz() int64 { return 1e9 }

func archFeatures() []string {
	var f []string
	for _, x := range []struct {
		id   cpuid.FeatureID
		name string
	}{{cpuid.WAITPKG, "waitpkg"}, {cpuid.ATOMICS, "atomics"}, {cpuid.SB, "sb"}, {cpuid.WFXT, "wfxt"}} {
		if cpuid.CPU.Supports(x.id) {
			f = append(f, x.name)
		}
	}
	return f
}

func archSpinSupported(k Hint) (bool, string) {
	return false, "this build has no assembly (purego or GOARCH without ring_$GOARCH.s)"
}

func autoSpin() Hint { return HintLoop }

func archPause(_ Hint, n uint32) { loopPause(n) }

func archWait(_ Hint, addr *uint32, old uint32, deadline uint64) bool {
	return loopWait(addr, old, deadline)
}
