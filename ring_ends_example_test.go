package knit_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/knit-go/knit"
)

// An SPSC ring split into its ends: the producer goroutine gets the
// pushing end and closes it when done, the consumer the popping end, and
// misuse (a consumer that pushes) does not compile.
func ExampleSPSC_Ends() {
	q := knit.NewSPSC[int](8, knit.Park{})
	tx, rx := q.Ends()

	go func() {
		defer tx.Close() // the sender closes
		for i := range 5 {
			if err := tx.Push(context.Background(), i*i); err != nil {
				return
			}
		}
	}()

	for {
		v, err := rx.Pop(context.Background())
		if errors.Is(err, knit.ErrClosed) {
			break
		}
		fmt.Print(v, " ")
	}
	fmt.Println()
	// Output: 0 1 4 9 16
}

// TryPush and TryPop tell a full or empty ring from a closed one, so a
// polling loop knows when to stop.
func ExampleMPMC_TryPush() {
	q := knit.NewMPMC[string](2, knit.Park{})
	for _, s := range []string{"a", "b", "c"} {
		if err := q.TryPush(s); err != nil {
			fmt.Println(s, err)
		}
	}
	q.Close()
	fmt.Println(q.TryPush("d"))
	for {
		s, err := q.TryPop()
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(s)
	}
	// Output:
	// c knit: full
	// knit: closed
	// a
	// b
	// knit: closed
}
