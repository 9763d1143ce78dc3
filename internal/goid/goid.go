// Package goid identifies the calling goroutine, for code that must tell
// goroutines apart without an ID of its own: the pool's nesting checks
// and the rings' checked build (knit_checkends).
//
// The identity is the address of the goroutine's runtime g where the
// assembly can read it (amd64 and arm64), and the number in its stack
// trace elsewhere. Either is unique among live goroutines; a g, and so
// an identity, may be reused once its goroutine has exited. It is only
// ever compared for equality.
package goid
