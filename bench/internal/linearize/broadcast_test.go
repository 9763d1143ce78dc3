package linearize

import (
	"fmt"
	"sync"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/knit-go/knit"
)

// bcastShapes are the subscriber sets checked: leaders[s] is the
// subscriber s follows, or -1.
var bcastShapes = [][]int{
	{-1, -1},    // two independent subscribers
	{-1, 0},     // a stage behind another
	{-1, 0, 1},  // a pipeline of three
	{-1, -1, 0}, // a stage, and a subscriber beside both
}

// bcastRoles is the producer (client 0) and one consumer per subscriber.
func bcastRoles(subs int) []Role {
	roles := []Role{Producer}
	for range subs {
		roles = append(roles, Consumer)
	}
	return roles
}

// pusher and popper are the two sides as the recorder drives them,
// over items of type T made from and read back to the recorder's values;
// each side's other calls are never made (the roles say so).
type pusher[T any] struct {
	b   *knit.Broadcast[T]
	enc func(uint64) T
}

func (p pusher[T]) TryPush(v uint64) error             { return p.b.TryPush(p.enc(v)) }
func (p pusher[T]) TryPushBatch([]uint64) (int, error) { panic("batch") }
func (p pusher[T]) TryPop() (uint64, error)            { panic("pop on the producer") }
func (p pusher[T]) TryPopBatch([]uint64) (int, error)  { panic("pop on the producer") }

type popper[T any] struct {
	s   *knit.Subscription[T]
	dec func(*T) uint64
}

func (p popper[T]) TryPush(uint64) error               { panic("push on a subscription") }
func (p popper[T]) TryPushBatch([]uint64) (int, error) { panic("push on a subscription") }
func (p popper[T]) TryPopBatch([]uint64) (int, error)  { panic("batch") }
func (p popper[T]) TryPop() (uint64, error) {
	x, err := p.s.TryPop()
	if err != nil {
		return 0, err
	}
	return p.dec(&x), nil
}

// recordBroadcast records one history on a new Broadcast[T] of capacity c
// with the subscribers of leaders.
func recordBroadcast[T any](c int, leaders []int, seed uint64, enc func(uint64) T, dec func(*T) uint64) []Op {
	b := knit.NewBroadcast[T](c, knit.Park{})
	subs := make([]*knit.Subscription[T], len(leaders))
	for i, l := range leaders {
		if l < 0 {
			subs[i] = b.Subscribe()
		} else {
			subs[i] = b.SubscribeAfter(subs[l])
		}
	}
	roles := bcastRoles(len(leaders))
	return RecordEach(func(client int) Queue {
		if client == 0 {
			return pusher[T]{b, enc}
		}
		return popper[T]{subs[client-1], dec}
	}, Config{Roles: roles, Ops: opsPer(roles), Seed: seed})
}

// TestKnitBroadcast records histories of a Broadcast's producer and its
// subscriptions (single-item tries, every shape) and checks each against
// the broadcast model: every subscriber sees every item in order, a
// follower never before its leader, and a push fails only when the
// slowest is a lap behind. Every other history moves 8 KiB items, which
// widens each call so that calls overlap (see TestKnitRings).
func TestKnitBroadcast(t *testing.T) {
	for _, leaders := range bcastShapes {
		t.Run(fmt.Sprint(leaders), func(t *testing.T) {
			overlapped, total := 0, 0
			for h := range histories() {
				c := caps[h%len(caps)]
				var ops []Op
				if h%2 == 1 {
					w := &wideQueue{}
					ops = recordBroadcast(c, leaders, uint64(h), fill, w.check)
					if torn := w.torn.Load(); torn != 0 {
						t.Fatalf("history %d: %d torn values", h, torn)
					}
				} else {
					ops = recordBroadcast(c, leaders, uint64(h), func(v uint64) uint64 { return v }, func(v *uint64) uint64 { return *v })
				}
				overlapped += Overlapping(ops)
				total += len(ops)
				if res := CheckBroadcast(ops, c, leaders, checkTimeout); res != porcupine.Ok {
					t.Fatalf("history %d (cap %d): broadcast model says %v\n%s", h, c, res, Format(ops))
				}
			}
			t.Logf("%d histories, %d ops, %.0f%% overlapping another", histories(), total, 100*float64(overlapped)/float64(total))
		})
	}
}

