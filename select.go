package knit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/knit-go/knit/internal/sched"
)

// Select waits until one of its cases can proceed, performs that one, and
// returns its index: Go's select statement, over knit rings of any kind
// and element type as well as channels.
//
//	var job Job
//	var tick time.Time
//	i, err := knit.Select(ctx, knit.Park{},
//		knit.PopCase(jobs, &job),        // any ring, or an SPSC or Words consumer end
//		knit.PushCase(results, &res),    // waits for room; pushes res as it is then
//		knit.RecvCase(ticker.C, &tick),
//	)
//
// park says how a Select that finds no case ready waits, as a ring's
// blocked Pop does (Park{}: the default): it polls its cases for
// park.Spin, then sleeps on park.Backend. A Select over rings alone
// honours BackendFutex, sleeping in the kernel on a word of its own
// (which a cancellable ctx then costs a context.AfterFunc); one with a
// channel case sleeps in the Go scheduler whatever Backend says, as it
// must wait on the channels too.
//
// A receive case that fires has stored the item in its destination, and
// only that case took anything: nothing is taken twice or left behind.
// err is nil, or ErrClosed for a case that found its ring closed (a
// receive: closed and drained) or its channel closed (a receive). When
// ctx ends first Select returns -1 and ctx.Err(); a ctx already done when
// Select is called does nothing, even if a case is ready. Among cases
// ready together, each gets its turn: a Selector's polls start at the
// case that fired last for a streak of up to 16 Selects (the next items
// sit on lines already moved to this core), then at the one after it. A
// send to a closed channel panics, as in Go. However Select leaves (a
// return, that panic, or a panic or runtime.Goexit in ctx.Err) it is off
// every ring first, and a ring's wake it was sent and did not use goes on
// to that ring's next waiter.
//
// Select costs the rings nothing while nobody waits: a push or a pop
// still notifies with one load. A blocked Select registers on each ring's
// doorbell and sleeps on one channel of its own, with no goroutine per
// ring and no CPU; a ring's Notify wakes it, or a channel case, or ctx.
// A Selector's Select allocates nothing in the steady state with any
// number of ring cases, a ctx, and channel cases of these shapes: at most
// one whose element has a size (a timer's time.Time, a results channel),
// or two of one element type (a timer and a ticker), beside at most one
// whose element has none (a quit channel of struct{}); or up to two of
// the latter. Other channel cases (two sized channels of different
// element types, or more) sleep in reflect.Select, which allocates a
// receive buffer per call. (A set of wait nodes is made anew when a waker
// still held one as Select left.) Select itself allocates its state when
// it must wait: a loop should make a Selector once and call its Select,
// and can switch a case off and on (Selector.SetEnabled) as a nil channel
// does in a select statement.
func Select(ctx context.Context, park Park, cases ...Case) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return -1, err
	}
	if len(cases) > 0 {
		start := int(rand.Uint32N(uint32(len(cases))))
		for k := range cases {
			i := (start + k) % len(cases)
			if fired, err := cases[i].try(); fired {
				return i, err
			}
		}
	}
	return NewSelector(park, cases...).Select(ctx)
}

// Case is one case of a Select: PopCase and PushCase on knit's rings and
// ends, RecvCase and SendCase on channels.
// The zero Case is not a case: Select panics on it.
type Case struct{ c selectCase }

func (c Case) try() (bool, error) {
	if c.c == nil {
		panic("knit: Select of a zero Case: make cases with PopCase, PushCase, RecvCase or SendCase")
	}
	return c.c.try()
}

// selectCase is what Select needs of a case.
type selectCase interface {
	// try makes one attempt without waiting. fired reports that the
	// case is done; err is then ErrClosed where it found its ring or
	// channel closed.
	try() (fired bool, err error)
	// bell is the doorbell a waiter for this case registers on, and the
	// index its prepare records; nil for a channel case (a chanCase).
	waitOn() (*ringBell, uint64)
	// inFlight reports, after a try found nothing, that an item or room
	// is on its way to this case: a position the ring's other side has
	// claimed and not finished ("In flight", ringwait.go). False for a
	// channel case.
	inFlight() bool
}

