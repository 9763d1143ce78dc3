package pool_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit/pool"
)

func ExampleNew() {
	p := pool.New(pool.Config{}) // one worker, Knitting's timer policy
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

func ExampleTask_CallBatch() {
	p := pool.New(pool.Config{Workers: 2})
	defer p.Close()

	double := pool.NewTask(p, func(x int) int { return 2 * x })
	ins := []int{1, 2, 3, 4}
	out := make([]pool.Future[int], len(ins))
	double.CallBatch(ins, out) // one push, one doorbell ring
	for _, f := range out {
		v, _ := f.Wait(context.Background())
		fmt.Print(v, " ")
	}
	fmt.Println()
	// Output: 2 4 6 8
}

func ExampleFuture_Wait() {
	p := pool.New(pool.Config{})
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
	p := pool.New(pool.Config{QueueSize: 1})
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
	p := pool.New(pool.Config{})
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
	// Output: 2 10 10 0
}
