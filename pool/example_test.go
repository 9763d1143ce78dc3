package pool_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit/pool"
)

func ExampleNew() {
	p := pool.New(pool.Config{}) // GOMAXPROCS workers
	defer p.Close()

	sq := pool.NewTask(p, func(x int) int { return x * x })
	v, err := sq.Call(3).Wait(context.Background())
	fmt.Println(v, err)
	// Output: 9 <nil>
}

func ExampleTask_Call() {
	p := pool.New(pool.Config{Workers: 2})
	defer p.Close()

	upper := pool.NewTask(p, func(s string) int { return len(s) })
	// Submit several calls, then wait for them all.
	futures := []pool.Future[int]{upper.Call("knit"), upper.Call("pool"), upper.Call("go")}
	for _, f := range futures {
		n, _ := f.Wait(context.Background())
		fmt.Print(n, " ")
	}
	fmt.Println()
	// Output: 4 4 2
}

func ExampleTask_CallContext() {
	p := pool.New(pool.Config{Workers: 1, QueueSize: 1})
	release := make(chan struct{})
	started := make(chan struct{})
	p.Go(func() { close(started); <-release }) // occupies the worker
	<-started
	p.Go(func() {}) // fills the queue

	double := pool.NewTask(p, func(x int) int { return 2 * x })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	f := double.CallContext(ctx, 21) // waits for room until ctx ends, then gives up
	_, err := f.Wait(context.Background())
	fmt.Println(err)

	close(release)
	v, err := double.CallContext(context.Background(), 21).Wait(context.Background())
	fmt.Println(v, err)
	p.Close()
	// Output:
	// context deadline exceeded
	// 42 <nil>
}

func ExampleTask_CallBatch() {
	p := pool.New(pool.Config{Workers: 2})
	defer p.Close()

	double := pool.NewTask(p, func(x int) int { return 2 * x })
	ins := []int{1, 2, 3, 4}
	out := make([]pool.Future[int], len(ins))
	double.CallBatch(ins, out) // the calls travel together, one queue entry per worker
	for _, f := range out {
		v, _ := f.Wait(context.Background())
		fmt.Print(v, " ")
	}
	fmt.Println()
	// Output: 2 4 6 8
}

func ExampleWaitAll() {
	p := pool.New(pool.Config{Workers: 1})
	defer p.Close()

	inc := pool.NewTask(p, func(x int) int { return x + 1 })
	ins := []int{10, 20, 30}
	fs := make([]pool.Future[int], len(ins))
	inc.CallBatch(ins, fs) // the calls go out together
	out := make([]int, len(fs))
	n, err := pool.WaitAll(context.Background(), fs, out) // and come back together
	fmt.Println(n, err, out)
	// Output: 3 <nil> [11 21 31]
}

func ExampleFuture_Wait() {
	p := pool.New(pool.Config{Workers: 1})
	defer p.Close()

	task := pool.NewTask(p, func(x int) int {
		if x < 0 {
			panic("negative")
		}
		return x
	})
	_, err := task.Call(-1).Wait(context.Background())
	var pe *pool.PanicError
	fmt.Println(errors.As(err, &pe), pe.Value)

	f := task.Call(5)
	v, err := f.Wait(context.Background())
	fmt.Println(v, err)
	_, err = f.Wait(context.Background()) // the value was taken
	fmt.Println(errors.Is(err, pool.ErrFutureUsed))
	// Output:
	// true negative
	// 5 <nil>
	// true
}

func ExamplePool_Go() {
	p := pool.New(pool.Config{Workers: 4})
	var sum atomic.Int64
	for i := 1; i <= 100; i++ {
		p.Go(func() { sum.Add(int64(i)) })
	}
	p.Close() // runs everything accepted, then returns
	fmt.Println(sum.Load())
	fmt.Println(p.Go(func() {}))
	// Output:
	// 5050
	// pool: closed
}

func ExamplePool_TryGo() {
	p := pool.New(pool.Config{Workers: 1, QueueSize: 1})
	release := make(chan struct{})
	started := make(chan struct{})
	p.Go(func() { close(started); <-release }) // occupies the worker
	<-started
	fmt.Println(p.TryGo(func() {})) // fills the queue
	fmt.Println(p.TryGo(func() {})) // full
	close(release)
	p.Close()
	// Output:
	// true
	// false
}

func ExamplePool_Shutdown() {
	p := pool.New(pool.Config{Workers: 1})
	release := make(chan struct{})
	started := make(chan struct{})
	p.Go(func() { close(started); <-release })
	<-started
	f := pool.NewTask(p, func(x int) int { return x }).Call(1) // queued behind it

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := p.Shutdown(ctx)
	var se *pool.ShutdownError
	fmt.Println(errors.As(err, &se), se.Abandoned, errors.Is(err, context.DeadlineExceeded))
	_, err = f.Wait(context.Background())
	fmt.Println(err)

	close(release)
	p.Close() // waits for the running task
	// Output:
	// true 1 true
	// pool: closed
}

