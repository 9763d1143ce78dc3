package knit_test

import (
	"context"
	"fmt"

	"github.com/knit-go/knit"
)

// One worker watches two queues through one Event of its own: each ring
// is made with KeepFenced, so a submitter's TryPush and then Notify is
// never missed by the worker's Prepare and re-check (WaitFor runs them).
func ExampleKeepFenced() {
	urgent := knit.KeepFenced(knit.NewMPMC[string](64, knit.Park{}))
	normal := knit.KeepFenced(knit.NewMPMC[string](64, knit.Park{}))
	var bell knit.Event

	submit := func(q *knit.MPMC[string], task string) {
		if q.TryPush(task) == nil {
			bell.Notify(1)
		}
	}
	take := func() (string, bool) {
		if v, err := urgent.TryPop(); err == nil {
			return v, true
		}
		v, err := normal.TryPop()
		return v, err == nil
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop() // the worker's WaitFor returns ctx.Err(), and it leaves
	ran := make(chan string)
	go func() {
		for {
			var task string
			cond := func() bool {
				var ok bool
				task, ok = take()
				return ok
			}
			if bell.WaitFor(ctx, cond, knit.Park{}) != nil {
				return
			}
			ran <- task
		}
	}()

	submit(normal, "compact the log")
	fmt.Println(<-ran)
	submit(urgent, "answer the request")
	fmt.Println(<-ran)
	// Output:
	// compact the log
	// answer the request
}
