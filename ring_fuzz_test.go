package knit

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ringModel is the specification: a bounded FIFO slice with a closed flag.
type ringModel struct {
	items  []int
	cap    int
	closed bool
}

func (m *ringModel) push(vs ...int) int {
	if m.closed {
		return 0
	}
	n := min(len(vs), m.cap-len(m.items))
	m.items = append(m.items, vs[:n]...)
	return n
}

func (m *ringModel) pop(n int) []int {
	n = min(n, len(m.items))
	out := append([]int(nil), m.items[:n]...)
	m.items = m.items[n:]
	return out
}

// pushErr is what a Try push of want items that put in n says: nil when
// all went in, an empty batch included.
func (m *ringModel) pushErr(n, want int) string {
	switch {
	case n == want:
		return ""
	case m.closed:
		return ErrClosed.Error()
	case n < want:
		return ErrFull.Error()
	}
	return ""
}

// popErr is what a Try pop of up to want items that took n says: nil
// when it took some, or was asked for none.
func (m *ringModel) popErr(n, want int) string {
	switch {
	case n > 0 || want == 0:
		return ""
	case m.closed:
		return ErrClosed.Error()
	}
	return ErrEmpty.Error()
}

// errString is err as an observation records it.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// observation is what one operation returned, for go-cmp to diff.
type observation struct {
	Op     string
	Pushed int
	Popped []int
	Err    string
	Len    int
}

// FuzzRing runs single-goroutine operation sequences against every kind
// and the model; each byte is an operation and its argument.
func FuzzRing(f *testing.F) {
	f.Add(uint8(3), []byte{0, 0, 0, 0, 0, 1, 1, 1, 1, 1})
	f.Add(uint8(4), []byte{2, 0x52, 3, 0x43, 0, 4, 1, 5, 1, 1})
	f.Add(uint8(1), []byte{0, 0, 1, 6, 0, 7, 5, 1, 7})
	f.Add(uint8(8), []byte{0x22, 0x33, 0x14, 0x15, 0x06, 0x07, 0x22, 0x13})
	f.Fuzz(func(t *testing.T, capacity uint8, ops []byte) {
		c := int(capacity%16) + 1
		if len(ops) > 4096 {
			ops = ops[:4096]
		}
		for _, k := range ringKinds {
			q := k.newInt(c, Park{})
			m := &ringModel{cap: c}
			if k.unbounded {
				m.cap = math.MaxInt
			}
			next := 1
			var history []observation
			for i, b := range ops {
				arg := int(b >> 4)
				var g, w observation
				switch b & 7 {
				case 0: // TryPush
					g.Op, w.Op = "TryPush", "TryPush"
					err := q.TryPush(next)
					if err == nil {
						g.Pushed = 1
					}
					g.Err = errString(err)
					w.Pushed = m.push(next)
					w.Err = m.pushErr(w.Pushed, 1)
					next++
				case 1: // TryPop
					g.Op, w.Op = "TryPop", "TryPop"
					v, err := q.TryPop()
					if err == nil {
						g.Popped = []int{v}
					}
					g.Err = errString(err)
					w.Popped = m.pop(1)
					w.Err = m.popErr(len(w.Popped), 1)
				case 2: // TryPushBatch
					g.Op, w.Op = "TryPushBatch", "TryPushBatch"
					vs := make([]int, arg)
					for j := range vs {
						vs[j] = next + j
					}
					var err error
					g.Pushed, err = q.TryPushBatch(vs)
					g.Err = errString(err)
					w.Pushed = m.push(vs...)
					w.Err = m.pushErr(w.Pushed, arg)
					next += arg
				case 3: // TryPopBatch
					g.Op, w.Op = "TryPopBatch", "TryPopBatch"
					dst := make([]int, arg)
					n, err := q.TryPopBatch(dst)
					g.Popped, g.Err = append([]int(nil), dst[:n]...), errString(err)
					w.Popped = m.pop(arg)
					w.Err = m.popErr(len(w.Popped), arg)
				case 4: // Push (non-blocking cases only: it may block when full)
					g.Op, w.Op = "Push", "Push"
					if len(m.items) < m.cap || m.closed {
						if err := q.Push(context.Background(), next); err != nil {
							g.Err = err.Error()
						} else {
							g.Pushed = 1
						}
						if m.closed {
							w.Err = ErrClosed.Error()
						} else {
							w.Pushed = m.push(next)
						}
						next++
					}
				case 5: // Pop (when it cannot block)
					g.Op, w.Op = "Pop", "Pop"
					if len(m.items) > 0 || m.closed {
						v, err := q.Pop(context.Background())
						if err != nil {
							if !errors.Is(err, ErrClosed) {
								t.Fatalf("Pop: %v", err)
							}
							g.Err = err.Error()
						} else {
							g.Popped = []int{v}
						}
						if p := m.pop(1); len(p) > 0 {
							w.Popped = p
						} else {
							w.Err = ErrClosed.Error()
						}
					}
				case 6: // Close
					g.Op, w.Op = "Close", "Close"
					q.Close()
					m.closed = true
				case 7: // Len
					g.Op, w.Op = "Len", "Len"
				}
				g.Len, w.Len = q.Len(), len(m.items)
				if diff := cmp.Diff(w, g); diff != "" {
					t.Fatalf("%s cap %d: op %d diverged from the model (-want +got):\n%s\nafter: %+v", k.name, c, i, diff, history)
				}
				// Keep the last few operations for the failure message;
				// diffing the whole history would make long inputs quadratic.
				history = append(history[max(len(history)-8, 0):], g)
			}
			if q.Cap() != m.cap {
				t.Fatalf("%s: Cap %d, model %d", k.name, q.Cap(), m.cap)
			}
		}
	})
}