// fakeBroadcast is a mutex-guarded broadcast with deliberate bugs, the
// negative controls of the broadcast model.
type fakeBroadcast struct {
	mu        sync.Mutex
	vals      []uint64 // every value pushed
	cursor    []int
	leaders   []int
	cap       int
	noStages  bool // followers read up to the tail, not their leader
	noGate    bool // the producer ignores the subscribers: up to 2*cap ahead
	skipEvery int  // subscriber 0 skips an item every n pops
	subPops   int
}

func (f *fakeBroadcast) push(v uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	gate := len(f.vals)
	for _, c := range f.cursor {
		gate = min(gate, c)
	}
	limit := f.cap
	if f.noGate {
		limit = 2 * f.cap
	}
	if len(f.vals)-gate >= limit {
		return false
	}
	f.vals = append(f.vals, v)
	return true
}

func (f *fakeBroadcast) pop(s int) (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	barrier := len(f.vals)
	if l := f.leaders[s]; l >= 0 && !f.noStages {
		barrier = f.cursor[l]
	}
	if f.cursor[s] >= barrier {
		return 0, false
	}
	if s == 0 && f.skipEvery > 0 {
		if f.subPops++; f.subPops%f.skipEvery == 0 && f.cursor[s]+1 < barrier {
			f.cursor[s]++
		}
	}
	v := f.vals[f.cursor[s]]
	f.cursor[s]++
	return v, true
}

type fakePusher struct{ f *fakeBroadcast }

func (p fakePusher) TryPush(v uint64) error {
	if !p.f.push(v) {
		return knit.ErrFull
	}
	return nil
}
func (p fakePusher) TryPushBatch([]uint64) (int, error) { panic("batch") }
func (p fakePusher) TryPop() (uint64, error)            { panic("pop on the producer") }
func (p fakePusher) TryPopBatch([]uint64) (int, error)  { panic("pop on the producer") }

type fakePopper struct {
	f *fakeBroadcast
	s int
}

func (p fakePopper) TryPush(uint64) error               { panic("push on a subscription") }
func (p fakePopper) TryPushBatch([]uint64) (int, error) { panic("push on a subscription") }
func (p fakePopper) TryPop() (uint64, error) {
	if v, ok := p.f.pop(p.s); ok {
		return v, nil
	}
	return 0, knit.ErrEmpty
}
func (p fakePopper) TryPopBatch([]uint64) (int, error) { panic("batch") }

// TestBroadcastNegativeControls: a correct mutex broadcast passes the
// model in every history; each broken one is rejected in most.
func TestBroadcastNegativeControls(t *testing.T) {
	leaders := []int{-1, 0, -1}
	cases := []struct {
		name string
		make func(c int) *fakeBroadcast
		bad  bool
	}{
		{"mutex broadcast (correct)", func(c int) *fakeBroadcast { return &fakeBroadcast{cap: c} }, false},
		{"followers ignore their leader", func(c int) *fakeBroadcast { return &fakeBroadcast{cap: c, noStages: true} }, true},
		{"producer ignores the slowest", func(c int) *fakeBroadcast { return &fakeBroadcast{cap: c, noGate: true} }, true},
		{"a subscriber skips an item", func(c int) *fakeBroadcast { return &fakeBroadcast{cap: c, skipEvery: 2} }, true},
	}
	const n = 40
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bad := 0
			for h := range n {
				c := []int{2, 4}[h%2] // a skip needs two items in the ring
				f := tc.make(c)
				f.leaders, f.cursor = leaders, make([]int, len(leaders))
				roles := bcastRoles(len(leaders))
				ops := RecordEach(func(client int) Queue {
					if client == 0 {
						return fakePusher{f}
					}
					return fakePopper{f, client - 1}
				}, Config{Roles: roles, Ops: 40, Seed: uint64(h)})
				res := CheckBroadcast(ops, c, leaders, checkTimeout)
				if res == porcupine.Unknown {
					t.Fatalf("history %d: check timed out", h)
				}
				if res == porcupine.Illegal {
					bad++
				}
				if !tc.bad && res != porcupine.Ok {
					t.Fatalf("history %d of a correct broadcast rejected\n%s", h, Format(ops))
				}
			}
			t.Logf("rejected %d/%d", bad, n)
			if tc.bad && bad < n/2 {
				t.Errorf("a broken broadcast passed too often: rejected %d/%d", bad, n)
			}
		})
	}
}