// PopCase is a case that pops an item from src into *dst (dropped if dst
// is nil). src is a knit ring or a consumer end: on a single-consumer ring
// the Select's goroutine is the consumer. A nil ring, an end that its
// ring did not make, or a Consumer that is not knit's panics here.
func PopCase[T any](src Consumer[T], dst *T) Case {
	if ifaceData(unsafe.Pointer(&src)) == nil {
		panic(nilRingMsg("PopCase", src))
	}
	o, ok := src.(interface{ popOps() ringOps[T] })
	if !ok {
		panic(fmt.Sprintf("knit: PopCase of a %T, which is not a knit ring or end: Select waits on knit's doorbells", src))
	}
	r := o.popOps()
	if ifaceData(unsafe.Pointer(&r)) == nil {
		panic(nilRingMsg("PopCase", src))
	}
	return Case{&popCase[T]{r, dst}}
}

// PushCase is a case that pushes *v into dst, reading *v when the case
// fires. dst is a knit ring or a producer end: on a single-producer ring
// the Select's goroutine is the producer. A nil ring, an end that its
// ring did not make, a Producer that is not knit's, or a nil v panics
// here.
func PushCase[T any](dst Producer[T], v *T) Case {
	if ifaceData(unsafe.Pointer(&dst)) == nil {
		panic(nilRingMsg("PushCase", dst))
	}
	o, ok := dst.(interface{ pushOps() ringOps[T] })
	if !ok {
		panic(fmt.Sprintf("knit: PushCase of a %T, which is not a knit ring or end: Select waits on knit's doorbells", dst))
	}
	r := o.pushOps()
	if ifaceData(unsafe.Pointer(&r)) == nil {
		panic(nilRingMsg("PushCase", dst))
	}
	if v == nil {
		panic("knit: PushCase with a nil value pointer")
	}
	return Case{&pushCase[T]{r, v}}
}

// ifaceData is the data word of the non-empty interface at p: nil for a
// nil interface, a nil ring, or an end made without its ring
// (SPSCConsumer{} is one nil pointer, which an interface holds as its
// data word). PopCase and PushCase look at it before the first call on the ring,
// which would fault on a nil *MPMC and not on a nil *Mailbox.
func ifaceData(p unsafe.Pointer) unsafe.Pointer { return (*[2]unsafe.Pointer)(p)[1] }

// nilRingMsg is PopCase's or PushCase's (op's) panic for end, which holds
// no ring: "knit: PopCase of a nil *MPMC", "knit: PushCase of a zero
// SPSCProducer".
func nilRingMsg(op string, end any) string {
	if end == nil {
		return map[string]string{"PopCase": "knit: PopCase of a nil Consumer", "PushCase": "knit: PushCase of a nil Producer"}[op]
	}
	t := reflect.TypeOf(end)
	name, _, _ := strings.Cut(strings.Replace(t.String(), "knit.", "", 1), "[")
	if t.Kind() == reflect.Pointer && reflect.ValueOf(end).IsNil() {
		return "knit: " + op + " of a nil " + name
	}
	return "knit: " + op + " of a zero " + name + ": an end must come from its ring's Ends"
}

type popCase[T any] struct {
	r   ringOps[T]
	dst *T
}

func (c *popCase[T]) try() (bool, error) {
	v, st := c.r.pop()
	switch st {
	case stOK:
		if c.dst != nil {
			*c.dst = v
		}
		return true, nil
	case stDrained:
		return true, ErrClosed
	}
	return false, nil
}

func (c *popCase[T]) inFlight() bool { return c.r.popInFlight() }

func (c *popCase[T]) waitOn() (*ringBell, uint64) {
	tail, _ := c.r.indices()
	return &c.r.bellsOf().notEmpty, tail &^ closedBit
}

type pushCase[T any] struct {
	r ringOps[T]
	v *T
}

func (c *pushCase[T]) try() (bool, error) {
	switch c.r.push(*c.v) {
	case stOK:
		return true, nil
	case stClosed:
		return true, ErrClosed
	}
	return false, nil
}

func (c *pushCase[T]) inFlight() bool { return c.r.pushInFlight() }

func (c *pushCase[T]) waitOn() (*ringBell, uint64) {
	_, head := c.r.indices()
	return &c.r.bellsOf().notFull, head
}

