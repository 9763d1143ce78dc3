//go:build knit_checkends

package knit

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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
	spsc, words := NewSPSC[int](64, Park{}), NewWords(64, Park{})
	mpsc, spmc := NewMPSC[int](64, Park{}), NewSPMC[int](64, Park{})
	mbox, bcast := NewMailbox[int](Park{}), NewBroadcast[int](64, Park{})
	bsub := bcast.Subscribe()
	sides := []side{
		{"SPSC producer", func() { prod(spsc.Ends()).TryPush(1); cons(spsc.Ends()).TryPop() }},
		{"Words producer", func() { prod(words.Ends()).TryPushBatch([]uint64{1}); cons(words.Ends()).TryPop() }},
		{"MPSC consumer", func() { mpsc.TryPush(1); mpsc.TryPop() }},
		{"SPMC producer", func() { spmc.TryPush(1); spmc.TryPop() }},
		{"Mailbox consumer", func() { mbox.TryPush(1); mbox.TryPop() }},
		{"Broadcast producer and subscription", func() { bcast.TryPushBatch([]int{1}); bsub.TryPop() }},
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
	q := NewSPSC[int](8, Park{})
	handoff := make(chan SPSCProducer[int])
	go func() {
		tx, _ := q.Ends()
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
	for range All(context.Background(), cons(q.Ends())) {
		n++
	}
	if n != 2000 {
		t.Fatalf("%d of 2000 items", n)
	}
}

// producerRing is a ring with one producer, seen through the calls the
// foreign-Close tests make.
type producerRing struct {
	name  string
	push  func(v int) error // one non-blocking producer call
	close func()
	drain func() int // pops until closed and drained; the count
}

func producerRings() []producerRing {
	spsc, words, spmc := NewSPSC[int](16, Park{}), NewWords(16, Park{}), NewSPMC[int](16, Park{})
	bcast := NewBroadcast[int](16, Park{})
	bsub := bcast.Subscribe()
	stx, _ := spsc.Ends()
	wtx, _ := words.Ends()
	return []producerRing{
		{"SPSC", stx.TryPush, stx.Close, func() int { return countAll(All(context.Background(), cons(spsc.Ends()))) }},
		{"Words", func(v int) error { return wtx.TryPush(uint64(v)) }, wtx.Close,
			func() int { return countAll(All(context.Background(), cons(words.Ends()))) }},
		{"SPMC", spmc.TryPush, spmc.Close, func() int { return countAll(All(context.Background(), spmc)) }},
		{"Broadcast", bcast.TryPush, bcast.Close, func() int { return countAll(All(context.Background(), bsub)) }},
	}
}

func countAll[T any](seq func(func(T) bool)) int {
	n := 0
	for range seq {
		n++
	}
	return n
}

// catch runs f and returns the string it panicked with, or "".
func catch(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "non-string panic"
			}
		}
	}()
	f()
	return ""
}

// TestCheckedEndsForeignClose: a Close from another goroutine while the
// producer goes on pushing is the race that can undo the Close (the
// producer's next index store carries no closed bit). The checked build
// catches it every time, not only when the two calls overlap: Close
// panics if the producer is inside a call, and otherwise the producer's
// next call does. A Close made after the producer's last call, or by the
// producer itself, is legitimate and never panics.
func TestCheckedEndsForeignClose(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	for _, r := range producerRings() {
		t.Run(r.name+"/racing", func(t *testing.T) {
			var pushed atomic.Int64
			var stop atomic.Bool // Close panicked, so the ring stays open
			producer := make(chan string, 1)
			go func() {
				producer <- catch(func() {
					deadline := time.Now().Add(parkWatchdogTime)
					for !stop.Load() && time.Now().Before(deadline) {
						if err := r.push(1); err == ErrClosed {
							return // closed, and nothing noticed the race
						}
						pushed.Add(1)
					}
				})
			}()
			for pushed.Load() < 100 {
				runtime.Gosched()
			}
			closeMsg := catch(r.close)
			stop.Store(closeMsg != "")
			prodMsg := <-producer
			msg := closeMsg + prodMsg
			if msg == "" {
				t.Fatalf("Close from another goroutine while the producer pushed: no panic; the producer saw ErrClosed")
			}
			if !strings.Contains(msg, "knit_checkends") {
				t.Fatalf("panic %q does not name the check", msg)
			}
		})
	}
	for _, r := range producerRings() {
		t.Run(r.name+"/after-last-push", func(t *testing.T) {
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := range 10 {
					if err := r.push(i); err != nil {
						t.Errorf("push %d: %v", i, err)
					}
				}
			})
			wg.Wait()
			if msg := catch(r.close); msg != "" {
				t.Fatalf("Close after the producer's last call panicked: %s", msg)
			}
			if n := r.drain(); n != 10 {
				t.Fatalf("%d of 10 items after Close", n)
			}
		})
	}
	for _, r := range producerRings() {
		t.Run(r.name+"/by-producer", func(t *testing.T) {
			done := make(chan string, 1)
			go func() {
				done <- catch(func() {
					for i := range 10 {
						r.push(i)
					}
					r.close()
					if err := r.push(0); err != ErrClosed {
						t.Errorf("push after Close: %v", err)
					}
				})
			}()
			if msg := <-done; msg != "" {
				t.Fatalf("the producer's own Close panicked: %s", msg)
			}
			if n := r.drain(); n != 10 {
				t.Fatalf("%d of 10 items after Close", n)
			}
		})
	}
}

