package linearize

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// CheckFIFO reports whether ops is linearizable as a bounded FIFO queue of
// capacity cap (see the package comment). Unknown means porcupine ran out
// of time, which the tests treat as a failure.
func CheckFIFO(ops []Op, cap int, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(FIFOModel(cap), StrictOps(ops), timeout)
}

// CheckRing reports whether ops is linearizable as a bounded ring whose
// pushes and pops each take effect in two steps (see the package comment).
func CheckRing(ops []Op, cap int, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(RingModel(cap), PhasedOps(ops), timeout)
}

// ---- the bounded FIFO queue ----

// fifoIn and fifoOut are one operation of the FIFO model.
type fifoIn struct {
	kind Kind
	vals []uint64 // pushes: the values offered
	k    int      // TryPopBatch: len(dst)
}

type fifoOut struct {
	n    int      // how many went in or came out
	vals []uint64 // pops: what came out
}

// fifoState is the queue's contents, oldest first; never mutated.
type fifoState []uint64

// StrictOps turns a history into porcupine operations for FIFOModel: one
// operation per call.
func StrictOps(ops []Op) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	for i, o := range ops {
		out[i] = porcupine.Operation{
			ClientId: o.Client,
			Input:    fifoIn{kind: o.Kind, vals: o.In, k: o.K},
			Call:     o.Call,
			Output:   fifoOut{n: o.N, vals: o.Out},
			Return:   o.Return,
		}
	}
	return out
}

// FIFOModel is a bounded FIFO queue holding at most cap items.
func FIFOModel(cap int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return fifoState(nil) },
		Step: func(state, input, output any) (bool, any) {
			q, in, out := state.(fifoState), input.(fifoIn), output.(fifoOut)
			switch in.kind {
			case OpPush, OpPushBatch:
				if want := min(len(in.vals), cap-len(q)); out.n != want {
					return false, q
				}
				return true, append(slices.Clip(q), in.vals[:out.n]...)
			default: // OpPop, OpPopBatch
				k := 1
				if in.kind == OpPopBatch {
					k = in.k
				}
				m := min(k, len(q))
				if out.n != m || !slices.Equal(q[:m], out.vals) {
					return false, q
				}
				return true, q[m:]
			}
		},
		Equal: func(a, b any) bool { return slices.Equal(a.(fifoState), b.(fifoState)) },
		Hash: func(s any) uint64 {
			h := fnv.New64a()
			for _, v := range s.(fifoState) {
				writeU64(h, v)
			}
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(fifoIn), output.(fifoOut)
			switch in.kind {
			case OpPush:
				return fmt.Sprintf("TryPush(%s) -> %v", vstr(in.vals[0]), out.n == 1)
			case OpPushBatch:
				return fmt.Sprintf("TryPushBatch(%s) -> %d", vsstr(in.vals), out.n)
			case OpPop:
				if out.n == 0 {
					return "TryPop() -> empty"
				}
				return "TryPop() -> " + vstr(out.vals[0])
			}
			return fmt.Sprintf("TryPopBatch(%d) -> %s", in.k, vsstr(out.vals))
		},
		DescribeState: func(s any) string { return vsstr(s.(fifoState)) },
	}
}

// ---- the two-step ring ----

// phase is one atomic step of the ring model.
type phase uint8

const (
	phClaim      phase = iota // a push claims the tail position for v
	phClaimBatch              // TryPushBatch claims n positions (n maximal)
	phPublish                 // v's position becomes poppable
	phPushFail                // TryPush found the tail's slot not yet freed
	phTake                    // a pop takes the head position, which holds v
	phTakeBatch               // TryPopBatch takes the n oldest (n maximal)
	phRelease                 // the slot that held v is freed
	phPopFail                 // TryPop found the head position unpublished
)

type phIn struct {
	ph   phase
	v    uint64
	vals []uint64 // ClaimBatch: the values offered; TakeBatch: the values taken
	k, n int      // ClaimBatch: n claimed; TakeBatch: k asked for
}

