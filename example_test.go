package knit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
)

// An SPSC ring's calls are its ends': the producer pushes, the consumer
// pops (here one goroutine holds both; see SPSC.Producer for two).
// TryPush and TryPop never block: they report a full ring (ErrFull) or an
// empty one (ErrEmpty). A ring holds exactly the capacity it was made with.
func ExampleSPSC() {
	q := knit.NewSPSC[string](3, knit.Park{})
	tx, rx := q.Ends()
	fmt.Println(tx.Cap())

	for _, w := range []string{"knit", "purl", "slip", "cast on", "cast off"} {
		if errors.Is(tx.TryPush(w), knit.ErrFull) {
			fmt.Println("full at", w)
		}
	}
	for {
		w, err := rx.TryPop()
		if err != nil { // knit.ErrEmpty
			break
		}
		fmt.Println(w)
	}
	// Output:
	// 3
	// full at cast on
	// full at cast off
	// knit
	// purl
	// slip
}

// Items pushed before Close stay in the ring: Pop hands them out, then
// reports ErrClosed. A push after Close fails and keeps nothing.
func ExampleSPSCProducer_Close() {
	q := knit.NewSPSC[int](4, knit.Park{})
	tx, rx := q.Ends()
	tx.TryPush(1)
	tx.TryPush(2)
	tx.Close()
	fmt.Println(tx.TryPush(3))

	ctx := context.Background()
	for {
		v, err := rx.Pop(ctx)
		if errors.Is(err, knit.ErrClosed) {
			fmt.Println("drained")
			break
		}
		fmt.Println(v)
	}
	// Output:
	// knit: closed
	// 1
	// 2
	// drained
}

// Many producers, one consumer. Any goroutine may close an MPSC ring;
// here the one that sees every producer finish does.
func ExampleMPSC() {
	q := knit.NewMPSC[int](64, knit.Park{})
	ctx := context.Background()

	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := range 100 {
				q.Push(ctx, p*100+i) // blocks while the ring is full
			}
		})
	}
	go func() {
		wg.Wait()
		q.Close()
	}()

	sum, n := 0, 0
	for {
		v, err := q.Pop(ctx)
		if err != nil {
			break
		}
		sum, n = sum+v, n+1
	}
	fmt.Println(n, sum)
	// Output: 400 79800
}

// TryPushBatch and TryPopBatch move as many items as fit in one update of
// the ring's index. Neither blocks: they report how many they moved, and
// why they stopped short (PushBatch and PopBatch wait instead).
func ExampleMPSC_TryPushBatch() {
	q := knit.NewMPSC[int](4, knit.Park{})
	fmt.Println(q.TryPushBatch([]int{1, 2, 3, 4, 5, 6})) // room for four

	dst := make([]int, 3)
	n, err := q.TryPopBatch(dst)
	fmt.Println(dst[:n], err, q.Len())
	// Output:
	// 4 knit: full
	// [1 2 3] <nil> 1
}

// One producer fans work out to several consumers; each item is popped by
// exactly one of them. The producer closes the ring, as a channel's sender
// does, and every consumer returns once it is drained.
func ExampleSPMC() {
	q := knit.NewSPMC[int](32, knit.Park{})
	ctx := context.Background()

	var total atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				v, err := q.Pop(ctx)
				if err != nil {
					return
				}
				total.Add(int64(v))
			}
		})
	}

	for i := 1; i <= 1000; i++ {
		q.Push(ctx, i)
	}
	q.Close()
	wg.Wait()
	fmt.Println(total.Load())
	// Output: 500500
}

// A blocking Pop gives up when its context ends.
func ExampleMPMC_Pop() {
	q := knit.NewMPMC[int](8, knit.Park{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()

	_, err := q.Pop(ctx) // nothing will come
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output: true
}

// An MPMC ring as a shared job queue: several submitters, several
// workers, and every job done once.
func ExampleMPMC() {
	jobs := knit.NewMPMC[int](128, knit.Park{})
	ctx := context.Background()

	var done atomic.Int64
	var workers sync.WaitGroup
	for range 2 {
		workers.Go(func() {
			for {
				if _, err := jobs.Pop(ctx); err != nil {
					return
				}
				done.Add(1)
			}
		})
	}

	var submitters sync.WaitGroup
	for range 3 {
		submitters.Go(func() {
			for j := range 500 {
				jobs.Push(ctx, j)
			}
		})
	}
	submitters.Wait()
	jobs.Close()
	workers.Wait()
	fmt.Println(done.Load())
	// Output: 1500
}

// A Words ring carries uint64 values, here slot indices into a table the
// two goroutines share, with the batch paths in assembly.
func ExampleWords() {
	table := []string{"alpha", "beta", "gamma", "delta"}
	q := knit.NewWords(8, knit.Park{})
	tx, rx := q.Ends()

	go func() {
		defer tx.Close()
		tx.TryPushBatch([]uint64{3, 1, 2}) // the ring is empty: all three fit
	}()

	for {
		i, err := rx.Pop(context.Background())
		if err != nil {
			break
		}
		fmt.Println(table[i])
	}
	// Output:
	// delta
	// beta
	// gamma
}

// A Backoff spins briefly while another goroutine is expected to finish
// soon, and says when to stop spinning and block instead.
func ExampleBackoff() {
	var ready atomic.Bool
	done := make(chan struct{})
	go func() {
		ready.Store(true)
		close(done)
	}()

	b := knit.Backoff{Budget: 20 * time.Microsecond}
	for !ready.Load() {
		if b.IsCompleted() {
			<-done // spun long enough: block
			break
		}
		b.Snooze()
	}
	fmt.Println(ready.Load())
	// Output: true
}

// SpinUntil watches a word for a short while; if it has not changed by
// then, the waiter sleeps on it in the kernel with FutexWait. The writer
// stores, then wakes.
func ExampleSpinUntil() {
	var word atomic.Uint32
	go func() {
		word.Store(1)
		knit.FutexWake(&word, 1)
	}()

	if !knit.SpinUntil(&word, 0, 10*time.Microsecond) {
		for word.Load() == 0 {
			knit.FutexWait(&word, 0, 0) // may return early: re-check
		}
	}
	fmt.Println(word.Load())
	// Output: 1
}

// FutexWait sleeps only while the word holds the expected value, so a
// wait for a value already gone returns at once; a timeout is ErrTimeout.
func ExampleFutexWait() {
	var word atomic.Uint32
	word.Store(7)
	fmt.Println(knit.FutexWait(&word, 0, 0)) // word is 7, not 0: no sleep

	var err error
	for err == nil && word.Load() == 7 { // a wait may end early: re-check
		err = knit.FutexWait(&word, 7, time.Millisecond)
	}
	fmt.Println(errors.Is(err, knit.ErrTimeout))
	// Output:
	// <nil>
	// true
}

// FutexWake wakes sleepers after the word has changed; it reports how
// many it woke, and with nobody asleep it wakes none.
func ExampleFutexWake() {
	var word atomic.Uint32
	woke := make(chan struct{})
	go func() {
		for word.Load() == 0 {
			knit.FutexWait(&word, 0, 0)
		}
		close(woke)
	}()

	time.Sleep(time.Millisecond) // let the waiter fall asleep (not required)
	word.Store(1)
	knit.FutexWake(&word, 1)
	<-woke
	fmt.Println("woken")
	// Output: woken
}
