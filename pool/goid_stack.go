package pool

import (
	"runtime"
	"sync"
)

// stackBufs recycles curgStack's buffers: runtime.Stack makes its buffer
// escape, and a Wait must not allocate.
var stackBufs = sync.Pool{New: func() any { return new([64]byte) }}

// curgStack identifies the calling goroutine by the id in the first line
// of its stack trace ("goroutine 42 [running]:"): the portable way, at
// about 2 µs a call (BenchmarkCurg), where curg has no instruction to read
// the goroutine's g with.
func curgStack() uintptr {
	buf := stackBufs.Get().(*[64]byte)
	defer stackBufs.Put(buf)
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) {
		return 0
	}
	var id uintptr
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
