package shm

import (
	"context"
	"strconv"
	"testing"

	"github.com/knit-go/knit"
)

// BenchmarkSendRecv is the cost of the calls themselves: one goroutine
// sends a message and receives it back from the same ring, so nothing
// ever waits and every nanosecond is the call's own work (argument and
// state checks, the copy, the index stores). The floor row does only the
// unavoidable part with the same ring memory: copy in, publish the tail,
// copy out, publish the head.
//
//	go test -run '^$' -bench SendRecv -count 5 ./shm/
func BenchmarkSendRecv(b *testing.B) {
	for _, size := range []int{8, 256} {
		sz := "size=" + strconv.Itoa(size)
		b.Run(sz+"/floor", func(b *testing.B) {
			p, c := pair(b, 1<<12, knit.Park{})
			msg, buf := make([]byte, size), make([]byte, size)
			var pos uint32
			for b.Loop() {
				rec := recordHeader + align8(uint32(size))
				if pos&p.mask+rec > p.capacity {
					pos += p.capacity - pos&p.mask // start the lap over, as a wrap does
				}
				at := pos & p.mask
				copy(p.data[at+recordHeader:], msg)
				pos += rec
				p.tail.Store(pos)
				copy(buf, c.data[at+recordHeader:at+recordHeader+uint32(size)])
				c.head.Store(pos)
			}
		})
		b.Run(sz+"/try", func(b *testing.B) {
			p, c := pair(b, 1<<12, knit.Park{})
			msg, buf := make([]byte, size), make([]byte, size)
			for b.Loop() {
				if err := p.TrySend(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := c.TryRecv(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sz+"/blocking", func(b *testing.B) {
			p, c := pair(b, 1<<12, knit.Park{})
			msg, buf := make([]byte, size), make([]byte, size)
			ctx := context.Background()
			for b.Loop() {
				if err := p.Send(ctx, msg); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Recv(ctx, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
