package antspool_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/knit-go/knit/examples/antspool"
)

// A pool of two goroutines: Submit waits while both are busy; a
// Nonblocking pool says ErrOverload instead.
func ExamplePool() {
	p := antspool.New(2, antspool.Options{})
	var sum atomic.Int64
	var wg sync.WaitGroup
	for i := 1; i <= 100; i++ {
		wg.Add(1)
		if err := p.Submit(func() { sum.Add(int64(i)); wg.Done() }); err != nil {
			panic(err)
		}
	}
	wg.Wait()
	p.Close()
	fmt.Println(sum.Load())

	nb := antspool.New(1, antspool.Options{Nonblocking: true})
	release := make(chan struct{})
	_ = nb.Submit(func() { <-release })
	err := nb.Submit(func() {})
	fmt.Println(errors.Is(err, antspool.ErrOverload))
	close(release)
	nb.Close()
	// Output:
	// 5050
	// true
}
