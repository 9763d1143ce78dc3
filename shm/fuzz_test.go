package shm

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/knit-go/knit"
)

// The peer as an adversary: random headers for AttachRing, and random
// writes to the shared indices, lengths and flags between operations.
// Every call must return (no panic, no out-of-bounds access, no unbounded
// loop): an error is the only permitted effect.

var (
	fuzzOnce   sync.Once
	fuzzRegion *Region
)

const fuzzRegionSize = 1 << 16

func fuzzMem(t *testing.T) *Region {
	fuzzOnce.Do(func() {
		var err error
		if fuzzRegion, err = Create("fuzz", fuzzRegionSize); err != nil {
			t.Skip("no regions here:", err)
		}
	})
	if fuzzRegion == nil {
		t.Skip("no regions here")
	}
	return fuzzRegion
}

// cancelled is a context that has already ended: a blocking call on it
// does one non-blocking attempt and returns.
var cancelled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// fuzzWatchdog panics if one input runs longer than any bounded
// sequence of operations could.
func fuzzWatchdog() func() bool {
	return time.AfterFunc(10*time.Second, func() { panic("fuzz input did not finish: unbounded loop") }).Stop
}

// validHeader is a ring header as CreateRing writes it.
func validHeader(capacity int) []byte {
	mem := make([]uint64, headerSize/8)
	b := unsafeBytes(mem)
	writeLayout(b, ourLayout(uint32(capacity)))
	return b
}

func FuzzAttach(f *testing.F) {
	for _, c := range []int{64, 1024, 1 << 15} {
		h := validHeader(c)
		f.Add(h, uint8(0), true, []byte{0, 1, 2, 3, 4, 5})
		f.Add(h, uint8(3), false, []byte{9, 8, 7})
		bad := append([]byte(nil), h...)
		binary.NativeEndian.PutUint32(bad[offCapacity:], 1<<20)
		f.Add(bad, uint8(0), true, []byte{1})
	}
	f.Add([]byte{}, uint8(0), false, []byte{})
	f.Fuzz(func(t *testing.T, hdr []byte, line uint8, producer bool, ops []byte) {
		defer fuzzWatchdog()()
		region := fuzzMem(t)
		mem := region.Bytes()
		clear(mem)
		off := int(line) * lineSize % fuzzRegionSize
		copy(mem[off:], hdr)
		role := RoleConsumer
		if producer {
			role = RoleProducer
		}
		r, err := AttachRing(region, off, role, knit.Park{})
		if err != nil {
			if r != nil {
				t.Fatal("error with a ring")
			}
			return
		}
		if off+RingSize(r.CapBytes()) > len(mem) {
			t.Fatalf("accepted a ring of %d at %d in %d bytes", r.CapBytes(), off, len(mem))
		}
		exercise(t, r, ops)
	})
}

