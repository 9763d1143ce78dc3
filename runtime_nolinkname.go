//go:build knit_nolinkname

package knit

import (
	"unsafe"
)

// Built with -tags knit_nolinkname: nothing linked from the runtime, so
// the runtime backend sleeps on channels (the Event's wait list) for
// every ctx; parkLinked keeps it off gopark and goready.

const haveLinkname = false

func semacquire(*uint32)            { panic("knit: semaphore not linked") }
func semrelease(*uint32, bool, int) { panic("knit: semaphore not linked") }

func curP() int { return 0 }

func gopark(func(gp, lock unsafe.Pointer) bool, unsafe.Pointer, uint8, uint8, int) {
	panic("knit: gopark not linked")
}

func goready(unsafe.Pointer, int) { panic("knit: goready not linked") }