// Selector is a Select whose cases and wait state are made once, for a
// loop: sel.Select(ctx) is Select(ctx, park, cases...) without the
// allocation.
// The cases' destinations and values are the pointers they were made
// with, read and written at each Select. A Selector is used by one
// goroutine at a time.
type Selector struct {
	cases     []Case
	park      Park       // how a Select that finds nothing ready waits
	off       []bool     // per case: switched off by SetEnabled
	chans     []int      // the channel cases' indices
	chanCases []chanCase // and the cases, in the same order

	// Per case, by index: the bell a ring case registers on (nil for a
	// channel case), its ticket in the current round, and owed: a
	// Notify of that bell woke this Select (it dequeued the node and
	// counted it as the sleeper it woke) and the item or room it
	// announced may still be there for another waiter. Owed is cleared
	// when a try of that case found nothing (the item went to someone)
	// or took it; whatever is still owed when Select returns is passed on
	// with a Notify, so a wake spent on this Select is never lost to the
	// ring's other waiters.
	bells   []*ringBell
	tickets []Ticket
	owed    []bool

	// What the current round holds, for release: the cases below armed
	// are registered on their bells, and those below queued have their
	// nodes offered too. busy is set while a Select is in block, so that
	// unwind can tell a Select that left by a panic or runtime.Goexit.
	armed, queued int
	busy          bool

	// wake is the channel every node of this Selector wakes, buffered 1.
	// nodes are the wait nodes, one per case (a channel case's is
	// unused), replaced after a sleep from which a waker had not yet let
	// go of a node it unlinked (waiter.passed).
	wake  chan struct{}
	nodes []waiter

	// word is what a Select sleeps on where its Park asks for the futex
	// (futex set: ring cases only, park.Backend BackendFutex): every
	// node's wake adds one to it and wakes it instead of sending on
	// wake.
	word  atomic.Uint32
	futex bool
	sleep []reflect.SelectCase // wake, ctx.Done(), then the channel cases; made by sleepReflect

	// Where the next poll starts: the case that fired last, for up to
	// selectStreak Selects in a row, then the one after it. Staying on
	// the case that fired takes the next items from the lines its ring
	// just moved to this core; moving on bounds how long the other ready
	// cases wait for their turn.
	next, streak int
}

// NewSelector makes a Selector of cases whose Selects wait as park
// says (see Select).
func NewSelector(park Park, cases ...Case) *Selector {
	s := &Selector{
		cases:   cases,
		park:    park,
		off:     make([]bool, len(cases)),
		bells:   make([]*ringBell, len(cases)),
		tickets: make([]Ticket, len(cases)),
		owed:    make([]bool, len(cases)),
		wake:    make(chan struct{}, 1),
	}
	for i, c := range cases {
		if c.c == nil {
			panic("knit: Select of a zero Case: make cases with PopCase, PushCase, RecvCase or SendCase")
		}
		if cc, ok := c.c.(chanCase); ok {
			s.chans = append(s.chans, i)
			s.chanCases = append(s.chanCases, cc)
		}
	}
	s.futex = len(s.chans) == 0 && park.Backend.resolve() == BackendFutex
	return s
}

// SetEnabled switches case i on or off. A case off is neither tried nor
// waited on until it is switched on again, as a nil channel never fires
// in a select statement. A loop over rings that close at different times
// switches each case off as it reports ErrClosed
// (sel.SetEnabled(i, false)), and goes on sleeping until the others have
// items. With every case off, Select waits for ctx alone. Every case
// starts on.
func (s *Selector) SetEnabled(i int, on bool) { s.off[s.index(i)] = !on }

func (s *Selector) index(i int) int {
	if i < 0 || i >= len(s.cases) {
		panic(fmt.Sprintf("knit: Selector case %d out of range [0, %d)", i, len(s.cases)))
	}
	return i
}

// Select is the package's Select over the Selector's cases.
func (s *Selector) Select(ctx context.Context) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return -1, err
	}
	start := s.next
	if i, err, ok := s.poll(start); ok {
		s.fired(i)
		return i, err
	}
	if spin := s.park.spinEachWait(); spin > 0 {
		b := Backoff{Budget: spin}
		for !b.IsCompleted() {
			b.Snooze()
			if i, err, ok := s.poll(start); ok {
				s.fired(i)
				return i, err
			}
		}
	}
	return s.block(ctx, start)
}

