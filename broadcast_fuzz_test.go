package knit

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// bcastModel is the Broadcast's specification: every value pushed, in
// order, and per subscription the index of the next one it takes, whom it
// follows, and whether it left.
type bcastModel struct {
	cap    int
	pushed []int
	subs   []bcastModelSub
	closed bool
}

type bcastModelSub struct {
	next   int
	leader int // index in subs, or -1
	left   bool
}

// gate is the least position of the subscriptions still in.
func (m *bcastModel) gate() int {
	g := len(m.pushed)
	for _, s := range m.subs {
		if !s.left {
			g = min(g, s.next)
		}
	}
	return g
}

func (m *bcastModel) push(vs ...int) int {
	if m.closed {
		return 0
	}
	n := min(len(vs), m.room())
	m.pushed = append(m.pushed, vs[:n]...)
	return n
}

// room is how many items a push may add now: without a subscription
// still in, a capacity's worth (they go to nobody, and a batch call adds
// at most Cap items at once, as Producer.TryPushBatch says).
func (m *bcastModel) room() int {
	for _, s := range m.subs {
		if !s.left {
			return max(m.cap-(len(m.pushed)-m.gate()), 0)
		}
	}
	return m.cap
}

// tryPush is push as TryPush and TryPushBatch report it: how many went
// in and, when not all did, ErrClosed's or ErrFull's text.
func (m *bcastModel) tryPush(vs ...int) (int, string) {
	n := m.push(vs...)
	switch {
	case n == len(vs):
		return n, ""
	case m.closed:
		return n, ErrClosed.Error()
	default:
		return n, ErrFull.Error()
	}
}

// barrier is how far subscription k may read: its first leader still in,
// or the tail.
func (m *bcastModel) barrier(k int) int {
	for l := m.subs[k].leader; l >= 0; l = m.subs[l].leader {
		if !m.subs[l].left {
			return m.subs[l].next
		}
	}
	return len(m.pushed)
}

// pop takes up to n items for k, and says why it took none: "" (it took
// some), ErrEmpty's or ErrClosed's text.
func (m *bcastModel) pop(k, n int) ([]int, string) {
	s := &m.subs[k]
	if s.left {
		return nil, ErrClosed.Error()
	}
	n = min(n, max(m.barrier(k)-s.next, 0))
	if n == 0 {
		if m.closed && s.next == len(m.pushed) {
			return nil, ErrClosed.Error()
		}
		return nil, ErrEmpty.Error()
	}
	out := append([]int(nil), m.pushed[s.next:s.next+n]...)
	s.next += n
	return out, ""
}

