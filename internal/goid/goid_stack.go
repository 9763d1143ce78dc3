package goid

import (
	"runtime"
	"sync"
)

// stackBufs recycles Stack's buffers: runtime.Stack makes its buffer
// escape, and a caller on a wait path must not allocate.
var stackBufs = sync.Pool{New: func() any { return new([64]byte) }}

// Stack identifies the calling goroutine by the id in the first line of
// its stack trace ("goroutine 42 [running]:"), or returns 0 if the line
// cannot be read. runtime.Stack unwinds and formats the whole stack to
// get there, so the cost grows with the caller's depth.
func Stack() uintptr {
	buf := stackBufs.Get().(*[64]byte)
	defer stackBufs.Put(buf)
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	var id uintptr
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			return id
		}
		id = id*10 + uintptr(c-'0')
	}
	return 0 // the number ran to the end of the buffer: truncated
}
