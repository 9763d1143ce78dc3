//go:build knit_checkends

package knit

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCheckedEndsCatchSharing: in a knit_checkends build, two goroutines
// on one single side panic with a message naming the ring and the side,
// for every ring with a single side; one goroutine per side, and a side
// handed on through the program's own synchronisation, never panic.
func TestCheckedEndsCatchSharing(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	type side struct {
		name string
		use  func() // one call on the single side; it must not block
	}
	spsc, words := NewSPSC[int](64), NewWords(64)
	mpsc, spmc := NewMPSC[int](64), NewSPMC[int](64)
	mbox, bcast := NewMailbox[int](), NewBroadcast[int](64)
	bsub := bcast.Subscribe()
	sides := []side{
		{"SPSC producer", func() { spsc.Producer().TryPush(1); spsc.Consumer().TryPop() }},
		{"Words producer", func() { words.Producer().PushBatch([]uint64{1}); words.TryPop() }},
		{"MPSC consumer", func() { mpsc.TryPush(1); mpsc.TryPop() }},
		{"SPMC producer", func() { spmc.TryPush(1); spmc.TryPop() }},
		{"Mailbox consumer", func() { mbox.TryPush(1); mbox.TryPop() }},
		{"Broadcast producer and subscription", func() { bcast.PushBatch([]int{1}); bsub.TryPop() }},
	}
	for _, s := range sides {
		t.Run(s.name, func(t *testing.T) {
			deadline := time.Now().Add(20 * time.Second)
			caught := make(chan string, 2)
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					defer func() {
						if r := recover(); r != nil {
							msg, _ := r.(string)
							caught <- msg
						}
					}()
					for len(caught) == 0 && time.Now().Before(deadline) {
						for range 1000 {
							s.use()
						}
					}
				})
			}
			wg.Wait()
			if len(caught) == 0 {
				t.Fatalf("two goroutines shared the %s for 20 s and nothing panicked", s.name)
			}
			if msg := <-caught; !strings.Contains(msg, "two goroutines used the") || !strings.Contains(msg, "knit_checkends") {
				t.Fatalf("panic %q does not name the misuse", msg)
			}
		})
	}

	// Legitimate use: one producer and one consumer goroutine, and a
	// producer side handed to a second goroutine after the first one's
	// pushes, through a channel.
	q := NewSPSC[int](8)
	handoff := make(chan SPSCProducer[int])
	go func() {
		tx := q.Producer()
		for i := range 1000 {
			tx.Push(context.Background(), i)
		}
		handoff <- tx
	}()
	go func() {
		tx := <-handoff
		for i := 1000; i < 2000; i++ {
			tx.Push(context.Background(), i)
		}
		tx.Close()
	}()
	n := 0
	for range q.Consumer().All(context.Background()) {
		n++
	}
	if n != 2000 {
		t.Fatalf("%d of 2000 items", n)
	}
}
