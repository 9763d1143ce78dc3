//go:build !linux

package harness

import "runtime"

// LockThread locks the calling goroutine to its OS thread. Pinning to a
// CPU is Linux-only here; elsewhere -pin only locks, and the report says
// which OS the run was on.
func (c Config) LockThread(slot int) (release func()) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