// FuzzRecv runs an honest producer and consumer on one ring while the
// fuzzer, playing a hostile or broken peer, scribbles on the tail, the
// head, record lengths, the closed word and the doorbells between their
// operations. With no scribbles it checks the ring against a model.
func FuzzRecv(f *testing.F) {
	f.Add(uint8(0), []byte{8, 100, 8, 0, 9, 9, 9})
	f.Add(uint8(1), []byte{8, 200, 8, 60, 9, 0, 0, 0, 16, 0, 9})
	f.Add(uint8(2), []byte{8, 50, 1, 3, 0, 0, 0, 255, 255, 255, 255, 9, 10})
	f.Add(uint8(0), []byte{8, 7, 2, 0, 0, 0, 1, 0, 9, 11, 12})
	f.Add(uint8(3), []byte{8, 30, 8, 30, 8, 30, 3, 1, 0, 0, 0, 9, 9, 9, 9})
	// One byte through a 64-byte ring, then a maximal message into the
	// empty ring (56 bytes), then a ring too full for a second one.
	f.Add(uint8(0), []byte{8, 4, 9, 8, 224, 8, 224, 8, 224, 9, 8, 160})
	f.Fuzz(func(t *testing.T, capLog uint8, ops []byte) {
		defer fuzzWatchdog()()
		region := fuzzMem(t)
		capacity := 64 << (capLog % 6) // 64 .. 2048
		clear(region.Bytes()[:RingSize(capacity)])
		p, err := CreateRing(region, 0, capacity, RoleProducer, knit.Park{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := AttachRing(region, 0, RoleConsumer, knit.Park{})
		if err != nil {
			t.Fatal(err)
		}
		ring, data := p.ring, p.data
		var sent, got [][]byte
		scribbled := false
		buf := make([]byte, capacity)
		next := func(n int) uint32 { // the next n bytes of ops as a number
			var v uint32
			for range n {
				if len(ops) == 0 {
					break
				}
				v = v<<8 | uint32(ops[0])
				ops = ops[1:]
			}
			return v
		}
		for steps := 0; len(ops) > 0 && steps < 10_000; steps++ {
			op := ops[0]
			ops = ops[1:]
			switch op % 16 {
			case 0: // the peer writes the tail
				word(ring, offTail).Store(next(4))
				scribbled = true
			case 1: // the peer writes the head
				word(ring, offHead).Store(next(4))
				scribbled = true
			case 2: // a record length anywhere in the data area
				at := int(next(2)) % (capacity - 3)
				binary.LittleEndian.PutUint32(data[at:], next(4))
				scribbled = true
			case 3: // the closed word, pids, doorbells
				w := []int{offClosed, offProdPid, offConsPid, offDataWaiting, offDataWake, offSpaceWaiting, offSpaceWake}
				word(ring, w[int(next(1))%len(w)]).Store(next(4))
				scribbled = true
			// Near-valid values, where the checks have to be exact.
			case 4: // tail a few records ahead of the consumer
				word(ring, offTail).Store(c.pos + 8*next(1))
				scribbled = true
			case 5: // head a few records behind the producer
				word(ring, offHead).Store(p.pos - 8*next(1))
				scribbled = true
			case 6: // the length of the record the consumer reads next
				binary.LittleEndian.PutUint32(data[c.pos&c.mask:], uint32(capacity)-8*next(1))
				scribbled = true
			case 7: // a skip record where the consumer reads next
				binary.LittleEndian.PutUint32(data[c.pos&c.mask:], ^uint32(0)) // version 1's skip mark
				scribbled = true
			case 8: // honest send of n bytes
				n := int(next(1)) * capacity / 256
				msg := make([]byte, n)
				for i := range msg {
					msg[i] = byte(len(sent) + i)
				}
				// Without interference the ring holds exactly the
				// records sent and not received, and any message fits
				// when its record fits beside them.
				var held uint32
				if !scribbled {
					held = inFlight(sent[len(got):])
				}
				before := snapshot(p)
				err := p.TrySend(msg)
				ok := err == nil
				if !ok {
					if after := snapshot(p); after != before {
						t.Fatalf("a failed TrySend(%d bytes) (%v) changed the ring", n, err)
					}
				}
				if n > p.MaxMessage() {
					if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrClosed) {
						t.Fatalf("TrySend(%d bytes) of at most %d: %v", n, p.MaxMessage(), err)
					}
				} else if !scribbled && (ok != (held+recordHeader+align8(uint32(n)) <= uint32(capacity)) || err != nil && err != knit.ErrFull) {
					t.Fatalf("TrySend(%d bytes) = %v with %d bytes in flight in %d", n, err, held, capacity)
				}
				if ok {
					sent = append(sent, msg)
				}
			case 9: // honest receive
				if n, err := c.TryRecv(buf); err == nil {
					got = append(got, append([]byte(nil), buf[:n]...))
				}
			case 10:
				if m, err := c.Peek(cancelled); err == nil {
					if len(m) > c.MaxMessage() {
						t.Fatalf("Peek returned %d bytes, at most %d", len(m), c.MaxMessage())
					}
					got = append(got, append([]byte(nil), m...))
					c.Release()
				}
			case 11:
				if n, err := c.Recv(cancelled, buf[:int(next(1))%len(buf)]); err == nil {
					got = append(got, append([]byte(nil), buf[:n]...))
				}
			case 12:
				before := snapshot(p)
				if b, err := p.Reserve(cancelled, int(next(1))); err != nil {
					if after := snapshot(p); after != before {
						t.Fatalf("a failed Reserve (%v) changed the ring", err)
					}
				} else {
					for i := range b {
						b[i] = byte(len(sent) + i)
					}
					if p.Commit(len(b)) == nil {
						sent = append(sent, append([]byte(nil), b...))
					}
				}
			case 13:
				p.LenBytes()
				c.LenBytes()
			}
			// The ends' own view stays valid whatever the peer wrote.
			if p.pos-p.peer > p.capacity || c.peer-c.pos > c.capacity || p.pos%8 != 0 || c.pos%8 != 0 {
				t.Fatalf("producer at %d sees head %d, consumer at %d sees tail %d (capacity %d)", p.pos, p.peer, c.pos, c.peer, capacity)
			}
		}
		if scribbled {
			return
		}
		// No interference: what came out is a prefix of what went in.
		if len(got) > len(sent) {
			t.Fatalf("received %d messages, sent %d", len(got), len(sent))
		}
		for i := range got {
			if string(got[i]) != string(sent[i]) {
				t.Fatalf("message %d: got %d bytes, sent %d", i, len(got[i]), len(sent[i]))
			}
		}
		for {
			n, err := c.TryRecv(buf)
			if err != nil {
				if err != knit.ErrEmpty || len(got) != len(sent) {
					t.Fatalf("drained %d of %d: %v", len(got), len(sent), err)
				}
				break
			}
			if string(buf[:n]) != string(sent[len(got)]) {
				t.Fatalf("message %d differs", len(got))
			}
			got = append(got, nil)
		}
	})
}

// inFlight is what msgs take in a ring.
func inFlight(msgs [][]byte) uint32 {
	var n uint32
	for _, m := range msgs {
		n += recordHeader + align8(uint32(len(m)))
	}
	return n
}

// exercise runs a bounded series of operations on one end.
func exercise(t *testing.T, r *Ring, ops []byte) {
	buf := make([]byte, r.MaxMessage())
	for i, op := range ops {
		if i > 64 {
			return
		}
		var err error
		switch op % 8 {
		case 0:
			err = r.TrySend(buf[:int(op)%(len(buf)+1)])
		case 1:
			_, err = r.TryRecv(buf)
		case 2:
			_, err = r.Peek(cancelled)
			if err == nil {
				err = r.Release()
			}
		case 3:
			_, err = r.Recv(cancelled, buf[:int(op)%(len(buf)+1)])
		case 4:
			err = r.Send(cancelled, buf[:int(op)%(len(buf)+1)])
		case 5:
			var b []byte
			if b, err = r.Reserve(cancelled, int(op)%(len(buf)+1)); err == nil {
				err = r.Commit(len(b))
			}
		case 6:
			r.LenBytes()
		case 7:
			err = r.Close()
		}
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrClosed) &&
			!errors.Is(err, ErrWrongSide) && !errors.Is(err, ErrShortBuffer) &&
			!errors.Is(err, ErrTooLarge) && !errors.Is(err, context.Canceled) &&
			err != knit.ErrFull && err != knit.ErrEmpty {
			t.Fatalf("unexpected error: %v", err)
		}
	}
}
