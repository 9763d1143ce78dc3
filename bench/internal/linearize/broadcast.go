package linearize

import (
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// The broadcast model: one producer, subscribers that each see every
// item. Client 0 is the producer and pushes; client k > 0 is subscriber
// k-1 and pops from its own subscription. leaders[s] is the subscriber s
// follows, or -1: it may take an item only once that one has. A push
// fails only when the slowest subscriber is cap items behind; a pop fails
// only when its barrier (its leader's position, or the tail) is at its
// own. That is the strict specification for single-item tries (TryPush,
// TryPop); batches decide their count before they publish, as an SPSC's
// do, and are checked through the one-subscriber ring cases instead.

// bcastState is the pushed values from base on, and each subscriber's
// next position (absolute); never mutated.
type bcastState struct {
	base   int
	vals   []uint64
	cursor []int
}

// CheckBroadcast reports whether ops (single-item tries only) is
// linearizable as a broadcast of capacity cap whose subscribers follow
// leaders.
func CheckBroadcast(ops []Op, cap int, leaders []int, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(BroadcastModel(cap, leaders), BroadcastOps(ops), timeout)
}

// BroadcastModel is the broadcast specification above.
func BroadcastModel(cap int, leaders []int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return bcastState{cursor: make([]int, len(leaders))} },
		Step: func(state, input, output any) (bool, any) {
			s, in, out := state.(bcastState), input.(fifoIn), output.(fifoOut)
			tail := s.base + len(s.vals)
			switch in.kind {
			case OpPush:
				gate := tail
				for _, c := range s.cursor {
					gate = min(gate, c)
				}
				room := tail-gate < cap
				if out.n != btoi(room) {
					return false, s
				}
				if !room {
					return true, s
				}
				return true, bcastState{s.base, append(slices.Clip(s.vals), in.vals[0]), s.cursor}
			case OpPop:
				// A pop carries its subscriber in vals[0] (BroadcastOps).
				sub := int(in.vals[0])
				barrier := tail
				if l := leaders[sub]; l >= 0 {
					barrier = s.cursor[l]
				}
				if s.cursor[sub] >= barrier {
					return out.n == 0, s
				}
				if out.n != 1 || out.vals[0] != s.vals[s.cursor[sub]-s.base] {
					return false, s
				}
				cur := slices.Clone(s.cursor)
				cur[sub]++
				return true, bcastState{s.base, s.vals, cur}.trim()
			}
			return false, s
		},
		Equal: func(a, b any) bool {
			x, y := a.(bcastState), b.(bcastState)
			return x.base == y.base && slices.Equal(x.vals, y.vals) && slices.Equal(x.cursor, y.cursor)
		},
		Hash: func(st any) uint64 {
			s := st.(bcastState)
			h := fnv.New64a()
			writeU64(h, uint64(s.base))
			for _, v := range s.vals {
				writeU64(h, v)
			}
			for _, c := range s.cursor {
				writeU64(h, uint64(c))
			}
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(fifoIn), output.(fifoOut)
			if in.kind == OpPush {
				return fmt.Sprintf("TryPush(%s) -> %v", vstr(in.vals[0]), out.n == 1)
			}
			if out.n == 0 {
				return fmt.Sprintf("sub %d TryPop() -> empty", in.vals[0])
			}
			return fmt.Sprintf("sub %d TryPop() -> %s", in.vals[0], vstr(out.vals[0]))
		},
		DescribeState: func(st any) string {
			s := st.(bcastState)
			return fmt.Sprintf("base %d %s cursors %v", s.base, vsstr(s.vals), s.cursor)
		},
	}
}

// trim drops the values every subscriber has passed.
func (s bcastState) trim() bcastState {
	low := s.base + len(s.vals)
	for _, c := range s.cursor {
		low = min(low, c)
	}
	if d := low - s.base; d > 0 {
		return bcastState{low, s.vals[d:], s.cursor}
	}
	return s
}

// BroadcastOps turns a history recorded with RecordEach (client 0 the
// producer, client k subscriber k-1) into operations for
// BroadcastModel: a pop carries its subscriber in its input.
func BroadcastOps(ops []Op) []porcupine.Operation {
	out := StrictOps(ops)
	for i, o := range ops {
		if o.Kind == OpPop {
			in := out[i].Input.(fifoIn)
			in.vals = []uint64{uint64(o.Client - 1)}
			out[i].Input = in
		}
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
