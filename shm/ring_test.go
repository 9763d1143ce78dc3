package shm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/knit-go/knit"
)

func TestCreateRingErrors(t *testing.T) {
	region := newRegion(t, 1<<16)
	tooLarge := MaxCapacity
	tooLarge <<= 1 // negative on 32-bit systems: refused as well
	for _, tc := range []struct {
		name          string
		off, capacity int
		role          Role
	}{
		{"capacity not a power of two", 0, 1000, RoleProducer},
		{"capacity too small", 0, 32, RoleProducer},
		{"capacity too large", 0, tooLarge, RoleProducer},
		{"misaligned offset", 64, 1024, RoleProducer},
		{"negative offset", -128, 1024, RoleProducer},
		{"overruns region", 1<<16 - 1024, 1024, RoleProducer},
		{"offset past region", 1 << 17, 1024, RoleProducer},
		{"bad role", 0, 1024, 0},
	} {
		if _, err := CreateRing(region, tc.off, tc.capacity, tc.role, knit.Park{}); err == nil {
			t.Errorf("%s: CreateRing(%d, %d, %v) succeeded", tc.name, tc.off, tc.capacity, tc.role)
		}
	}
	if _, err := CreateRing(nil, 0, 1024, RoleProducer, knit.Park{}); err == nil {
		t.Error("nil region accepted")
	}
	closed := newRegion(t, 4096)
	closed.Close()
	if _, err := CreateRing(closed, 0, 1024, RoleProducer, knit.Park{}); !errors.Is(err, ErrRegionClosed) {
		t.Errorf("closed region: %v, want ErrRegionClosed", err)
	}
}