// TestCheckedEndsParkedTwice: a blocked call holds its side for the whole
// wait, so a second goroutine that blocks on the same single side panics
// while the first is parked, not only when their attempts overlap.
func TestCheckedEndsParkedTwice(t *testing.T) {
	spsc, words := NewSPSC[int](4, Park{}), NewWords(4, Park{})
	mpsc, mbox := NewMPSC[int](4, Park{}), NewMailbox[int](Park{})
	spmc := NewSPMC[int](1, Park{})
	bcast := NewBroadcast[int](4, Park{})
	bsub := bcast.Subscribe()
	ctx := context.Background()
	cases := []struct {
		name  string
		bell  *Event
		block func(ctx context.Context) error // blocks until woken or ctx ends
		wake  func()
	}{
		{"SPSC consumer", &spsc.bells.notEmpty.Event, func(ctx context.Context) error { _, err := cons(spsc.Ends()).Pop(ctx); return err }, func() { prod(spsc.Ends()).TryPush(1) }},
		{"Words consumer", &words.r.bells.notEmpty.Event, func(ctx context.Context) error { _, err := cons(words.Ends()).Pop(ctx); return err }, func() { prod(words.Ends()).TryPush(1) }},
		{"MPSC consumer", &mpsc.bells.notEmpty.Event, func(ctx context.Context) error {
			_, err := mpsc.PopBatch(ctx, make([]int, 2))
			return err
		}, func() { mpsc.TryPush(1) }},
		{"Mailbox consumer", nil, func(ctx context.Context) error { _, err := mbox.Pop(ctx); return err }, func() { mbox.TryPush(1) }},
		{"Subscription", &bsub.bellsOf().notEmpty.Event, func(ctx context.Context) error {
			return bsub.PopFunc(ctx, func(*int) {})
		}, func() { bcast.TryPush(1) }},
		{"SPMC producer", &spmc.bells.notFull.Event, func(ctx context.Context) error { return spmc.Push(ctx, 2) }, func() { spmc.TryPop() }},
	}
	spmc.TryPush(1) // full: the producer blocks
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.bell == nil {
				c.bell = &mbox.bellsOf().notEmpty.Event
			}
			first := make(chan error, 1)
			go func() { first <- c.block(ctx) }()
			deadline := time.Now().Add(parkWatchdogTime)
			for c.bell.Waiters() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the first caller never registered")
				}
				runtime.Gosched()
			}
			// Unchecked, the second call would park too: its ctx ends it.
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			msg := catch(func() { c.block(sctx) })
			c.wake()
			select {
			case err := <-first:
				if err != nil {
					t.Fatalf("first caller: %v", err)
				}
			case <-time.After(parkWatchdogTime):
				t.Fatal("first caller not woken")
			}
			if !strings.Contains(msg, "two goroutines used the") {
				t.Fatalf("a second goroutine blocking beside a parked one: panic %q", msg)
			}
		})
	}
}

// TestCheckedEndsFreshGoroutineAfterClose: the documented way to close a
// ring from outside its producer (the producer's last call, then a
// WaitGroup, then Close) leaves the ring closed, and a goroutine that
// never was its producer, handed the closed end afterwards, gets ErrClosed
// from its first call. It must not be taken for the old producer: the
// runtime hands a finished goroutine's g to the next one it starts, so
// every round here is likely to run the new goroutine on the old
// producer's g, and the checked build once panicked in nearly all of
// them.
func TestCheckedEndsFreshGoroutineAfterClose(t *testing.T) {
	const rounds = 200
	for i, r := range producerRings() {
		name := r.name
		t.Run(name, func(t *testing.T) {
			for round := range rounds {
				r := producerRings()[i] // a fresh ring each round
				var wg sync.WaitGroup
				wg.Go(func() {
					if err := r.push(1); err != nil {
						t.Errorf("round %d: push: %v", round, err)
					}
				})
				wg.Wait()
				if msg := catch(r.close); msg != "" {
					t.Fatalf("round %d: Close after the producer's last call panicked: %s", round, msg)
				}
				var err error
				msg := "no result"
				wg.Go(func() { msg = catch(func() { err = r.push(2) }) })
				wg.Wait()
				if msg != "" {
					t.Fatalf("round %d: a new goroutine's push on the closed %s panicked: %s", round, name, msg)
				}
				if err != ErrClosed {
					t.Fatalf("round %d: a new goroutine's push on the closed %s: %v, want ErrClosed", round, name, err)
				}
				if n := r.drain(); n != 1 {
					t.Fatalf("round %d: %d of 1 item after Close", round, n)
				}
			}
		})
	}
}
