package suites

import (
	"context"
	"testing"

	"github.com/knit-go/knit"
	"github.com/puzpuzpuz/xsync/v4"
)

// BenchmarkPeersOneGoroutine is the peers matrix's calls without their
// line transfers: one goroutine pushes an item and pops it back, through
// the same calls the suite's rows make (knit's rings through Producer and
// Consumer, xsync's queue through method values; a buffered channel
// beside them). Run on one CPU and read knit's rows against xsync's of
// the same size:
//
//	taskset -c 0 go test -run '^$' -bench PeersOneGoroutine -count 8 ./internal/suites/
func BenchmarkPeersOneGoroutine(b *testing.B) {
	b.Run("8B/chan", func(b *testing.B) { benchChanOne[item8](b) })
	b.Run("8B/xsync", func(b *testing.B) { benchXsyncOne[item8](b) })
	b.Run("8B/knit-try", func(b *testing.B) { benchKnitOne[item8](b, false) })
	b.Run("8B/knit-blocking", func(b *testing.B) { benchKnitOne[item8](b, true) })
	b.Run("64B/chan", func(b *testing.B) { benchChanOne[item64](b) })
	b.Run("64B/xsync", func(b *testing.B) { benchXsyncOne[item64](b) })
	b.Run("64B/knit-try", func(b *testing.B) { benchKnitOne[item64](b, false) })
	b.Run("64B/knit-blocking", func(b *testing.B) { benchKnitOne[item64](b, true) })
}

func benchChanOne[T peerItem](b *testing.B) {
	ch := make(chan T, ringCap)
	for i := uint64(0); b.Loop(); i++ {
		ch <- mkItem[T](i)
		if v, err := itemNum(<-ch); err != nil || v != i {
			b.Fatalf("chan: item %d, want %d (%v)", v, i, err)
		}
	}
}

func benchXsyncOne[T peerItem](b *testing.B) {
	q := xsync.NewMPMCQueue[T](ringCap)
	enq, deq := q.TryEnqueue, q.TryDequeue
	for i := uint64(0); b.Loop(); i++ {
		if !enq(mkItem[T](i)) {
			b.Fatal("xsync: full")
		}
		t, ok := deq()
		if !ok {
			b.Fatal("xsync: empty")
		}
		if v, err := itemNum(t); err != nil || v != i {
			b.Fatalf("xsync: item %d, want %d (%v)", v, i, err)
		}
	}
}

func benchKnitOne[T peerItem](b *testing.B, blocking bool) {
	q := knit.NewMPMC[T](ringCap, knit.Park{})
	var push knit.Producer[T] = q
	var pop knit.Consumer[T] = q
	ctx := context.Background()
	for i := uint64(0); b.Loop(); i++ {
		var t T
		var err error
		if blocking {
			if err = push.Push(ctx, mkItem[T](i)); err == nil {
				t, err = pop.Pop(ctx)
			}
		} else if err = push.TryPush(mkItem[T](i)); err == nil {
			t, err = pop.TryPop()
		}
		if err != nil {
			b.Fatal(err)
		}
		if v, err := itemNum(t); err != nil || v != i {
			b.Fatalf("knit: item %d, want %d (%v)", v, i, err)
		}
	}
}
