package pool

import (
	"bytes"
	"runtime"
	"sync"

	"github.com/knit-go/knit/internal/goid"
)

// curgStack identifies the calling goroutine by the id in its stack trace
// (goid.Stack). runtime.Stack formats the whole stack to get there (up to
// 100 frames printed, every frame unwound), whatever the buffer holds, so
// its cost grows with the depth; BenchmarkCurg (BENCHMARKS.md, "Pool")
// compares it with curgSpawn's. A task waiting on its own pool waits on
// top of the stacks of the tasks below it, so that depth is what nesting
// reaches; curgSpawn does not pay it.
func curgStack() uintptr { return goid.Stack() }

// curgSpawn identifies the calling goroutine by starting one that reads
// its creator's id from its own stack trace ("created by ... in goroutine
// 42"): a trace of one frame, so the cost does not grow with the caller's
// depth. It is a goroutine start, two switches and a short trace, at the
// same cost at any depth (BENCHMARKS.md, "Pool", which goroutine is
// waiting), and it allocates nothing (the goroutine's func value is bound
// once per idAsk). The goroutine it starts lives only for that exchange
// and runs no task. Where the line cannot be read it falls back to
// curgStack.
func curgSpawn() uintptr {
	a := idAsks.Get().(*idAsk)
	go a.run()
	id := <-a.c
	idAsks.Put(a)
	if id == 0 {
		return curgStack()
	}
	return id
}

// idAsk is one curgSpawn question, recycled.
type idAsk struct {
	run func() // a.answer, bound once: a go statement of it allocates nothing
	c   chan uintptr
	// buf holds the spawned goroutine's trace: its header, its one frame
	// and the created-by line, each file path in full.
	buf [1024]byte
}

var idAsks = sync.Pool{New: func() any {
	a := &idAsk{c: make(chan uintptr, 1)}
	a.run = a.answer
	return a
}}

// answer runs on the goroutine curgSpawn starts and sends back the id of
// the goroutine that started it, or 0 if its trace does not say.
func (a *idAsk) answer() {
	a.c <- creatorID(a.buf[:runtime.Stack(a.buf[:], false)])
}

// creatorID parses N in the first "created by F in goroutine N" line of
// trace, or returns 0. The first: GODEBUG=tracebackancestors appends the
// ancestors' traces, created-by lines included, after the goroutine's own.
// The line must end in the buffer, so a truncated number is never read.
func creatorID(trace []byte) uintptr {
	const created, in = "\ncreated by ", " in goroutine "
	i := bytes.Index(trace, []byte(created))
	if i < 0 {
		return 0
	}
	line := trace[i+len(created):]
	end := bytes.IndexByte(line, '\n')
	if end < 0 {
		return 0
	}
	line = line[:end]
	j := bytes.LastIndex(line, []byte(in))
	if j < 0 {
		return 0
	}
	digits := line[j+len(in):]
	if len(digits) == 0 || len(digits) > 19 {
		return 0
	}
	var id uintptr
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