// block is Select once polling and spinning have found nothing: it
// registers on the rings, sleeps and re-checks until a case fires or ctx
// ends. Its deferred unwind is there for a Select that leaves some other
// way: a send on a closed channel panics, in a re-check or in the sleep,
// and ctx.Err, the caller's code, may panic or call runtime.Goexit.
func (s *Selector) block(ctx context.Context, start int) (int, error) {
	s.busy = true
	defer s.unwind()
	done := ctx.Done()
	if s.futex && done != nil {
		// A futex sleep cannot also wait on done: the ctx's end moves
		// the word, which a sleep then cannot miss (sleepFutex).
		defer context.AfterFunc(ctx, s.kick)()
	}
	for {
		// Register on every ring's bell (W1), then re-check every case
		// (W2): the Event's protocol, over several Events at once. A bell
		// that was relaxed is fenced before a re-check that found nothing
		// is trusted, as Pop does.
		unfenced := false
		for i, c := range s.cases {
			var b *ringBell
			var pos uint64
			if !s.off[i] {
				b, pos = c.c.waitOn()
			}
			s.bells[i] = b
			if b != nil {
				var fenced bool
				s.tickets[i], fenced = b.prepare(pos)
				unfenced = unfenced || !fenced
			}
			s.armed = i + 1
		}
		i, err, ok := s.poll(start)
		if !ok && unfenced {
			for _, b := range s.bells {
				if b != nil {
					b.fence()
				}
			}
			i, err, ok = s.poll(start)
		}
		if !ok && done != nil {
			if cerr := ctx.Err(); cerr != nil {
				i, err, ok = -1, cerr, true
			}
		}
		if !ok && s.inFlight() {
			// Never sleep on a position in flight (ringwait.go): look
			// again once its goroutine has had a turn.
			s.release()
			runtime.Gosched()
			continue
		}
		if !ok && s.yieldFirst() {
			// The deferred handoff, as Event.Wait takes it on
			// BackendRuntime: a Notify on this P just woke a goroutine,
			// most likely the one this Select waits for. Registered and
			// fenced, a poll after the yield is one more re-check.
			sched.Yield()
			i, err, ok = s.poll(start)
		}
		if !ok {
			i, err, ok = s.sleepOnce(ctx, done)
		} else {
			s.release()
		}
		if ok {
			s.busy = false
			s.passOn(i)
			s.fired(i)
			return i, err
		}
	}
}

// unwind is block's way out when it did not return: it takes back every
// registration and node still on a bell, and passes on every wake this
// Select was handed and did not use, so that a Select that panics or
// calls runtime.Goexit leaves the rings' other waiters as if it had never
// waited.
func (s *Selector) unwind() {
	if !s.busy {
		return
	}
	s.busy = false
	s.release()
	select {
	case <-s.wake:
	default:
	}
	s.passOn(-1)
}

// selectStreak is how many Selects in a row start at the case that fired
// last. Starting each poll at the next case in turn moves every ring's
// lines across for each item, and fan-in from 8 SPSC rings
// (BenchmarkSelectFanIn) measured several times slower that way
// (BENCHMARKS.md, "Select, iterators, batches and the done-context rule").
const selectStreak = 16

// fired moves the start of the next poll: see next.
func (s *Selector) fired(i int) {
	if i < 0 {
		return
	}
	if i != s.next {
		s.next, s.streak = i, 0
	}
	if s.streak++; s.streak >= selectStreak {
		s.next, s.streak = (i+1)%len(s.cases), 0
	}
}

// poll tries every case once, from start on, and returns the first that
// fires. Each case it tries owes nothing after: it took the item or room,
// or found that someone else had; but for a case whose item or room is
// still in flight, which may be the one its wake announced, so the wake
// stays owed until a later try settles it.
func (s *Selector) poll(start int) (int, error, bool) {
	n := len(s.cases)
	for k := range n {
		i := start + k
		if i >= n {
			i -= n
		}
		if s.off[i] {
			s.owed[i] = false
			continue
		}
		fired, err := s.cases[i].c.try()
		if fired {
			s.owed[i] = false
			return i, err, true
		}
		if s.owed[i] && !s.cases[i].c.inFlight() {
			s.owed[i] = false
		}
	}
	return -1, nil, false
}

