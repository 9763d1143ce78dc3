package inboxpool_test

import (
	"fmt"
	"sync/atomic"

	"github.com/knit-go/knit/examples/inboxpool"
)

// A pool of two workers with inboxes of 256 tasks: Go returns once the
// task is queued, Close once every queued task has run.
func ExamplePool() {
	p := inboxpool.New(2, 256)
	var sum atomic.Int64
	for i := 1; i <= 100; i++ {
		if err := p.Go(func() { sum.Add(int64(i)) }); err != nil {
			panic(err)
		}
	}
	p.Close()
	fmt.Println(sum.Load())
	// Output: 5050
}
