package knit_test

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/knit-go/knit"
)

// An actor's inbox: senders never wait, whatever the backlog; the actor
// takes messages in order and, after Close, drains what was sent before
// it.
func ExampleMailbox() {
	type msg struct {
		from, n int
	}
	ctx := context.Background()
	inbox := knit.NewMailbox[msg](knit.Park{})

	var senders sync.WaitGroup
	for from := range 3 {
		senders.Go(func() {
			for n := range 1000 {
				inbox.Push(ctx, msg{from, n}) // never waits; ErrClosed once closed
			}
		})
	}
	go func() {
		senders.Wait()
		inbox.Close()
	}()

	total, last := 0, [3]int{-1, -1, -1}
	for m := range knit.All(ctx, inbox) {
		if m.n != last[m.from]+1 {
			panic("out of order") // each sender's messages arrive in order
		}
		last[m.from] = m.n
		total++
	}
	fmt.Println(total, inbox.Cap() == math.MaxInt)
	// Output: 3000 true
}

// A Mailbox is a case of Select like any ring: here an actor waits for a
// message or a stop signal.
func ExampleMailbox_select() {
	ctx := context.Background()
	inbox := knit.NewMailbox[string](knit.Park{})
	stop := make(chan struct{})
	inbox.TryPush("hello") // nil: an open Mailbox is never full

	var m string
	for {
		i, err := knit.Select(ctx, knit.Park{}, knit.PopCase(inbox, &m), knit.RecvCase(stop, nil))
		if i == 1 || err != nil {
			break
		}
		fmt.Println(m)
		close(stop)
	}
	// Output: hello
}