// Slot states of the ring model.
const (
	stWriting  = 'W' // claimed by a producer, not yet published
	stReady    = 'R' // published, not taken
	stTaken    = 'T' // taken by a consumer, slot not yet freed
	stReleased = 'F' // slot freed
)

type ent struct {
	v  uint64
	st byte
}

// ringState covers positions base..tail-1, where base is the oldest
// position whose slot is not yet freed (freed positions in front are
// dropped, so equal states compare equal whatever their absolute
// positions). Positions before head are taken or freed; from head on,
// writing or ready.
type ringState struct {
	head int
	ents []ent
}

// PhasedOps turns a history into porcupine operations for RingModel: a
// successful push becomes a claim and a publish per item, a successful pop
// a take and a release per item, all with the call's own interval; a
// failed try is one step.
func PhasedOps(ops []Op) []porcupine.Operation {
	var out []porcupine.Operation
	add := func(o Op, in phIn) {
		out = append(out, porcupine.Operation{ClientId: o.Client, Input: in, Call: o.Call, Return: o.Return})
	}
	for _, o := range ops {
		switch o.Kind {
		case OpPush:
			if o.N == 0 {
				add(o, phIn{ph: phPushFail})
			} else {
				add(o, phIn{ph: phClaim, v: o.In[0]})
			}
		case OpPushBatch:
			add(o, phIn{ph: phClaimBatch, vals: o.In, n: o.N})
		case OpPop:
			if o.N == 0 {
				add(o, phIn{ph: phPopFail})
			} else {
				add(o, phIn{ph: phTake, v: o.Out[0]})
			}
		case OpPopBatch:
			add(o, phIn{ph: phTakeBatch, vals: o.Out, k: o.K, n: o.N})
		}
		switch o.Kind {
		case OpPush, OpPushBatch:
			for _, v := range o.In[:o.N] {
				add(o, phIn{ph: phPublish, v: v})
			}
		default:
			for _, v := range o.Out {
				add(o, phIn{ph: phRelease, v: v})
			}
		}
	}
	return out
}

// RingModel is a ring of cap slots whose operations take effect in two
// steps each (see the package comment).
func RingModel(cap int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return ringState{} },
		Step: func(state, input, _ any) (bool, any) {
			s, in := state.(ringState), input.(phIn)
			return ringStep(s, in, cap)
		},
		Equal: func(a, b any) bool {
			x, y := a.(ringState), b.(ringState)
			return x.head == y.head && slices.Equal(x.ents, y.ents)
		},
		Hash: func(st any) uint64 {
			s := st.(ringState)
			h := fnv.New64a()
			writeU64(h, uint64(s.head))
			for _, e := range s.ents {
				writeU64(h, e.v)
				h.Write([]byte{e.st})
			}
			return h.Sum64()
		},
		DescribeOperation: func(input, _ any) string {
			in := input.(phIn)
			switch in.ph {
			case phClaim:
				return "claim " + vstr(in.v)
			case phClaimBatch:
				return fmt.Sprintf("claim batch %s -> %d", vsstr(in.vals), in.n)
			case phPublish:
				return "publish " + vstr(in.v)
			case phPushFail:
				return "TryPush -> full"
			case phTake:
				return "take " + vstr(in.v)
			case phTakeBatch:
				return fmt.Sprintf("take batch(%d) -> %s", in.k, vsstr(in.vals))
			case phRelease:
				return "release " + vstr(in.v)
			}
			return "TryPop -> empty"
		},
		DescribeState: func(st any) string {
			s := st.(ringState)
			var b strings.Builder
			for i, e := range s.ents {
				if i == s.head {
					b.WriteString("| ")
				}
				fmt.Fprintf(&b, "%c:%s ", e.st, vstr(e.v))
			}
			return b.String()
		},
	}
}

