//go:build !(amd64 || arm64) || purego

package goid

// Curg identifies the calling goroutine by the number in its stack trace
// (Stack), which costs microseconds.
func Curg() uintptr { return Stack() }

// ID is the runtime's id of the calling goroutine, which no other
// goroutine ever has: the number in its stack trace (Stack), which costs
// microseconds.
func ID() uint64 { return uint64(Stack()) }

// Cheap is false: see Curg.
const Cheap = false