// inFlight reports whether any ring case that is on has an item or room
// in flight while another waiter is registered on its bell (see "In
// flight" in ringwait.go).
func (s *Selector) inFlight() bool {
	for i, b := range s.bells {
		if b != nil && s.cases[i].c.inFlight() && b.Waiters() > 1 {
			return true
		}
	}
	return false
}

// sleepOnce queues a node on every registered bell, unless a Notify came
// since its ticket, sleeps until a node is woken, a channel case fires
// or done is closed, and takes every registration back. It returns a
// result when a channel case fired, and ok false when the caller should
// re-check the rings and ctx.
func (s *Selector) sleepOnce(ctx context.Context, done <-chan struct{}) (int, error, bool) {
	if s.nodes == nil {
		s.nodes = make([]waiter, len(s.cases))
	}
	var word *atomic.Uint32
	seen := s.word.Load() // before any node is queued: a wake after moves it
	if s.futex {
		word = &s.word
	}
	s.queued = len(s.cases)
	for i, b := range s.bells {
		if b == nil {
			continue
		}
		w := &s.nodes[i]
		w.ch, w.sel, w.word32 = s.wake, true, word
		w.passed.Store(false)
		if !b.enqueue(w, s.tickets[i]) {
			s.queued = i
			break
		}
	}
	chosen, err := -1, error(nil)
	if s.queued == len(s.cases) {
		if s.futex {
			s.sleepFutex(ctx, done, seen)
		} else if len(s.chans) == 0 {
			select {
			case <-s.wake:
			case <-done:
			}
		} else {
			chosen, err = s.sleepChans(done)
		}
	}
	s.release()
	select {
	case <-s.wake: // a token the wake that ended this sleep left, or a later one
	default:
	}
	if chosen >= 0 {
		return chosen, err, true
	}
	// Woken by a ring or by ctx: the caller re-checks the rings before it
	// looks at ctx, so an item that came with the cancellation is taken.
	return -1, nil, false
}

// sleepFutex is sleepOnce's sleep on BackendFutex: in the kernel until
// the Selector's word moves from seen (a node's wake, or kick) or ctx
// ends. A wake sent before the sleep has moved the word already.
func (s *Selector) sleepFutex(ctx context.Context, done <-chan struct{}, seen uint32) {
	for s.word.Load() == seen {
		if done != nil && ctx.Err() != nil {
			return
		}
		// Returns at once if the word moved since the load; a spurious
		// return goes round the loop.
		if err := FutexWait(&s.word, seen, 0); err != nil {
			panic("knit: Select: " + err.Error())
		}
	}
}

// kick ends a futex sleep for the ctx's end.
func (s *Selector) kick() {
	s.word.Add(1)
	FutexWake(&s.word, 1)
}

// yieldFirst reports that a Select about to sleep in the Go scheduler
// should first yield its P, for a Notify on this P a moment ago
// (Event.Wait's deferred handoff, BackendRuntime).
func (s *Selector) yieldFirst() bool {
	return haveLinkname && deferredHandoff() && !s.futex && takeReadied()
}

// release takes back what this round holds on the bells: below queued,
// the nodes, each dequeued or found woken (a wake now owed); from queued
// to armed, the registrations. A node a waker may still touch is left to
// it, and the Selector makes new ones for its next sleep.
func (s *Selector) release() {
	reuse := true
	for i, b := range s.bells[:s.armed] {
		switch {
		case b == nil:
		case i < s.queued:
			if b.dequeue(&s.nodes[i]) {
				s.owed[i] = true
				reuse = reuse && s.nodes[i].passed.Load()
			}
		default: // registered only: not yet offered, or the enqueue that failed and those after it
			b.Cancel(s.tickets[i])
		}
	}
	s.armed, s.queued = 0, 0
	if !reuse {
		s.nodes = nil // a waker may still touch one: the garbage collector keeps it for it
	}
}

// passOn notifies every bell still owed a wake, but the one whose case
// fired.
func (s *Selector) passOn(fired int) {
	for i, o := range s.owed {
		if o {
			s.owed[i] = false
			if i != fired {
				s.bells[i].Notify(1)
			}
		}
	}
}