func ExamplePool_Stats() {
	p := pool.New(pool.Config{Workers: 2})
	sq := pool.NewTask(p, func(x int) int { return x * x })
	for i := range 10 {
		sq.Call(i).Wait(context.Background())
	}
	p.Close()
	s := p.Stats()
	fmt.Println(s.Workers, s.Submitted, s.Completed, s.QueueDepth)
	// Output: 0 10 10 0
}

func ExamplePool_Resize() {
	p := pool.New(pool.Config{Workers: 2})
	defer p.Close()

	release := make(chan struct{})
	var ran atomic.Int32
	for range 10 {
		p.Go(func() { <-release; ran.Add(1) }) // queued and running
	}
	p.Resize(8) // grow while they wait: six more workers
	fmt.Println(p.Stats().Workers)
	p.Resize(1) // shrink: the removed workers finish, and run what they hold
	fmt.Println(p.Stats().Workers)
	close(release)
	for p.Stats().Retiring > 0 || ran.Load() < 10 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println(ran.Load(), p.Stats().Retiring)
	// Output:
	// 8
	// 1
	// 10 0
}

func ExampleSubmit() {
	p := pool.New(pool.Config{})
	defer p.Close()
	ctx := context.Background()

	f := pool.Submit(ctx, p, func() (string, error) { return strings.ToUpper("knit"), nil })
	v, err := f.Wait(ctx)
	fmt.Println(v, err)

	errNotFound := errors.New("not found")
	f2 := pool.Submit(ctx, p, func() (int, error) { return 0, errNotFound })
	_, err = f2.Wait(ctx)
	fmt.Println(errors.Is(err, errNotFound)) // fn's error, unchanged

	f3 := pool.Submit(ctx, p, func() (int, error) { panic("boom") })
	_, err = f3.Wait(ctx)
	var pe *pool.PanicError
	fmt.Println(errors.As(err, &pe), pe.Value)
	// Output:
	// KNIT <nil>
	// true
	// true boom
}

func ExampleFuture_Done() {
	p := pool.New(pool.Config{})
	defer p.Close()
	ctx := context.Background()

	f := pool.Submit(ctx, p, func() (int, error) { return 42, nil })
	select {
	case <-f.Done(): // closed when the result is ready
		v, err := f.Wait(ctx) // does not block
		fmt.Println(v, err)
	case <-time.After(10 * time.Second):
		fmt.Println("timed out")
	}

	// Two results in a select loop: a case whose result was taken is
	// disabled by setting its Future to the zero Future, whose Done is a
	// nil channel, as a channel case is disabled by setting it to nil.
	a := pool.Submit(ctx, p, func() (string, error) { return "a", nil })
	b := pool.Submit(ctx, p, func() (string, error) { return "b", nil })
	n := 0
	for a != (pool.Future[string]{}) || b != (pool.Future[string]{}) {
		select {
		case <-a.Done():
			a.Wait(ctx)
			a = pool.Future[string]{}
		case <-b.Done():
			b.Wait(ctx)
			b = pool.Future[string]{}
		}
		n++
	}
	fmt.Println(n, "results")
	// Output:
	// 42 <nil>
	// 2 results
}

func ExampleGroup() {
	p := pool.New(pool.Config{})
	defer p.Close()

	g, ctx := pool.NewGroup(context.Background(), p)
	words := []string{"knit", "pool", "group"}
	lengths := make([]int, len(words))
	for i, w := range words {
		g.Go(func() error {
			lengths[i] = len(w)
			return nil
		})
	}
	err := g.Wait()
	fmt.Println(lengths, err)
	fmt.Println(ctx.Err()) // the group's context ends when Wait returns
	// Output:
	// [4 4 5] <nil>
	// context canceled
}

func ExampleGroup_error() {
	p := pool.New(pool.Config{Workers: 2})
	defer p.Close()

	errBad := errors.New("bad input")
	g, ctx := pool.NewGroup(context.Background(), p)
	g.Go(func() error { return errBad })
	g.Go(func() error {
		<-ctx.Done() // the first failure cancels the group's context
		return ctx.Err()
	})
	err := g.Wait()
	fmt.Println(err, errors.Is(context.Cause(ctx), errBad))
	// Output: bad input true
}

func ExampleGroup_SetLimit() {
	p := pool.New(pool.Config{Workers: 4})
	defer p.Close()

	g, _ := pool.NewGroup(context.Background(), p)
	g.SetLimit(2) // at most two tasks of the group queued or running
	var active, most atomic.Int32
	for range 20 {
		g.Go(func() error { // waits while two are active
			n := active.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(100 * time.Microsecond)
			active.Add(-1)
			return nil
		})
	}
	fmt.Println(g.Wait(), most.Load() <= 2)
	// Output: <nil> true
}

