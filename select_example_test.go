package knit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/knit-go/knit"
)

// Select waits on rings of any kind and element type, channels (here a
// timer's) and a ctx at once, and returns the index of the case that
// fired. Each Select below finds exactly one case ready, or none: the
// third sleeps until the timer fires, the fourth until ctx is cancelled.
func ExampleSelect() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobs := knit.NewMPMC[string](8, knit.Park{})
	urgentIn, urgent := knit.NewSPSC[int](8, knit.Park{}).Ends()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	var job string
	var code int
	var at time.Time
	wait := func() {
		i, err := knit.Select(ctx, knit.Park{},
			knit.PopCase(jobs, &job),
			knit.PopCase(urgent, &code), // this goroutine is the SPSC's consumer
			knit.RecvCase(timer.C, &at),
		)
		switch {
		case err != nil:
			fmt.Println(i, err)
		case i == 0:
			fmt.Println("job", job)
		case i == 1:
			fmt.Println("urgent", code)
		case i == 2:
			fmt.Println("timer fired")
		}
	}

	jobs.TryPush("build")
	wait()
	urgentIn.TryPush(7)
	wait()
	timer.Reset(time.Millisecond)
	wait()
	time.AfterFunc(time.Millisecond, cancel)
	wait()
	// Output:
	// job build
	// urgent 7
	// timer fired
	// -1 context canceled
}

// A loop makes its Selector once, not its cases and wait state at every
// Select. Here a server answers requests from an MPSC ring (any number of
// clients) on an SPSC ring until told to quit; a Close of requests would
// end it too, with ErrClosed once drained.
func ExampleSelector() {
	ctx := context.Background()
	requests := knit.NewMPSC[int](8, knit.Park{})
	replies := knit.NewSPSC[string](8, knit.Park{})
	quit := make(chan struct{})
	stopped := make(chan struct{})

	go func() {
		defer close(stopped)
		out, _ := replies.Ends()
		var n int
		sel := knit.NewSelector(knit.Park{}, knit.PopCase(requests, &n), knit.RecvCase(quit, nil))
		for {
			i, err := sel.Select(ctx)
			if i != 0 || errors.Is(err, knit.ErrClosed) {
				return // quit closed, or requests closed and drained
			}
			out.Push(ctx, fmt.Sprintf("%d squared is %d", n, n*n))
		}
	}()

	_, in := replies.Ends()
	for _, n := range []int{3, 4, 5} {
		requests.Push(ctx, n)
		reply, _ := in.Pop(ctx)
		fmt.Println(reply)
	}
	close(quit)
	<-stopped
	fmt.Println("server stopped")
	// Output:
	// 3 squared is 9
	// 4 squared is 16
	// 5 squared is 25
	// server stopped
}