func TestAttachRingValidates(t *testing.T) {
	region := newRegion(t, 1<<16)
	if _, err := AttachRing(region, 0, RoleConsumer, knit.Park{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("attach to zeroed memory: %v, want ErrCorrupt", err)
	}
	if _, err := CreateRing(region, 0, 1024, RoleProducer, knit.Park{}); err != nil {
		t.Fatal(err)
	}
	if _, err := AttachRing(region, 0, RoleProducer, knit.Park{}); !errors.Is(err, ErrWrongSide) {
		t.Errorf("second producer: %v, want ErrWrongSide", err)
	}
	mem := region.Bytes()
	for _, tc := range []struct {
		name string
		off  int
		val  uint32
	}{
		{"magic", offMagic, 0x12345678},
		{"version", offVersion, ringVersion + 1},
		{"version 1 (skip records)", offVersion, 1},
		{"line size", offLineSize, 64},
		{"capacity not a power of two", offCapacity, 1000},
		{"capacity beyond the region", offCapacity, 1 << 20},
		{"checksum (capacity changed)", offCapacity, 2048},
		{"checksum", offChecksum, 1},
	} {
		w := word(mem, tc.off)
		old := w.Load()
		w.Store(tc.val)
		if _, err := AttachRing(region, 0, RoleConsumer, knit.Park{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
		w.Store(old)
	}
	// Indices out of range.
	word(mem, offTail).Store(4096)
	if _, err := AttachRing(region, 0, RoleConsumer, knit.Park{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("tail past capacity: %v, want ErrCorrupt", err)
	}
	word(mem, offTail).Store(0)
	c, err := AttachRing(region, 0, RoleConsumer, knit.Park{})
	if err != nil {
		t.Fatalf("valid header refused: %v", err)
	}
	if c.CapBytes() != 1024 || c.MaxMessage() != 1016 {
		t.Errorf("Cap %d MaxMessage %d, want 1024 1016", c.CapBytes(), c.MaxMessage())
	}
}

func TestWrongSide(t *testing.T) {
	p, c := pair(t, 1024, knit.Park{})
	ctx := context.Background()
	if err := c.TrySend(nil); !errors.Is(err, ErrWrongSide) {
		t.Errorf("consumer TrySend: %v", err)
	}
	if err := c.Send(ctx, nil); !errors.Is(err, ErrWrongSide) {
		t.Errorf("consumer Send: %v", err)
	}
	if _, err := p.TryRecv(nil); !errors.Is(err, ErrWrongSide) {
		t.Errorf("producer TryRecv: %v", err)
	}
	if _, err := p.Peek(ctx); !errors.Is(err, ErrWrongSide) {
		t.Errorf("producer Peek: %v", err)
	}
	if err := p.Commit(0); !errors.Is(err, ErrWrongSide) {
		t.Errorf("Commit without Reserve: %v", err)
	}
	if err := c.Release(); !errors.Is(err, ErrWrongSide) {
		t.Errorf("Release without Peek: %v", err)
	}
	if _, err := p.Reserve(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if err := p.TrySend([]byte("x")); !errors.Is(err, ErrWrongSide) {
		t.Errorf("TrySend with a reservation outstanding: %v", err)
	}
	if err := p.Commit(11); !errors.Is(err, ErrWrongSide) {
		t.Errorf("Commit beyond the reservation: %v", err)
	}
	if err := p.Commit(3); err != nil {
		t.Errorf("Commit(3): %v", err)
	}
	if err := p.TrySend(make([]byte, 1017)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized message: %v, want ErrTooLarge", err)
	}
}

// model drives a ring in one goroutine against a reference queue.
type model struct {
	t    *testing.T
	p, c *Ring
	q    [][]byte
	buf  []byte
}

// send tries msg: it must go in exactly when its record fits beside the
// queued ones, and a refusal must leave the ring as it was.
func (m *model) send(msg []byte) bool {
	m.t.Helper()
	fits := m.bytes()+recordHeader+align8(uint32(len(msg))) <= m.p.capacity
	before := snapshot(m.p)
	err := m.p.TrySend(msg)
	if err != nil && err != knit.ErrFull {
		m.t.Fatalf("TrySend(%d bytes): %v", len(msg), err)
	}
	ok := err == nil
	if ok != fits {
		m.t.Fatalf("TrySend(%d bytes) = %v with %d bytes queued in %d", len(msg), err, m.bytes(), m.p.capacity)
	}
	if ok {
		m.q = append(m.q, bytes.Clone(msg))
	} else if after := snapshot(m.p); after != before {
		m.t.Fatalf("a refused TrySend(%d bytes) changed the ring", len(msg))
	}
	m.check()
	return ok
}

// snapshot is everything a refused send could have changed: the shared
// header lines and data, and the producer's own state (bar its cached
// copy of the head, which a refusal refreshes).
func snapshot(p *Ring) string {
	return fmt.Sprintf("%x|%d %v", append(bytes.Clone(p.ring), p.data...), p.pos, p.resv)
}

func (m *model) recv() bool {
	m.t.Helper()
	n, err := m.c.TryRecv(m.buf)
	if err == knit.ErrEmpty {
		if len(m.q) != 0 {
			m.t.Fatalf("TryRecv found nothing with %d messages queued", len(m.q))
		}
		return false
	}
	if err != nil {
		m.t.Fatalf("TryRecv: %v", err)
	}
	if len(m.q) == 0 {
		m.t.Fatalf("TryRecv found a %d-byte message in an empty ring", n)
	}
	if !bytes.Equal(m.buf[:n], m.q[0]) {
		m.t.Fatalf("received %d bytes %x, want %d bytes %x", n, m.buf[:min(n, 16)], len(m.q[0]), m.q[0][:min(len(m.q[0]), 16)])
	}
	m.q = m.q[1:]
	m.check()
	return true
}

// check asserts the index invariants: in flight within capacity, both
// 8-aligned, and every byte in flight is a queued record's.
func (m *model) check() {
	m.t.Helper()
	tail, head := m.p.tail.Load(), m.c.head.Load()
	if tail%8 != 0 || head%8 != 0 || tail-head > m.p.capacity {
		m.t.Fatalf("tail %d head %d capacity %d", tail, head, m.p.capacity)
	}
	if inFlight, want := tail-head, m.bytes(); inFlight != want {
		m.t.Fatalf("%d bytes in flight for %d bytes of records", inFlight, want)
	}
}

// bytes is what the queued messages take in the ring.
func (m *model) bytes() uint32 {
	var n uint32
	for _, q := range m.q {
		n += recordHeader + align8(uint32(len(q)))
	}
	return n
}

func TestRingModel(t *testing.T) {
	for _, capacity := range []int{64, 256, 4096} {
		p, c := pair(t, capacity, knit.Park{})
		m := &model{t: t, p: p, c: c, buf: make([]byte, capacity)}
		rng := rand.New(rand.NewPCG(1, uint64(capacity)))
		maxMsg := p.MaxMessage()
		msg := make([]byte, maxMsg)
		for i := range 20000 {
			var n int
			switch rng.IntN(8) {
			case 0:
				n = 0
			case 1:
				n = maxMsg
			case 2:
				n = rng.IntN(maxMsg + 1)
			default:
				n = rng.IntN(min(maxMsg, 40) + 1)
			}
			for j := range n {
				msg[j] = byte(i + j)
			}
			if rng.IntN(2) == 0 {
				m.send(msg[:n])
			} else {
				m.recv()
			}
		}
		for m.recv() {
		}
	}
}

// Every message size, from every starting position: an empty ring takes
// any message up to MaxMessage at once, and a record takes exactly its own
// bytes, however it straddles the end of the buffer.
func TestRingEveryPosition(t *testing.T) {
	const capacity = 256
	p, c := pair(t, capacity, knit.Park{})
	m := &model{t: t, p: p, c: c, buf: make([]byte, capacity)}
	msg := make([]byte, capacity)
	for start := 0; start < capacity; start += 8 {
		for n := 0; n <= p.MaxMessage(); n++ {
			// Move both indices to start (mod capacity), ring empty.
			if at := int(p.pos % capacity); at != start {
				gap := (start - at + capacity) % capacity
				if gap < recordHeader {
					gap += capacity / 2
				}
				for gap > 0 { // records that fill the gap exactly
					k := min(gap, capacity)
					if !m.send(msg[:k-recordHeader]) {
						t.Fatalf("%d-byte message refused by an empty ring", k-recordHeader)
					}
					m.recv()
					gap -= k
				}
			}
			if at := int(p.pos % capacity); at != start {
				gap := (start - at + capacity) % capacity
				if !m.send(msg[:gap-recordHeader]) {
					t.Fatalf("%d-byte message refused by an empty ring", gap-recordHeader)
				}
				m.recv()
			}
			if at := int(p.pos % capacity); at != start {
				t.Fatalf("positioned at %d, want %d", at, start)
			}
			before := p.pos
			if !m.send(msg[:n]) {
				t.Fatalf("n=%d at %d: refused by an empty ring", n, start)
			}
			if !m.recv() {
				t.Fatalf("n=%d at %d: nothing to receive", n, start)
			}
			if rec := recordHeader + int(align8(uint32(n))); int(p.pos-before) != rec {
				t.Fatalf("n=%d at %d: advanced %d, want the record's %d", n, start, p.pos-before, rec)
			}
		}
	}
}

// The case that found the fault: on a 64-byte ring, after one small
// message, a maximal one did not fit the empty ring, and each failed
// TrySend left a skip record behind that shrank the ring further.
func TestEmptyRingTakesMaxMessage(t *testing.T) {
	p, c := pair(t, 64, knit.Park{})
	buf := make([]byte, 64)
	if err := p.TrySend([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryRecv(buf); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := p.TrySend(make([]byte, 56)); err != nil {
			t.Fatalf("try %d: TrySend of MaxMessage (56) into an empty ring: %v", i, err)
		}
		if p.LenBytes() != 64 {
			t.Errorf("Len %d with one 56-byte message, want 64", p.LenBytes())
		}
		if n, err := c.TryRecv(buf); err != nil || n != 56 {
			t.Fatalf("TryRecv: %d, %v", n, err)
		}
	}
	// A full ring refuses with knit.ErrFull, and the refusal changes
	// nothing.
	if err := p.TrySend(make([]byte, 40)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := p.TrySend(make([]byte, 40)); err != knit.ErrFull {
			t.Fatalf("TrySend into a full ring: %v, want knit.ErrFull", err)
		}
		if p.LenBytes() != 48 {
			t.Fatalf("Len %d after a refused TrySend, want 48", p.LenBytes())
		}
	}
	if n, err := c.TryRecv(buf); err != nil || n != 40 {
		t.Fatalf("TryRecv: %d, %v", n, err)
	}
	if err := p.TrySend(make([]byte, 40)); err != nil {
		t.Fatalf("40 bytes into the emptied ring: %v", err)
	}

	// A blocking Send of nearly the capacity into an empty ring returns
	// at once, whatever the position: the same goroutine receives next.
	p, c = pair(t, 4096, knit.Park{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	big, buf := make([]byte, 4000), make([]byte, 4096)
	for i := range 20 {
		for _, msg := range [][]byte{big[:8+i*13], big} {
			if err := p.Send(ctx, msg); err != nil {
				t.Fatalf("Send(%d) into an empty ring at %d: %v", len(msg), p.pos%4096, err)
			}
			if n, err := c.Recv(ctx, buf); err != nil || n != len(msg) {
				t.Fatalf("Recv: %d, %v", n, err)
			}
		}
	}
}

func TestRecvShortBufferKeepsMessage(t *testing.T) {
	p, c := pair(t, 1024, knit.Park{})
	ctx := context.Background()
	if err := p.Send(ctx, []byte("hello, world")); err != nil {
		t.Fatal(err)
	}
	n, err := c.Recv(ctx, make([]byte, 5))
	if !errors.Is(err, ErrShortBuffer) || n != 12 {
		t.Fatalf("Recv into 5 bytes: %d, %v; want 12, ErrShortBuffer", n, err)
	}
	if n, err := c.TryRecv(make([]byte, 11)); !errors.Is(err, ErrShortBuffer) || n != 12 {
		t.Fatalf("TryRecv into 11 bytes: %d, %v; want 12, ErrShortBuffer", n, err)
	}
	buf := make([]byte, 12)
	if n, err := c.Recv(ctx, buf); err != nil || string(buf[:n]) != "hello, world" {
		t.Fatalf("Recv: %q, %v", buf[:n], err)
	}
}

func TestPeekRelease(t *testing.T) {
	p, c := pair(t, 1024, knit.Park{})
	ctx := context.Background()
	for _, s := range []string{"one", "", "three"} {
		if err := p.Send(ctx, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"one", "", "three"} {
		a, err := c.Peek(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := c.Peek(ctx)
		if string(a) != want || string(b) != want {
			t.Fatalf("Peek: %q then %q, want %q twice", a, b, want)
		}
		if err := c.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.TryRecv(nil); err != knit.ErrEmpty {
		t.Fatalf("TryRecv on an empty ring: %v, want knit.ErrEmpty", err)
	}
}

func TestCloseSemantics(t *testing.T) {
	ctx := context.Background()
	t.Run("producer closes", func(t *testing.T) {
		p, c := pair(t, 1024, knit.Park{})
		for _, m := range []string{"a", "b"} {
			if err := p.Send(ctx, []byte(m)); err != nil {
				t.Fatalf("Send %q: %v", m, err)
			}
		}
		p.Close()
		p.Close()
		if err := p.Send(ctx, []byte("c")); !errors.Is(err, ErrClosed) {
			t.Errorf("Send after Close: %v", err)
		}
		buf := make([]byte, 8)
		for _, want := range []string{"a", "b"} {
			if n, err := c.Recv(ctx, buf); err != nil || string(buf[:n]) != want {
				t.Errorf("drain: %q, %v; want %q", buf[:n], err, want)
			}
		}
		if _, err := c.Recv(ctx, buf); !errors.Is(err, ErrClosed) {
			t.Errorf("Recv after drain: %v, want ErrClosed", err)
		}
		if _, err := c.TryRecv(buf); !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
			t.Errorf("TryRecv after drain: %v, want ErrClosed", err)
		}
	})
	t.Run("consumer closes", func(t *testing.T) {
		p, c := pair(t, 1024, knit.Park{})
		c.Close()
		if err := p.TrySend([]byte("x")); !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
			t.Errorf("TrySend to a closed consumer: %v, want ErrClosed", err)
		}
		if _, err := c.TryRecv(nil); !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
			t.Errorf("TryRecv on a closed end: %v, want ErrClosed", err)
		}
	})
	t.Run("close wakes a blocked Recv", func(t *testing.T) {
		p, c := pair(t, 1024, knit.Park{})
		watchdog(t, 20*time.Second, c.debugState)
		errc := make(chan error, 1)
		go func() {
			_, err := c.Recv(ctx, make([]byte, 8))
			errc <- err
		}()
		waitAsleep(t, c, c.dataWait)
		p.Close()
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Errorf("blocked Recv: %v, want ErrClosed", err)
		}
	})
	t.Run("close wakes a blocked Send", func(t *testing.T) {
		p, c := pair(t, 64, knit.Park{})
		watchdog(t, 20*time.Second, p.debugState)
		for {
			err := p.TrySend(make([]byte, 24))
			if err == knit.ErrFull {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		errc := make(chan error, 1)
		go func() { errc <- p.Send(ctx, make([]byte, 24)) }()
		waitAsleep(t, p, p.spaceWait)
		c.Close()
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Errorf("blocked Send: %v, want ErrClosed", err)
		}
	})
}

func TestContextEndsBlockedCalls(t *testing.T) {
	p, c := pair(t, 64, knit.Park{})
	watchdog(t, 20*time.Second, c.debugState)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Recv(ctx, make([]byte, 8))
		errc <- err
	}()
	waitAsleep(t, c, c.dataWait)
	t0 := time.Now()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Recv: %v, want context.Canceled", err)
	}
	// The cancel rings the bell: no waiting out a 50 ms slice. Allow a
	// noisy machine its scheduling delays, not a slice.
	if d := time.Since(t0); d > parkSlice {
		t.Logf("cancel took %v (slice %v)", d, parkSlice)
	}

	for p.TrySend(make([]byte, 24)) == nil {
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer dcancel()
	if err := p.Send(dctx, make([]byte, 24)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send past the deadline: %v", err)
	}
	if _, err := c.Peek(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Peek with data and an expired context: %v, want context.DeadlineExceeded (a done ctx does nothing)", err)
	}
}

// ringSnapshot is everything a call could change on a pair of ends: the
// shared words and each end's own state. Single goroutine only.
func ringSnapshot(p, c *Ring) string {
	return fmt.Sprintf("%s | producer pos %d peer %d resv %v | consumer pos %d peer %d peeked %d | rings %d",
		p.debugState(), p.pos, p.peer, p.resv, c.pos, c.peer, c.peeked, statRings.Load())
}

// A call whose ctx is already done does nothing and returns ctx.Err(),
// even where it would succeed at once. (Workers.Call:
// TestWorkersCallDoneContext.)
func TestDoneContext(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	bg := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, p, c *Ring)
		call  func(ctx context.Context, p, c *Ring) error
	}{
		{"Send, room", nil, func(ctx context.Context, p, c *Ring) error { return p.Send(ctx, []byte("x")) }},
		{"Reserve, room", nil, func(ctx context.Context, p, c *Ring) error { _, err := p.Reserve(ctx, 8); return err }},
		{"Recv, a message there", sendOne, func(ctx context.Context, p, c *Ring) error {
			_, err := c.Recv(ctx, make([]byte, 64))
			return err
		}},
		{"Peek, a message there", sendOne, func(ctx context.Context, p, c *Ring) error { _, err := c.Peek(ctx); return err }},
		{"Peek, a message peeked", func(t *testing.T, p, c *Ring) {
			sendOne(t, p, c)
			if _, err := c.Peek(bg); err != nil {
				t.Fatal(err)
			}
		}, func(ctx context.Context, p, c *Ring) error { _, err := c.Peek(ctx); return err }},
	} {
		for _, ctx := range []context.Context{cancelled, expired} {
			t.Run(fmt.Sprintf("%s/%v", tc.name, ctx.Err()), func(t *testing.T) {
				p, c := pair(t, 1024, knit.Park{})
				if tc.setup != nil {
					tc.setup(t, p, c)
				}
				before := ringSnapshot(p, c)
				if err := tc.call(ctx, p, c); err != ctx.Err() {
					t.Errorf("%v, want %v", err, ctx.Err())
				}
				if after := ringSnapshot(p, c); after != before {
					t.Errorf("the call changed the ring:\nbefore %s\nafter  %s", before, after)
				}
				// And the ends work on: what was there is still there.
				if err := p.Send(bg, []byte("after")); err != nil {
					t.Fatalf("Send after: %v", err)
				}
				if c.peeked != 0 {
					if err := c.Release(); err != nil {
						t.Fatalf("Release of the earlier Peek: %v", err)
					}
				} else if tc.setup != nil {
					buf := make([]byte, 64)
					if n, err := c.Recv(bg, buf); err != nil || string(buf[:n]) != "one" {
						t.Fatalf("Recv after: %q, %v; want the message sent before", buf[:n], err)
					}
				}
				buf := make([]byte, 64)
				if n, err := c.Recv(bg, buf); err != nil || string(buf[:n]) != "after" {
					t.Fatalf("Recv after: %q, %v; want \"after\"", buf[:n], err)
				}
			})
		}
	}
}

func sendOne(t *testing.T, p, c *Ring) {
	t.Helper()
	if err := p.Send(context.Background(), []byte("one")); err != nil {
		t.Fatal(err)
	}
}

// Both ends in one process, two goroutines: every message arrives once,
// in order, intact.
func TestRingStreamGoroutines(t *testing.T) {
	watchdog(t, 60*time.Second)
	n := scale(300_000, 50_000)
	for _, park := range []knit.Park{{Spin: knit.DefaultWorkerSpin}, {}} {
		p, c := pair(t, 4096, park)
		const seed, maxLen = 7, 1000
		var wg sync.WaitGroup
		wg.Go(func() {
			buf := make([]byte, maxLen)
			for i := range uint64(n) {
				m := msgLen(seed, i, maxLen)
				fillMsg(buf[:m], seed, i)
				if err := p.Send(context.Background(), buf[:m]); err != nil {
					t.Errorf("Send %d: %v", i, err)
					return
				}
			}
			p.Close()
		})
		buf, scratch := make([]byte, c.MaxMessage()), make([]byte, c.MaxMessage())
		for i := range uint64(n) {
			k, err := c.Recv(context.Background(), buf)
			if err != nil {
				t.Fatalf("Recv %d: %v", i, err)
			}
			if d := checkMsg(buf[:k], scratch, seed, i, maxLen); d != "" {
				t.Fatal(d)
			}
		}
		if _, err := c.Recv(context.Background(), buf); !errors.Is(err, ErrClosed) {
			t.Fatalf("after the stream: %v, want ErrClosed", err)
		}
		wg.Wait()
		if park.Spin == 0 {
			n = min(n, 20_000) // parked handoffs are slow on small boxes
		}
	}
}

// A ping-pong that parks on every message (no spinning) must never sleep
// out a slice: each sleep is ended by the peer's bell. A lost wakeup
// shows as a timed-out sleep.
func TestNoLostWakeup(t *testing.T) {
	watchdog(t, 60*time.Second)
	t.Run("plain", func(t *testing.T) { noLostWakeup(t, scale(5000, 1000)) })
	// With the sleeper paused inside its protocol, so the peer publishes
	// exactly where a broken protocol would lose the wake. The delay only
	// makes that interleaving likely; the test holds whatever the timing.
	defer setHooks(func(h *testHooks) { h.parkDelay = func() { time.Sleep(20 * time.Microsecond) } })()
	t.Run("delayed", func(t *testing.T) { noLostWakeup(t, scale(1000, 300)) })
}

func noLostWakeup(t *testing.T, n int) {
	noSpin := knit.Park{Spin: knit.NoSpin}
	a, b := pair(t, 1024, noSpin)
	c, d := pair(t, 1024, noSpin)
	// A slice runs out unrung when the machine deschedules the peer for
	// 50 ms (it happens on small shared boxes); one after which the
	// peer's index had moved is a lost wakeup, bar a peer descheduled
	// between its publish and its ring. Allow a couple, not one a round.
	const allowed = 2
	t0, l0 := statTimeouts.Load(), statLate.Load()
	var wg sync.WaitGroup
	defer func() {
		a.Close() // ends the echo goroutine if the test stops early
		wg.Wait()
	}()
	wg.Go(func() {
		buf := make([]byte, 16)
		for range n {
			k, err := b.Recv(context.Background(), buf)
			if err != nil {
				return
			}
			if err := c.Send(context.Background(), buf[:k]); err != nil {
				return
			}
		}
	})
	buf := make([]byte, 16)
	for i := range n {
		if err := a.Send(context.Background(), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if k, err := d.Recv(context.Background(), buf); err != nil || k != 1 || buf[0] != byte(i) {
			t.Fatalf("round %d: %v %d %x", i, err, k, buf[:k])
		}
		if late := statLate.Load() - l0; late > allowed {
			t.Fatalf("round %d: %d parked handoffs missed their wake: lost wakeups", i, late)
		}
	}
	t.Logf("%d round trips, %d slices slept out, %d of them with the index moved",
		n, statTimeouts.Load()-t0, statLate.Load()-l0)
}

// Nobody sleeps, so nobody rings: TrySend/TryRecv make no wake calls.
func TestNoRingWithoutSleeper(t *testing.T) {
	p, c := pair(t, 1024, knit.Park{})
	r0 := statRings.Load()
	buf := make([]byte, 64)
	for i := range 10000 {
		if err := p.TrySend(buf[:i%64]); err != nil {
			t.Fatal(err)
		}
		if _, err := c.TryRecv(buf); err != nil {
			t.Fatal(err)
		}
	}
	if n := statRings.Load() - r0; n != 0 {
		t.Errorf("%d bells rung with nobody asleep", n)
	}
}

// TrySend and TryRecv follow knit's convention for the Try forms: nil,
// knit.ErrFull (no room now) or knit.ErrEmpty (nothing now), themselves
// and not wrapped, and ErrClosed, which matches knit.ErrClosed, once the
// ring is closed.
func TestTryConvention(t *testing.T) {
	p, c := pair(t, 64, knit.Park{})
	buf := make([]byte, 64)
	if n, err := c.TryRecv(buf); err != knit.ErrEmpty || n != 0 {
		t.Fatalf("TryRecv on an empty ring: %d, %v; want 0, knit.ErrEmpty", n, err)
	}
	// 8-byte messages take 16-byte records: four fill the 64-byte ring.
	for i := range 4 {
		if err := p.TrySend([]byte{byte(i), 1, 2, 3, 4, 5, 6, 7}); err != nil {
			t.Fatalf("TrySend %d: %v", i, err)
		}
	}
	err := p.TrySend(make([]byte, 8))
	if err != knit.ErrFull || !errors.Is(err, knit.ErrFull) {
		t.Fatalf("TrySend on a full ring: %v, want knit.ErrFull", err)
	}
	if errors.Is(err, ErrClosed) || errors.Is(err, knit.ErrClosed) {
		t.Fatalf("knit.ErrFull matches ErrClosed")
	}
	if n, err := c.TryRecv(buf); err != nil || n != 8 || buf[0] != 0 {
		t.Fatalf("TryRecv: %d, %v, %x", n, err, buf[:n])
	}
	if err := p.TrySend([]byte{4, 1, 2, 3, 4, 5, 6, 7}); err != nil {
		t.Fatalf("TrySend once there is room: %v", err)
	}
	for i := 1; i <= 4; i++ {
		if n, err := c.TryRecv(buf); err != nil || n != 8 || buf[0] != byte(i) {
			t.Fatalf("TryRecv %d: %d, %v, %x", i, n, err, buf[:n])
		}
	}
	if _, err := c.TryRecv(buf); err != knit.ErrEmpty {
		t.Fatalf("TryRecv on the drained ring: %v, want knit.ErrEmpty", err)
	}

	// Closed: the producer's calls fail at once, the consumer's after it
	// has drained what was sent.
	if err := p.TrySend([]byte("last")); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if err := p.TrySend([]byte("x")); !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
		t.Errorf("TrySend on a closed end: %v, want ErrClosed and knit.ErrClosed", err)
	}
	if err := p.Send(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
		t.Errorf("Send on a closed end: %v, want ErrClosed and knit.ErrClosed", err)
	}
	if n, err := c.TryRecv(buf); err != nil || string(buf[:n]) != "last" {
		t.Fatalf("TryRecv after the producer closed: %q, %v; want \"last\"", buf[:n], err)
	}
	if _, err := c.TryRecv(buf); !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
		t.Errorf("TryRecv on a closed, drained ring: %v, want ErrClosed and knit.ErrClosed", err)
	}
	if _, err := c.Recv(context.Background(), buf); !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
		t.Errorf("Recv on a closed, drained ring: %v, want ErrClosed and knit.ErrClosed", err)
	}
}

// ErrClosed keeps its own message and matches knit.ErrClosed, itself,
// wrapped, and inside the error of a closed region.
func TestErrClosedIsKnits(t *testing.T) {
	if got := ErrClosed.Error(); got != "shm: ring closed" {
		t.Errorf("ErrClosed says %q", got)
	}
	wrapped := fmt.Errorf("sending: %w", ErrClosed)
	for _, err := range []error{ErrClosed, wrapped, errGone} {
		if !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
			t.Errorf("%q: errors.Is ErrClosed %v, knit.ErrClosed %v; want both", err, errors.Is(err, ErrClosed), errors.Is(err, knit.ErrClosed))
		}
	}
	if !errors.Is(errGone, ErrRegionClosed) {
		t.Errorf("%q does not match ErrRegionClosed", errGone)
	}
	for _, err := range []error{knit.ErrFull, knit.ErrEmpty, ErrCorrupt, ErrRegionClosed} {
		if errors.Is(err, ErrClosed) {
			t.Errorf("%q matches ErrClosed", err)
		}
	}

	// A call on an end of a closed region.
	region := newRegion(t, RingSize(64))
	p, err := CreateRing(region, 0, 64, RoleProducer, knit.Park{})
	if err != nil {
		t.Fatal(err)
	}
	region.Close()
	if err := p.TrySend(nil); !errors.Is(err, ErrRegionClosed) || !errors.Is(err, ErrClosed) || !errors.Is(err, knit.ErrClosed) {
		t.Errorf("TrySend on a closed region: %v, want ErrRegionClosed, ErrClosed and knit.ErrClosed", err)
	}
}

// Park.Backend has no meaning across processes: whatever it says, a
// blocked call sleeps on the ring's process-shared doorbell, and the
// peer's Send wakes it.
func TestRingIgnoresBackend(t *testing.T) {
	watchdog(t, 60*time.Second)
	for _, b := range []knit.Backend{knit.BackendAuto, knit.BackendFutex, knit.BackendRuntime} {
		p, c := pair(t, 1024, knit.Park{Spin: knit.NoSpin, Backend: b})
		errc := make(chan error, 1)
		buf := make([]byte, 8)
		go func() {
			n, err := c.Recv(context.Background(), buf)
			if err == nil && string(buf[:n]) != "wake" {
				err = fmt.Errorf("received %q", buf[:n])
			}
			errc <- err
		}()
		waitAsleep(t, c, c.dataWait)
		if err := p.Send(context.Background(), []byte("wake")); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Errorf("Backend %v: blocked Recv: %v", b, err)
		}
	}
}
