package suites

import (
	"context"
	"strings"
	"testing"

	"github.com/puzpuzpuz/xsync/v4"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// BenchmarkMailboxRows runs the mailbox suite's rows as Go benchmarks, in
// chunks of 100,000 items as the harness's rounds hand them out, for
// perf record and -benchmem:
//
//	go test -run '^$' -bench 'MailboxRows//(knit_Mailbox|xsync)' -benchmem ./internal/suites/
func BenchmarkMailboxRows(b *testing.B) {
	for _, r := range mailboxRows(harness.Config{Scale: harness.Quick}) {
		b.Run(strings.ReplaceAll(r.Group+"/"+r.Name, " ", "_"), func(b *testing.B) {
			bn, err := r.Start(harness.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer bn.Close()
			const chunk = 100000
			for done := 0; done < b.N; done += chunk {
				if err := bn.Run(min(chunk, b.N-done)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMailboxOneSide is each side's own cost, with no line moving
// between CPUs: one goroutine pushes 65,536 items (the timed part of
// push), then pops them (the timed part of pop). Divide ns/op by 65,536.
func BenchmarkMailboxOneSide(b *testing.B) {
	const n = 1 << 16
	ctx := context.Background()
	m := knit.NewMailbox[uint64](knit.Park{})
	mpush := func() {
		for i := range uint64(n) {
			_ = m.Push(ctx, i)
		}
	}
	mpop := func() {
		for range n {
			_, _ = m.Pop(ctx)
		}
	}
	x := xsync.NewUMPSCQueue[uint64]()
	xpush := func() {
		for i := range uint64(n) {
			x.Enqueue(i)
		}
	}
	xpop := func() {
		for range n {
			x.Dequeue()
		}
	}
	side := func(timed, other func(), pushFirst bool) func(*testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				if !pushFirst {
					b.StopTimer()
					other()
					b.StartTimer()
				}
				timed()
				if pushFirst {
					b.StopTimer()
					other()
					b.StartTimer()
				}
			}
		}
	}
	b.Run("knit-Mailbox/push", side(mpush, mpop, true))
	b.Run("knit-Mailbox/pop", side(mpop, mpush, false))
	b.Run("xsync-UMPSCQueue/push", side(xpush, xpop, true))
	b.Run("xsync-UMPSCQueue/pop", side(xpop, xpush, false))
}
