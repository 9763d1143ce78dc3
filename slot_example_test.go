package knit_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/knit-go/knit"
)

// A worker parked on a Slot of its own, as a pool's idle worker is: Put
// hands it a value (waking it, and letting it run at once), Put waits
// while the worker has not taken the last one, and Close ends the
// worker's loop once it has taken everything put before.
func ExampleSlot() {
	var inbox knit.Slot[int] // the zero Slot is ready
	done := make(chan int)
	go func() { // the worker
		sum := 0
		for {
			v, err := inbox.Take(context.Background())
			if errors.Is(err, knit.ErrClosed) {
				done <- sum
				return
			}
			sum += v
		}
	}()
	for i := 1; i <= 10; i++ {
		if err := inbox.Put(context.Background(), i); err != nil {
			panic(err)
		}
	}
	inbox.Close() // the worker still takes the value inside
	fmt.Println(<-done)
	// Output: 55
}

// The calls that never wait, and what they report: a Slot holds one
// value, and a closed Slot still hands out the value it held.
func ExampleSlot_TryPut() {
	var s knit.Slot[string]
	fmt.Println(s.TryPut("a"))
	fmt.Println(errors.Is(s.TryPut("b"), knit.ErrFull))
	s.Close()
	fmt.Println(errors.Is(s.TryPut("c"), knit.ErrClosed))
	v, err := s.TryTake()
	fmt.Println(v, err)
	_, err = s.TryTake()
	fmt.Println(errors.Is(err, knit.ErrClosed))
	// Output:
	// <nil>
	// true
	// true
	// a <nil>
	// true
}
