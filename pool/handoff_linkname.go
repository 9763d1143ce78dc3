//go:build !knit_nolinkname

package pool

// eventHandsOff reports that knit.Event's runtime backend yields a
// waiter's P, on the local run queue, when a Notify on that P has just
// readied the goroutine the waiter waits for (its deferred handoff), so
// that a Wait need not yield before it registers.
const eventHandsOff = true