func ringStep(s ringState, in phIn, cap int) (bool, ringState) {
	tail := len(s.ents)
	// free reports whether the slot of relative position i has been
	// freed for the lap after it (positions before base are freed).
	free := func(i int) bool { return i < 0 || s.ents[i].st == stReleased }
	find := func(v uint64, st byte) int {
		return slices.IndexFunc(s.ents, func(e ent) bool { return e.v == v && e.st == st })
	}
	switch in.ph {
	case phClaim:
		if !free(tail - cap) {
			return false, s
		}
		return true, ringState{head: s.head, ents: append(slices.Clip(s.ents), ent{in.v, stWriting})}
	case phClaimBatch:
		k := 0
		for k < len(in.vals) && k < cap && free(tail+k-cap) {
			k++
		}
		if in.n != k {
			return false, s
		}
		ents := slices.Clip(s.ents)
		for _, v := range in.vals[:k] {
			ents = append(ents, ent{v, stWriting})
		}
		return true, ringState{head: s.head, ents: ents}
	case phPublish:
		i := find(in.v, stWriting)
		if i < 0 {
			return false, s
		}
		return true, s.with(i, stReady)
	case phPushFail:
		return !free(tail - cap), s
	case phTake:
		if s.head == tail || s.ents[s.head] != (ent{in.v, stReady}) {
			return false, s
		}
		n := s.with(s.head, stTaken)
		n.head++
		return true, n
	case phTakeBatch:
		m := 0
		for m < in.k && s.head+m < tail && s.ents[s.head+m].st == stReady {
			m++
		}
		if in.n != m {
			return false, s
		}
		n := ringState{head: s.head + m, ents: slices.Clone(s.ents)}
		for j, v := range in.vals {
			if n.ents[s.head+j].v != v {
				return false, s
			}
			n.ents[s.head+j].st = stTaken
		}
		return true, n
	case phRelease:
		i := find(in.v, stTaken)
		if i < 0 {
			return false, s
		}
		return true, s.with(i, stReleased).trim()
	case phPopFail:
		return s.head == tail || s.ents[s.head].st == stWriting, s
	}
	return false, s
}

// with returns a copy of s with entry i in state st.
func (s ringState) with(i int, st byte) ringState {
	ents := slices.Clone(s.ents)
	ents[i].st = st
	return ringState{head: s.head, ents: ents}
}

// trim drops freed positions from the front.
func (s ringState) trim() ringState {
	for len(s.ents) > 0 && s.ents[0].st == stReleased {
		s.ents = s.ents[1:]
		s.head--
	}
	return s
}

// ---- describing histories ----

func writeU64(h interface{ Write([]byte) (int, error) }, v uint64) {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	h.Write(b[:])
}

// vstr prints a value as client.seq, the way Record makes them.
func vstr(v uint64) string { return fmt.Sprintf("%d.%d", v>>32-1, v&(1<<32-1)) }

func vsstr(vs []uint64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = vstr(v)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Format lists a history by call stamp, one operation a line, for test
// failure messages.
func Format(ops []Op) string {
	sorted := slices.Clone(ops)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Call < sorted[j].Call })
	var b strings.Builder
	for _, o := range sorted {
		fmt.Fprintf(&b, "[%4d,%4d] c%d %s", o.Call, o.Return, o.Client, o.Kind)
		switch o.Kind {
		case OpPush:
			fmt.Fprintf(&b, "(%s) -> %v", vstr(o.In[0]), o.N == 1)
		case OpPushBatch:
			fmt.Fprintf(&b, "(%s) -> %d", vsstr(o.In), o.N)
		case OpPop:
			if o.N == 0 {
				b.WriteString("() -> empty")
			} else {
				fmt.Fprintf(&b, "() -> %s", vstr(o.Out[0]))
			}
		case OpPopBatch:
			fmt.Fprintf(&b, "(%d) -> %s", o.K, vsstr(o.Out))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
