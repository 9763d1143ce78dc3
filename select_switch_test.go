package knit

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestSelectorSetEnabledFanIn: a fan-in over 8 rings whose producers close
// one by one. The loop disables each case as it reports ErrClosed, so
// every Select returns an item or a close, once per ring: a closed case
// that still fired would make the loop spin, and the count says so.
func TestSelectorSetEnabledFanIn(t *testing.T) {
	defer watchdog(t, 60*time.Second)()
	const rings, per = 8, 50
	cases := make([]Case, rings)
	var got int
	for k := range rings {
		q := NewSPSC[int](4, Park{})
		cases[k] = PopCase(cons(q.Ends()), &got)
		go func(p SPSCProducer[int]) {
			for i := range per {
				if err := p.Push(context.Background(), k*per+i); err != nil {
					panic(err)
				}
				time.Sleep(time.Duration(k+1) * 20 * time.Microsecond) // the rings close at different times
			}
			p.Close()
		}(prod(q.Ends()))
	}
	sel := NewSelector(Park{}, cases...)
	next := make([]int, rings) // per ring, the next item expected
	closed := make([]bool, rings)
	selects, items, open := 0, 0, rings
	for open > 0 {
		i, err := sel.Select(context.Background())
		selects++
		switch {
		case errors.Is(err, ErrClosed):
			if closed[i] {
				t.Fatalf("case %d fired after SetEnabled(%[1]d, false)", i)
			}
			if next[i] != per {
				t.Fatalf("ring %d closed after %d of %d items", i, next[i], per)
			}
			closed[i] = true
			sel.SetEnabled(i, false)
			open--
		case err != nil:
			t.Fatal(err)
		default:
			if got != i*per+next[i] {
				t.Fatalf("ring %d: got %d, want %d", i, got, i*per+next[i])
			}
			next[i]++
			items++
		}
	}
	if items != rings*per || selects != items+rings {
		t.Fatalf("%d items in %d Selects, want %d in %d", items, selects, rings*per, rings*per+rings)
	}
}

// TestSelectorSetEnabled: a case switched off does not fire even when
// it is ready (ring or channel, in the poll and in the sleep, native or
// through reflect.Select: the second shape's two sized channels, of
// different element types, sleep in reflect.Select), and fires
// again once switched on.
func TestSelectorSetEnabled(t *testing.T) {
	defer watchdog(t, 60*time.Second)()
	q := NewMPMC[int](4, Park{})
	ready := make(chan int, 1)
	quit := make(chan struct{}, 1)
	other := make(chan string) // a second sized channel: the reflect path
	var v, w int
	var s string
	for _, shape := range []struct {
		name  string
		cases []Case
	}{
		{"native", []Case{PopCase(q, &v), RecvCase(ready, &w), RecvCase(quit, nil)}},
		{"reflect", []Case{PopCase(q, &v), RecvCase(ready, &w), RecvCase(quit, nil), RecvCase(other, &s)}},
	} {
		t.Run(shape.name, func(t *testing.T) {
			sel := NewSelector(Park{}, shape.cases...)
			for off := range 3 {
				sel.SetEnabled(off, false)
				switch off {
				case 0:
					if err := q.TryPush(7); err != nil {
						t.Fatal(err)
					}
				case 1:
					ready <- 8
				case 2:
					quit <- struct{}{}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				i, err := sel.Select(ctx)
				cancel()
				if i != -1 || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("case %d off: Select = %d, %v; want -1 and the deadline", off, i, err)
				}
				sel.SetEnabled(off, true)
				i, err = sel.Select(context.Background())
				if i != off || err != nil {
					t.Fatalf("case %d back on: Select = %d, %v", off, i, err)
				}
			}
			if v != 7 || w != 8 {
				t.Fatalf("v %d w %d", v, w)
			}
			v, w = 0, 0
		})
	}
	sel := NewSelector(Park{}, PopCase(q, &v))
	mustPanic(t, "SetEnabled(1, false) of one case", func() { sel.SetEnabled(1, false) }, "knit: Selector case 1 out of range [0, 1)")
	mustPanic(t, "SetEnabled(-1, true)", func() { sel.SetEnabled(-1, true) }, "knit: Selector case -1 out of range [0, 1)")
}

// TestSelectorChannelCasesZeroAlloc: a Selector over rings, a
// cancellable ctx and the channel shapes Select documents allocates
// nothing per blocking call: each call registers on the ring, sleeps, and
// is woken by the channel case a feeder then fires.
func TestSelectorChannelCasesZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	defer watchdog(t, 60*time.Second)()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := NewMPMC[int](4, Park{})
	bell := &q.bells.notEmpty.Event
	var v, got int
	var tick time.Time
	data := make(chan int)
	ticks := make(chan time.Time)
	ticks2 := make(chan time.Time)
	quit := make(chan struct{})
	done := make(chan struct{})
	results := make(chan int)
	out := 5
	for _, shape := range []struct {
		name  string
		cases []Case
		fire  func()
		want  int
	}{
		{"recv sized + quit", []Case{PopCase(q, &v), RecvCase(data, &got), RecvCase(quit, nil)}, func() { data <- 1 }, 1},
		{"timer + quit", []Case{RecvCase(quit, nil), PopCase(q, &v), RecvCase(ticks, &tick)}, func() { ticks <- time.Time{} }, 2},
		{"send sized + quit", []Case{PopCase(q, &v), SendCase(results, &out), RecvCase(quit, nil)}, func() { <-results }, 1},
		{"two zero-size", []Case{PopCase(q, &v), RecvCase(quit, nil), RecvCase(done, nil)}, func() { done <- struct{}{} }, 2},
		{"timer + ticker + quit", []Case{RecvCase(ticks, &tick), PopCase(q, &v), RecvCase(ticks2, &tick), RecvCase(quit, nil)}, func() { ticks2 <- time.Time{} }, 2},
		{"two sized of one type, recv and send", []Case{SendCase(results, &out), RecvCase(data, &got), PopCase(q, &v)}, func() { data <- 3 }, 1},
		{"two sized of one type, send fires", []Case{RecvCase(data, &got), SendCase(results, &out), PopCase(q, &v)}, func() { <-results }, 1},
	} {
		t.Run(shape.name, func(t *testing.T) {
			sel := NewSelector(Park{}, shape.cases...)
			const runs = 200
			feeder := make(chan struct{})
			go func() {
				defer close(feeder)
				for range runs + 1 { // AllocsPerRun's warm-up call, then runs
					for bell.Waiters() == 0 {
						runtime.Gosched() // until the Select is registered, about to sleep
					}
					shape.fire()
				}
			}()
			allocs := testing.AllocsPerRun(runs, func() {
				if i, err := sel.Select(ctx); i != shape.want || err != nil {
					panic("Select fired the wrong case")
				}
			})
			<-feeder
			if allocs != 0 {
				t.Fatalf("%.2f allocations per blocking Select, want 0", allocs)
			}
		})
	}
}
