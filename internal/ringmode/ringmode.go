// Package ringmode lets code in this module that waits for a knit ring
// through doorbells of its own (the pool's workers) keep the ring's
// publishes ordered before the publisher's later loads.
//
// A ring's doorbell goes relaxed once nobody has waited through the ring's
// own calls for a while, and its publishes are then plain stores that a
// later load may pass (bell.go, "Publication and the doorbell"). A caller
// that publishes and then loads a waiter flag of its own needs a fence
// after every publish; on a ring kept fenced the publish is that fence
// (XCHG on amd64), one locked instruction where a relaxed publish and a
// fence are a store and then a locked instruction that waits for it.
package ringmode

var keepFenced func(ring any) bool

// SetKeepFenced installs package knit's implementation, at its init.
func SetKeepFenced(f func(ring any) bool) { keepFenced = f }

// KeepFenced keeps ring's doorbells fenced for good, and reports whether
// ring is a knit ring whose doorbells it could reach. Call it before the
// ring is shared.
func KeepFenced(ring any) bool { return keepFenced != nil && keepFenced(ring) }
