package inboxpool

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/testutil"
)

type pool interface {
	Go(func()) error
	Close()
}

var pools = []struct {
	name string
	new  func(workers, queue int) pool
}{
	{"knit", func(w, q int) pool { return New(w, q) }},
	{"chan", func(w, q int) pool { return NewChan(w, q) }},
}

// TestEveryTaskOnce: several submitters, small inboxes so that Go often
// waits; every task runs exactly once, and all have run when Close
// returns.
func TestEveryTaskOnce(t *testing.T) {
	const submitters, each = 8, 5000
	for _, pc := range pools {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d-workers", pc.name, workers), func(t *testing.T) {
				defer testutil.Watchdog(t, 60*time.Second)()
				p := pc.new(workers, 4)
				ran := make([]atomic.Int32, submitters*each)
				var wg sync.WaitGroup
				for s := range submitters {
					wg.Go(func() {
						for i := range each {
							id := s*each + i
							if err := p.Go(func() { ran[id].Add(1) }); err != nil {
								t.Errorf("Go: %v", err)
								return
							}
						}
					})
				}
				wg.Wait()
				p.Close()
				for id := range ran {
					if n := ran[id].Load(); n != 1 {
						t.Fatalf("task %d ran %d times", id, n)
					}
				}
			})
		}
	}
}

// TestCloseRacesGo: submitters call Go until it reports ErrClosed while
// Close runs; every Go that returned nil ran its task exactly once,
// none that returned ErrClosed did, and nothing runs after Close
// returns. A Go left waiting for room when Close comes must return.
func TestCloseRacesGo(t *testing.T) {
	for _, pc := range pools {
		t.Run(pc.name, func(t *testing.T) {
			defer testutil.Watchdog(t, 60*time.Second)()
			for round := range 200 {
				p := pc.new(2, 2)
				var accepted, ran atomic.Int64
				var closed atomic.Bool
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() {
						for {
							err := p.Go(func() {
								if closed.Load() {
									t.Error("a task ran after Close returned")
								}
								ran.Add(1)
							})
							if errors.Is(err, knit.ErrClosed) {
								return
							}
							if err != nil {
								t.Errorf("Go: %v", err)
								return
							}
							accepted.Add(1)
						}
					})
				}
				time.Sleep(time.Duration(round%5) * 20 * time.Microsecond)
				p.Close()
				closed.Store(true)
				wg.Wait()
				if a, r := accepted.Load(), ran.Load(); a != r {
					t.Fatalf("round %d: %d tasks accepted, %d ran", round, a, r)
				}
			}
		})
	}
}

func TestGoAfterClose(t *testing.T) {
	for _, pc := range pools {
		p := pc.new(1, 1)
		p.Close()
		if err := p.Go(func() { t.Error("ran after Close") }); !errors.Is(err, knit.ErrClosed) {
			t.Errorf("%s: Go after Close = %v, want knit.ErrClosed", pc.name, err)
		}
		p.Close() // a second Close is harmless
	}
}
