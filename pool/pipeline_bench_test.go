package pool

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkPipeline is issue 45's shape: a caller that makes count calls
// before its first Wait, then waits for them in order,
//
//	for i, x := range xs { fs[i] = task.Call(x) }
//	for i := range fs { out[i], err = fs[i].Wait(ctx) }
//
// beside the channel workers a user would write instead, in the same run:
// chan-shared is knitbench's types and ipc-peers channel row (requests on
// one buffered channel, replies on another, both count deep), chan-reply
// answers each request on a reply channel of its own (recycled, so no
// allocation), and batch is the same calls through CallBatch and WaitAll.
// The pool has the zero Config's policy at 1 worker and at GOMAXPROCS
// workers; the channel rows run as many worker goroutines. One op is one
// value: the figures are per call. parks/op counts the pool's worker
// parks (Stats.Parks) per value.
func BenchmarkPipeline(b *testing.B) {
	fn := func(x int) int { return x + 1 }
	procs := runtime.GOMAXPROCS(0)
	for _, w := range []int{1, procs} {
		if w == procs && procs == 1 {
			continue
		}
		for _, n := range []int{1, 25, 100} {
			name := func(row string) string { return fmt.Sprintf("w=%d/n=%d/%s", w, n, row) }
			b.Run(name("call-wait"), func(b *testing.B) {
				p := New(Config{Workers: w})
				defer p.Close()
				tk := NewTask(p, fn)
				fs := make([]Future[int], n)
				ctx := context.Background()
				rounds := pipelineRounds(b, n)
				parks := p.Stats().Parks
				m := startCPU(b)
				for r := range rounds {
					for i := range fs {
						fs[i] = tk.Call(r + i)
					}
					for i := range fs {
						if v, err := fs[i].Wait(ctx); v != r+i+1 || err != nil {
							b.Fatal("wrong result", v, err)
						}
					}
				}
				m.stop(b, rounds*n)
				b.ReportMetric(float64(p.Stats().Parks-parks)/float64(rounds*n), "parks/op")
			})
			b.Run(name("submit-wait"), func(b *testing.B) {
				p := New(Config{Workers: w})
				defer p.Close()
				fs := make([]Future[int], n)
				ctx := context.Background()
				rounds := pipelineRounds(b, n)
				m := startCPU(b)
				for r := range rounds {
					for i := range fs {
						x := r + i
						fs[i] = Submit(ctx, p, func() (int, error) { return fn(x), nil })
					}
					for i := range fs {
						if v, err := fs[i].Wait(ctx); v != r+i+1 || err != nil {
							b.Fatal("wrong result", v, err)
						}
					}
				}
				m.stop(b, rounds*n)
			})
			b.Run(name("batch"), func(b *testing.B) {
				p := New(Config{Workers: w})
				defer p.Close()
				tk := NewTask(p, fn)
				ins := make([]int, n)
				fs := make([]Future[int], n)
				out := make([]int, n)
				ctx := context.Background()
				rounds := pipelineRounds(b, n)
				parks := p.Stats().Parks
				m := startCPU(b)
				for r := range rounds {
					for i := range ins {
						ins[i] = r + i
					}
					tk.CallBatch(ins, fs)
					if k, err := WaitAll(ctx, fs, out); k != n || err != nil {
						b.Fatal(k, err)
					}
					for i, v := range out {
						if v != r+i+1 {
							b.Fatal("wrong result", v)
						}
					}
				}
				m.stop(b, rounds*n)
				b.ReportMetric(float64(p.Stats().Parks-parks)/float64(rounds*n), "parks/op")
			})
			b.Run(name("chan-shared"), func(b *testing.B) {
				req := make(chan int, n)
				resp := make(chan int, n)
				for range w {
					go func() {
						for x := range req {
							resp <- fn(x)
						}
					}()
				}
				defer close(req)
				rounds := pipelineRounds(b, n)
				m := startCPU(b)
				for r := range rounds {
					for i := range n {
						req <- r + i
					}
					sum := 0
					for range n {
						sum += <-resp
					}
					if want := n*r + n*(n-1)/2 + n; sum != want {
						b.Fatal("wrong sum", sum, want)
					}
				}
				m.stop(b, rounds*n)
			})
			b.Run(name("chan-reply"), func(b *testing.B) {
				type call struct {
					x     int
					reply chan int
				}
				req := make(chan call, n)
				replies := make([]chan int, n)
				for i := range replies {
					replies[i] = make(chan int, 1)
				}
				for range w {
					go func() {
						for c := range req {
							c.reply <- fn(c.x)
						}
					}()
				}
				defer close(req)
				rounds := pipelineRounds(b, n)
				m := startCPU(b)
				for r := range rounds {
					for i := range n {
						req <- call{r + i, replies[i]}
					}
					for i := range n {
						if v := <-replies[i]; v != r+i+1 {
							b.Fatal("wrong result", v)
						}
					}
				}
				m.stop(b, rounds*n)
			})
		}
	}
}