// FuzzBroadcast runs single-goroutine sequences of producer and
// subscription calls, subscribing, following and leaving, against the
// model. Items are pointers, so a slot cleared too early shows as nil.
// Each byte is an operation (low 3 bits) and its argument.
func FuzzBroadcast(f *testing.F) {
	f.Add(uint8(2), []byte{0, 0, 2, 0x0a, 0, 0x0c, 0x02, 0x0b, 0x13, 0x02})
	f.Add(uint8(4), []byte{0x0c, 0x01, 0x1a, 0x13, 0x0c, 0x0d, 0x01, 0x02, 0x12, 0x05, 0x01, 0x1b})
	f.Add(uint8(1), []byte{0x0c, 0x00, 0x00, 0x02, 0x06, 0x0a, 0x07, 0xfe, 0x03, 0x02})
	f.Add(uint8(8), []byte{0x0c, 0x14, 0x1c, 0x39, 0x39, 0x0b, 0x1b, 0x2b, 0x1d, 0x39, 0x03, 0x13, 0x23})
	f.Fuzz(func(t *testing.T, capacity uint8, ops []byte) {
		c := int(capacity%16) + 1
		if len(ops) > 4096 {
			ops = ops[:4096]
		}
		// Push and PushBatch are called only where the model says they
		// need not wait; a model that is wrong shows as a deadline error,
		// not a hang.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b := NewBroadcast[*int](c, Park{})
		m := &bcastModel{cap: c}
		var subs []*Subscription[*int]
		next := 1
		vals := func(n int) ([]*int, []int) {
			ps, vs := make([]*int, n), make([]int, n)
			for i := range ps {
				x := next
				ps[i], vs[i] = &x, x
				next++
			}
			return ps, vs
		}
		deref := func(ps []*int) []int {
			var out []int
			for _, p := range ps {
				if p == nil {
					out = append(out, -1) // a slot cleared under a subscription
				} else {
					out = append(out, *p)
				}
			}
			return out
		}
		var history []observation
		for i, op := range ops {
			arg := int(op >> 3)
			var g, w observation
			sub := -1
			if len(subs) > 0 {
				sub = arg % len(subs)
			}
			switch op & 7 {
			case 0: // TryPush: full and closed told apart
				g.Op, w.Op = "TryPush", "TryPush"
				ps, vs := vals(1)
				if err := b.TryPush(ps[0]); err != nil {
					g.Err = err.Error()
				} else {
					g.Pushed = 1
				}
				w.Pushed, w.Err = m.tryPush(vs...)
			case 1: // TryPushBatch
				g.Op, w.Op = "TryPushBatch", "TryPushBatch"
				ps, vs := vals(arg % 9)
				var err error
				if g.Pushed, err = b.TryPushBatch(ps); err != nil {
					g.Err = err.Error()
				}
				w.Pushed, w.Err = m.tryPush(vs...)
			case 2, 3: // TryPop, TryPopBatch
				if sub < 0 {
					continue
				}
				n := 1
				if op&7 == 3 {
					n = arg%8 + 1
				}
				g.Op, w.Op = "Pop", "Pop"
				if n == 1 {
					if p, err := subs[sub].TryPop(); err != nil {
						g.Err = err.Error()
					} else {
						g.Popped = deref([]*int{p})
					}
				} else {
					dst := make([]*int, n)
					k, err := subs[sub].TryPopBatch(dst)
					if err != nil {
						g.Err = err.Error()
					}
					g.Popped = deref(dst[:k])
				}
				w.Popped, w.Err = m.pop(sub, n)
			case 4: // Subscribe, or SubscribeAfter
				if len(subs) >= 6 {
					continue
				}
				g.Op, w.Op = "Subscribe", "Subscribe"
				leader := -1
				if arg%2 == 1 && sub >= 0 {
					leader = (arg >> 1) % len(subs)
					subs = append(subs, b.SubscribeAfter(subs[leader]))
				} else {
					subs = append(subs, b.Subscribe())
				}
				m.subs = append(m.subs, bcastModelSub{next: len(m.pushed), leader: leader})
			case 5: // Unsubscribe
				if sub < 0 || arg < 16 {
					continue
				}
				g.Op, w.Op = "Unsubscribe", "Unsubscribe"
				subs[sub].Unsubscribe()
				m.subs[sub].left = true
			case 6: // Close, rarely
				if arg != 31 {
					continue
				}
				g.Op, w.Op = "Close", "Close"
				b.Close()
				m.closed = true
			case 7: // Push or PushBatch, where neither has to wait
				n := arg%4 + 1
				if !m.closed && m.room() < n {
					continue
				}
				g.Op, w.Op = "Push", "Push"
				ps, vs := vals(n)
				var err error
				if n == 1 {
					if err = b.Push(ctx, ps[0]); err == nil {
						g.Pushed = 1
					}
				} else {
					g.Pushed, err = b.PushBatch(ctx, ps)
				}
				if err != nil {
					g.Err = err.Error()
				}
				w.Pushed, w.Err = m.tryPush(vs...)
			}
			g.Len, w.Len = b.Len(), 0
			if len(m.subs) > 0 {
				w.Len = len(m.pushed) - m.gate()
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Fatalf("cap %d: op %d (sub %d) diverged from the model (-want +got):\n%s\nafter: %+v", c, i, sub, diff, history)
			}
			for k, s := range subs {
				want := 0
				if !m.subs[k].left {
					want = len(m.pushed) - m.subs[k].next
				}
				if s.Len() != want {
					t.Fatalf("op %d: subscription %d Len %d, model %d", i, k, s.Len(), want)
				}
			}
			history = append(history[max(len(history)-8, 0):], g)
		}
		// Every slot that every subscription passed, and the producer has
		// not reused, is clear once the producer reloads the gate.
		t0 := b.tail.Load() &^ closedBit
		b.regate(t0)
		for pos := t0 - min(t0, uint64(len(b.buf))); pos < b.gate; pos++ {
			if b.buf[pos&b.mask] != nil {
				t.Fatalf("slot of position %d, passed by all, still holds an item", pos)
			}
		}
		if b.Cap() != m.cap {
			t.Fatalf("Cap %d, model %d", b.Cap(), m.cap)
		}
	})
}
