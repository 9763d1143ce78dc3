//go:build knit_nolinkname

package knit

import "testing"

// semaPingPong needs the runtime's semaphore, which this build does not
// link.
func semaPingPong(b *testing.B, handoff, locked bool) {
	b.Skip("built with knit_nolinkname")
}
