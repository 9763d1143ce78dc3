//go:build knit_nolinkname

package pool

// eventHandsOff is false where knit is built without the runtime's
// linknamed scheduler calls: its Event then never yields, and a Wait
// yields once itself before it registers.
const eventHandsOff = false