// pipelineRounds is how many rounds of n values make b.N values (at
// least one round), so that ns/op is per value at every n.
func pipelineRounds(b *testing.B, n int) int {
	return max(1, b.N/n)
}

// BenchmarkPipelineTypes is BenchmarkPipeline's one-worker call-wait and
// chan-shared rows with knitbench's types values, on its pool (one
// worker, QueueSize count): a word, a string header, a 56-byte struct
// with a pointer, a slice header. One op is one value.
func BenchmarkPipelineTypes(b *testing.B) {
	type sample struct {
		ID    int64
		Name  string
		Score float64
		Tags  [4]int32
		OK    bool
	}
	for _, n := range []int{1, 100} {
		pipelineTypeRows(b, n, "int", 42)
		pipelineTypeRows(b, n, "string", "knit: a thirty-two byte string.")
		pipelineTypeRows(b, n, "struct", sample{ID: 7, Name: "knit", Score: 0.5, Tags: [4]int32{1, 2, 3, 4}, OK: true})
		pipelineTypeRows(b, n, "[]byte", make([]byte, 1024))
	}
}

func pipelineTypeRows[T any](b *testing.B, n int, name string, v T) {
	var sink T
	b.Run(fmt.Sprintf("n=%d/%s/call-wait", n, name), func(b *testing.B) {
		p := New(Config{Workers: 1, QueueSize: n})
		defer p.Close()
		tk := NewTask(p, func(x T) T { return x })
		fs := make([]Future[T], n)
		ctx := context.Background()
		rounds := pipelineRounds(b, n)
		m := startCPU(b)
		for range rounds {
			for i := range fs {
				fs[i] = tk.Call(v)
			}
			for i := range fs {
				sink, _ = fs[i].Wait(ctx)
			}
		}
		m.stop(b, rounds*n)
	})
	b.Run(fmt.Sprintf("n=%d/%s/chan-shared", n, name), func(b *testing.B) {
		req, resp := make(chan T, n), make(chan T, n)
		go func() {
			for x := range req {
				resp <- x
			}
		}()
		defer close(req)
		rounds := pipelineRounds(b, n)
		m := startCPU(b)
		for range rounds {
			for range n {
				req <- v
			}
			for range n {
				sink = <-resp
			}
		}
		m.stop(b, rounds*n)
	})
	_ = sink
}

// BenchmarkValueCopies is the struct row's cause in isolation: one
// goroutine moves a value the way a call does, with no other goroutine
// and no atomic operation: into a call's argument (a by-value parameter
// copied into the slot), through the task's function (argument and
// result), into the result, and out (a by-value result). A word or a
// header travels in registers; the 56-byte struct, whose array field
// keeps it off the register ABI, is copied through stack temporaries,
// each copy reading the stores of the one before, which the store buffer
// cannot forward (they overlap). chan is a buffered channel's send and
// receive of the same value, which copy through typedmemmove.
func BenchmarkValueCopies(b *testing.B) {
	type sample struct {
		ID    int64
		Name  string
		Score float64
		Tags  [4]int32
		OK    bool
	}
	valueCopyRows(b, "int", 42)
	valueCopyRows(b, "[]byte", make([]byte, 1024))
	valueCopyRows(b, "struct", sample{ID: 7, Name: "knit", Score: 0.5, Tags: [4]int32{1, 2, 3, 4}, OK: true})
}

//go:noinline
func copyIn[T any](e *elem[T, T], v T) { e.in = v }

//go:noinline
func copyRun[T any](fn func(T) T, e *elem[T, T]) {
	e.out = fn(e.in)
	var zero T
	e.in = zero
}

//go:noinline
func copyOut[T any](e *elem[T, T]) T { return e.out }

func valueCopyRows[T any](b *testing.B, name string, v T) {
	var sink T
	b.Run(name+"/call-path", func(b *testing.B) {
		es := make([]elem[T, T], 128)
		fn := func(x T) T { return x }
		for i := range b.N {
			e := &es[i&127]
			copyIn(e, v)
			copyRun(fn, e)
			sink = copyOut(e)
		}
	})
	b.Run(name+"/chan", func(b *testing.B) {
		c := make(chan T, 128)
		for range b.N {
			c <- v
			sink = <-c
		}
	})
	_ = sink
}