func ExampleGroup_TryGo() {
	p := pool.New(pool.Config{Workers: 2})
	defer p.Close()

	g, _ := pool.NewGroup(context.Background(), p)
	g.SetLimit(1)
	release := make(chan struct{})
	fmt.Println(g.TryGo(func() error { <-release; return nil })) // takes the one slot
	fmt.Println(g.TryGo(func() error { return nil }))            // at the limit: not queued
	close(release)
	fmt.Println(g.Wait())
	// Output:
	// true
	// false
	// <nil>
}

func ExampleNewGroupCollect() {
	p := pool.New(pool.Config{})
	defer p.Close()

	g, ctx := pool.NewGroupCollect(context.Background(), p)
	var ran atomic.Int32
	for _, name := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		g.Go(func() error {
			ran.Add(1) // every task runs: a failure cancels nothing
			if name == "b.txt" || name == "d.txt" {
				return fmt.Errorf("%s: not found", name)
			}
			return ctx.Err()
		})
	}
	err := g.Wait() // errors.Join of every error
	fmt.Println(ran.Load(), len(err.(interface{ Unwrap() []error }).Unwrap()))
	fmt.Println(strings.Contains(err.Error(), "b.txt: not found"), strings.Contains(err.Error(), "d.txt: not found"))
	// Output:
	// 4 2
	// true true
}

func ExampleMap() {
	p := pool.New(pool.Config{})
	defer p.Close()

	squares, err := pool.Map(context.Background(), p, []int{1, 2, 3, 4, 5}, func(x int) (int, error) {
		return x * x, nil
	})
	fmt.Println(squares, err) // in input order

	_, err = pool.Map(context.Background(), p, []string{"1", "x", "3"}, func(s string) (int, error) {
		if s == "x" {
			return 0, fmt.Errorf("not a digit: %q", s)
		}
		return int(s[0] - '0'), nil
	})
	fmt.Println(err)
	// Output:
	// [1 4 9 16 25] <nil>
	// not a digit: "x"
}

func ExampleMapSeq() {
	p := pool.New(pool.Config{})
	defer p.Close()

	words := strings.Fields("knit a pool of workers") // strings.FieldsSeq's elements, say
	lengths, err := pool.MapSeq(context.Background(), p, slices.Values(words), func(w string) (int, error) {
		return len(w), nil
	})
	fmt.Println(lengths, err) // in input order
	// Output: [4 1 4 2 7] <nil>
}

func ExampleMapStream() {
	p := pool.New(pool.Config{Workers: 2})
	defer p.Close()

	// Results come out in input order while later ones still compute; the
	// stream reads a few elements per worker ahead of what it has yielded.
	naturals := func(yield func(int) bool) {
		for i := 1; ; i++ { // endless: the loop below stops it
			if !yield(i) {
				return
			}
		}
	}
	for sq, err := range pool.MapStream(context.Background(), p, naturals, func(x int) (int, error) {
		if x == 4 {
			return 0, errors.New("four")
		}
		return x * x, nil
	}) {
		if err != nil {
			fmt.Println("error:", err) // the first error ends the stream
			break
		}
		fmt.Println(sq)
	}
	// Output:
	// 1
	// 4
	// 9
	// error: four
}

func ExamplePool_GoContext() {
	p := pool.New(pool.Config{Workers: 1, QueueSize: 1})
	release := make(chan struct{})
	started := make(chan struct{})
	p.Go(func() { close(started); <-release }) // occupies the worker
	<-started
	p.Go(func() {}) // fills the queue

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := p.GoContext(ctx, func() { fmt.Println("never runs") })
	fmt.Println(err)

	close(release)
	p.Close()
	// Output: context deadline exceeded
}

// Example_primes counts the primes below two million in chunks of 100,000
// numbers, the chunks counted on the pool's workers: the shape of
// Knitting's heavy-task example.
func Example_primes() {
	p := pool.New(pool.Config{})
	defer p.Close()

	const limit, chunk = 2_000_000, 100_000
	var chunks [][2]int
	for lo := 0; lo < limit; lo += chunk {
		chunks = append(chunks, [2]int{lo, min(lo+chunk, limit)})
	}
	counts, err := pool.Map(context.Background(), p, chunks, func(c [2]int) (int, error) {
		n := 0
		for v := c[0]; v < c[1]; v++ {
			if isPrime(v) {
				n++
			}
		}
		return n, nil
	})
	total := 0
	for _, n := range counts {
		total += n
	}
	fmt.Println(total, err)
	// Output: 148933 <nil>
}

// isPrime is trial division: deliberately CPU-bound work.
func isPrime(v int) bool {
	if v < 2 {
		return false
	}
	if v%2 == 0 {
		return v == 2
	}
	for d := 3; d*d <= v; d += 2 {
		if v%d == 0 {
			return false
		}
	}
	return true
}
