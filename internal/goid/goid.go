// Package goid identifies the calling goroutine, for code that must tell
// goroutines apart without an ID of its own: the pool's nesting checks
// and the rings' checked build (knit_checkends).
//
// Curg is the address of the goroutine's runtime g where the assembly can
// read it (amd64 and arm64), and the number in its stack trace elsewhere.
// Either is unique among live goroutines; a g, and so Curg's identity, is
// reused once its goroutine has exited: the runtime starts the next
// goroutine on the finished one's g. A caller may use Curg only where it
// forgets a goroutine before that goroutine exits.
//
// ID is the runtime's goroutine id (goid, the number in a stack trace),
// which the runtime never gives to a second goroutine. It suits a record
// that may outlive the goroutine it names. On amd64 and arm64 it is one
// load from the g, at an offset found once by matching the g's words
// against the stack trace's number; elsewhere, or where no offset
// matches, it is that number read from the stack trace.
//
// Both are only ever compared for equality.
package goid
