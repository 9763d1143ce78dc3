//go:build knit_nolinkname

package knit

import "runtime"

// Built with -tags knit_nolinkname: no runtime semaphore, so the runtime
// backend sleeps on channels (the Event's wait list) for every ctx.

const haveSema = false

func semacquire(*uint32)            { panic("knit: semaphore not linked") }
func semrelease(*uint32, bool, int) { panic("knit: semaphore not linked") }

func goyield() { runtime.Gosched() }

func curP() int { return 0 }
