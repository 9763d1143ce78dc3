package suites

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Workiva/go-datastructures/queue"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The streaming rows: a producer goroutine pushes 0, 1, 2, ... for as long
// as the instance lives (blocking while the ring is full), and Run pops n
// items on the timed goroutine, checking that each is the next number.
// The producer of the burst rows pushes burst items, then sleeps gap.
//
// The knit SPSC and Words loops are written out twice rather than shared
// through an interface or a type parameter: both would put an indirect
// call on every op, and the two rows are there to compare the Go and
// assembly paths of the same ring.

var errOrder = errors.New("item lost, duplicated or out of order")

func outOfOrder(what string, got, want uint64) error {
	return fmt.Errorf("%s: got %d, want %d: %w", what, got, want, errOrder)
}

// chanStream is the Go channel row: chan uint64 of capacity ringCap.
type chanStream struct {
	ch   chan uint64
	stop atomic.Bool
	want uint64
}

func startChanStream(burst int, gap time.Duration) *chanStream {
	s := &chanStream{ch: make(chan uint64, ringCap)}
	go s.produce(burst, gap)
	return s
}

func (s *chanStream) produce(burst int, gap time.Duration) {
	defer close(s.ch)
	for i := uint64(0); !s.stop.Load(); i++ {
		s.ch <- i
		if burst > 0 && (i+1)%uint64(burst) == 0 {
			burstSleep(gap)
		}
	}
}

func (s *chanStream) Run(n int) error {
	for range n {
		v, ok := <-s.ch
		if !ok || v != s.want {
			return outOfOrder("chan", v, s.want)
		}
		s.want++
	}
	return nil
}

func (s *chanStream) Close() error {
	s.stop.Store(true)
	for range s.ch { // unblock a producer stuck on a full channel
	}
	return nil
}

// spscStream streams through a knit SPSC[uint64]: Push/Pop for batch 1,
// TryPushBatch/TryPopBatch otherwise, with a blocking Push (Pop) when a batch
// finds the ring full (empty). Close asks the producer to stop and drains
// the ring until the producer's own Close comes through: an SPSC ring is
// closed by its producer.
type spscStream struct {
	q     *knit.SPSC[uint64]
	batch int
	dst   []uint64
	want  uint64
	_     line
	stop  atomic.Bool // read by the producer every item: on a line of its own
	_     line
	done  chan struct{}
}

func startSPSCStream(batch, burst int, gap time.Duration, park knit.Park) *spscStream {
	s := &spscStream{q: knit.NewSPSC[uint64](ringCap, park), batch: batch,
		dst: make([]uint64, batch), done: make(chan struct{})}
	go s.produce(burst, gap)
	return s
}

func (s *spscStream) produce(burst int, gap time.Duration) {
	defer close(s.done)
	ctx := context.Background()
	q, _ := s.q.Ends()
	defer q.Close()
	var next uint64
	if s.batch == 1 {
		for !s.stop.Load() {
			if q.Push(ctx, next) != nil {
				return
			}
			next++
			if burst > 0 && next%uint64(burst) == 0 {
				burstSleep(gap)
			}
		}
		return
	}
	buf := make([]uint64, s.batch)
	for !s.stop.Load() {
		for i := range buf {
			buf[i] = next + uint64(i)
		}
		k, _ := q.TryPushBatch(buf)
		next += uint64(k)
		if k < len(buf) {
			if q.Push(ctx, next) != nil {
				return
			}
			next++
		}
	}
}

func (s *spscStream) Run(n int) error {
	ctx := context.Background()
	_, q := s.q.Ends()
	if s.batch == 1 {
		for range n {
			v, err := q.Pop(ctx)
			if err != nil {
				return err
			}
			if v != s.want {
				return outOfOrder("knit SPSC", v, s.want)
			}
			s.want++
		}
		return nil
	}
	for got := 0; got < n; {
		k, _ := q.TryPopBatch(s.dst[:min(len(s.dst), n-got)])
		if k == 0 {
			v, err := q.Pop(ctx)
			if err != nil {
				return err
			}
			s.dst[0], k = v, 1
		}
		for _, v := range s.dst[:k] {
			if v != s.want {
				return outOfOrder("knit SPSC", v, s.want)
			}
			s.want++
		}
		got += k
	}
	return nil
}

func (s *spscStream) Close() error {
	s.stop.Store(true)
	for _, q := s.q.Ends(); ; {
		if _, err := q.Pop(context.Background()); err != nil {
			break
		}
	}
	<-s.done
	return nil
}

// wordsStream is spscStream on knit.Words, the assembly path.
type wordsStream struct {
	q     *knit.Words
	batch int
	dst   []uint64
	want  uint64
	_     line
	stop  atomic.Bool
	_     line
	done  chan struct{}
}

func startWordsStream(batch int) *wordsStream {
	s := &wordsStream{q: knit.NewWords(ringCap, knit.Park{}), batch: batch,
		dst: make([]uint64, batch), done: make(chan struct{})}
	go s.produce()
	return s
}

func (s *wordsStream) produce() {
	defer close(s.done)
	ctx := context.Background()
	q, _ := s.q.Ends()
	defer q.Close()
	var next uint64
	if s.batch == 1 {
		for !s.stop.Load() {
			if q.Push(ctx, next) != nil {
				return
			}
			next++
		}
		return
	}
	buf := make([]uint64, s.batch)
	for !s.stop.Load() {
		for i := range buf {
			buf[i] = next + uint64(i)
		}
		k, _ := q.TryPushBatch(buf)
		next += uint64(k)
		if k < len(buf) {
			if q.Push(ctx, next) != nil {
				return
			}
			next++
		}
	}
}

func (s *wordsStream) Run(n int) error {
	ctx := context.Background()
	_, q := s.q.Ends()
	if s.batch == 1 {
		for range n {
			v, err := q.Pop(ctx)
			if err != nil {
				return err
			}
			if v != s.want {
				return outOfOrder("knit Words", v, s.want)
			}
			s.want++
		}
		return nil
	}
	for got := 0; got < n; {
		k, _ := q.TryPopBatch(s.dst[:min(len(s.dst), n-got)])
		if k == 0 {
			v, err := q.Pop(ctx)
			if err != nil {
				return err
			}
			s.dst[0], k = v, 1
		}
		for _, v := range s.dst[:k] {
			if v != s.want {
				return outOfOrder("knit Words", v, s.want)
			}
			s.want++
		}
		got += k
	}
	return nil
}

func (s *wordsStream) Close() error {
	s.stop.Store(true)
	for _, q := s.q.Ends(); ; {
		if _, err := q.Pop(context.Background()); err != nil {
			break
		}
	}
	<-s.done
	return nil
}

// workivaStream streams through go-datastructures' queue.RingBuffer:
// blocking Put and Get, which spin with runtime.Gosched while full or
// empty. Items travel as interface{}, so a uint64 past 255 is boxed: one
// allocation per item, counted in allocs/op.
type workivaStream struct {
	rb   *queue.RingBuffer
	want uint64
	done chan struct{}
}

func startWorkivaStream() *workivaStream {
	s := &workivaStream{rb: queue.NewRingBuffer(ringCap), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for i := uint64(0); ; i++ {
			if s.rb.Put(i) != nil {
				return
			}
		}
	}()
	return s
}

func (s *workivaStream) Run(n int) error {
	for range n {
		x, err := s.rb.Get()
		if err != nil {
			return err
		}
		if v, _ := x.(uint64); v != s.want {
			return outOfOrder("Workiva RingBuffer", v, s.want)
		}
		s.want++
	}
	return nil
}

func (s *workivaStream) Close() error {
	s.rb.Dispose()
	<-s.done
	return nil
}

// mailbox is the throughput limit: a box of batch words that the producer
// fills and hands over with one atomic store, and the consumer empties and
// hands back with another, between two locked threads. seq is 2k while
// the producer holds box k and 2k+1 while the consumer does.
type mailbox struct {
	_    line
	seq  atomic.Uint64
	_    line
	stop atomic.Bool
	box  []uint64
	cfg  harness.Config
	done chan struct{}

	// The consumer's side, touched only by Run.
	k       uint64 // boxes taken so far
	pos     int    // next unread word of the box held, or len(box) when none is held
	holding bool
	want    uint64
}

func startMailbox(cfg harness.Config, batch int) *mailbox {
	m := &mailbox{box: make([]uint64, batch), cfg: cfg, done: make(chan struct{})}
	ready := make(chan struct{})
	go m.produce(ready)
	<-ready
	return m
}

func (m *mailbox) produce(ready chan<- struct{}) {
	defer close(m.done)
	release := m.cfg.LockThread(1)
	defer release()
	close(ready)
	var next uint64
	for k := uint64(0); ; k++ {
		if !m.waitFor(2 * k) { // box k is ours
			return
		}
		for i := range m.box {
			m.box[i] = next
			next++
		}
		m.seq.Store(2*k + 1)
	}
}

// waitFor spins until seq == v, giving up when stopped.
func (m *mailbox) waitFor(v uint64) bool {
	for {
		for range spinBound {
			if m.seq.Load() == v {
				return true
			}
		}
		if m.stop.Load() {
			return false
		}
		runtime.Gosched()
	}
}

func (m *mailbox) Run(n int) error {
	release := m.cfg.LockThread(0)
	defer release()
	for got := 0; got < n; {
		if !m.holding {
			m.waitFor(2*m.k + 1)
			m.holding, m.pos = true, 0
		}
		for ; m.pos < len(m.box) && got < n; m.pos++ {
			if v := m.box[m.pos]; v != m.want {
				return outOfOrder("atomic handoff", v, m.want)
			}
			m.want++
			got++
		}
		if m.pos == len(m.box) {
			m.holding = false
			m.k++
			m.seq.Store(2 * m.k)
		}
	}
	return nil
}

func (m *mailbox) Close() error {
	m.stop.Store(true)
	<-m.done
	return nil
}

// ringPair is the round trip through knit: a request SPSC and a reply
// SPSC between the timed goroutine and a partner that answers v+1.
type ringPair struct {
	req, rep *knit.SPSC[uint64]
	cfg      harness.Config
	locked   bool
	done     chan struct{}
}

func startRingPair(cfg harness.Config, locked bool, park knit.Park) *ringPair {
	p := &ringPair{req: knit.NewSPSC[uint64](64, park), rep: knit.NewSPSC[uint64](64, park),
		cfg: cfg, locked: locked, done: make(chan struct{})}
	ready := make(chan struct{})
	go p.partner(ready)
	<-ready
	return p
}

func (p *ringPair) partner(ready chan<- struct{}) {
	defer close(p.done)
	if p.locked {
		release := p.cfg.LockThread(1)
		defer release()
	}
	close(ready)
	ctx := context.Background()
	_, req := p.req.Ends()
	rep, _ := p.rep.Ends()
	for {
		v, err := req.Pop(ctx)
		if err != nil || rep.Push(ctx, v+1) != nil {
			return
		}
	}
}

func (p *ringPair) Run(n int) error {
	if p.locked {
		release := p.cfg.LockThread(0)
		defer release()
	}
	ctx := context.Background()
	req, _ := p.req.Ends()
	_, rep := p.rep.Ends()
	for i := range uint64(n) {
		if err := req.Push(ctx, i); err != nil {
			return err
		}
		v, err := rep.Pop(ctx)
		if err != nil {
			return err
		}
		if v != i+1 {
			return outOfOrder("knit SPSC pair", v, i+1)
		}
	}
	return nil
}

func (p *ringPair) Close() error {
	reqTx, _ := p.req.Ends()
	repTx, _ := p.rep.Ends()
	reqTx.Close()
	<-p.done
	repTx.Close()
	return nil
}

// contended runs p producer and c consumer goroutines that live as long as
// the instance; Run hands each its share of n items and waits for all of
// them. push and pop are the transport; a failure closes it (closeQ), so
// that no goroutine stays blocked and Run returns the error.
//
// The items of a round are 0..n-1, each pushed once, and Run checks that
// each came out once, as the stream rows check their sequence: once every
// producer is done it pushes one end marker per consumer behind the
// items, which a consumer reaches only when an item was lost; once every
// consumer is done it pops the markers, where an item that came out twice
// leaves one of the round's in the way; then it compares the sum of what
// the consumers popped with that of 0..n-1, which shows an item changed
// on the way. The markers cost 2c ops a round, outside the consumers'
// loops; a ring that loses a marker itself still leaves Run waiting.
type contended struct {
	cmds      []chan contendedShare
	np, nc    int
	items     bool // push and pop move the items; false for the limit, which moves none
	push      func(uint64) error
	pop       func() (uint64, error)
	producers sync.WaitGroup
	round     sync.WaitGroup
	exit      sync.WaitGroup
	mu        sync.Mutex
	err       error
	sum       uint64 // of the items popped this round
	closeQ    func()
}

// contendedShare is a worker's part of a round: n items, and for a
// producer the first of them.
type contendedShare struct{ first, n int }

// endMarker follows a round's items; no item is as large.
const endMarker = ^uint64(0)

func startContended(p, c int, push func(uint64) error, pop func() (uint64, error), closeQ func()) *contended {
	return newContended(p, c, true, push, pop, closeQ)
}

func newContended(p, c int, items bool, push func(uint64) error, pop func() (uint64, error), closeQ func()) *contended {
	k := &contended{np: p, nc: c, items: items, push: push, pop: pop, closeQ: closeQ}
	for i := range p + c {
		cmd := make(chan contendedShare, 1)
		k.cmds = append(k.cmds, cmd)
		k.exit.Add(1)
		if i < p {
			go k.produce(cmd)
		} else {
			go k.consume(cmd)
		}
	}
	return k
}

func (k *contended) produce(cmd <-chan contendedShare) {
	defer k.exit.Done()
	push := k.push
	for s := range cmd {
		for j := range s.n {
			if err := push(uint64(s.first + j)); err != nil {
				k.fail(err)
				break
			}
		}
		k.producers.Done()
	}
}

func (k *contended) consume(cmd <-chan contendedShare) {
	defer k.exit.Done()
	pop := k.pop
	for s := range cmd {
		var sum uint64
		for j := range s.n {
			v, err := pop()
			if err == nil && v == endMarker {
				err = fmt.Errorf("contended: a consumer reached the end of the round %d items short of its %d: %w",
					s.n-j, s.n, errOrder)
			}
			if err != nil {
				k.fail(err)
				break
			}
			sum += v
		}
		k.mu.Lock()
		k.sum += sum
		k.mu.Unlock()
		k.round.Done()
	}
}

func (k *contended) fail(err error) {
	k.mu.Lock()
	first := k.err == nil
	if first {
		k.err = err
	}
	k.mu.Unlock()
	if first && k.closeQ != nil {
		k.closeQ()
	}
}

// share is worker i's part of n split over count workers.
func share(n, count, i int) int {
	q := n / count
	if i < n%count {
		q++
	}
	return q
}

// sumBelow is 0 + 1 + ... + n-1, wrapping as the consumers' sums do.
func sumBelow(n int) uint64 {
	u := uint64(n)
	if u%2 == 0 {
		return u / 2 * (u - 1)
	}
	return (u - 1) / 2 * u
}

func (k *contended) Run(n int) error {
	k.producers.Add(k.np)
	k.round.Add(k.nc)
	k.mu.Lock()
	k.sum = 0
	k.mu.Unlock()
	first := 0
	for i := range k.np {
		s := contendedShare{first, share(n, k.np, i)}
		k.cmds[i] <- s
		first += s.n
	}
	for i := range k.nc {
		k.cmds[k.np+i] <- contendedShare{0, share(n, k.nc, i)}
	}
	k.producers.Wait()
	if k.items && k.firstErr() == nil {
		for range k.nc {
			if err := k.push(endMarker); err != nil {
				k.fail(err)
				break
			}
		}
	}
	k.round.Wait()
	if err := k.firstErr(); err != nil || !k.items {
		return err
	}
	for range k.nc {
		v, err := k.pop()
		if err == nil && v != endMarker {
			err = fmt.Errorf("contended: item %d popped after the round's last: %w", v, errOrder)
		}
		if err != nil {
			k.fail(err)
			return err
		}
	}
	k.mu.Lock()
	sum := k.sum
	k.mu.Unlock()
	if want := sumBelow(n); sum != want {
		err := outOfOrder("contended: sum of the round's items", sum, want)
		k.fail(err)
		return err
	}
	return nil
}

func (k *contended) firstErr() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

func (k *contended) Close() error {
	for _, c := range k.cmds {
		close(c)
	}
	k.exit.Wait()
	if k.closeQ != nil {
		k.closeQ()
	}
	return nil
}

func startChanContended(p, c int) *contended {
	ch := make(chan uint64, ringCap)
	return startContended(p, c,
		func(v uint64) error { ch <- v; return nil },
		func() (uint64, error) { return <-ch, nil },
		nil)
}

func startRingContended(q knit.Queue[uint64], p, c int) *contended {
	ctx := context.Background()
	return startContended(p, c,
		func(v uint64) error { return q.Push(ctx, v) },
		func() (uint64, error) { return q.Pop(ctx) },
		q.Close)
}

// addWords are the contended limit's two shared words, a line apart.
type addWords struct {
	_    line
	tail atomic.Uint64
	_    line
	head atomic.Uint64
	_    line
}

func startAddContended(p, c int) *contended {
	w := new(addWords)
	return newContended(p, c, false,
		func(uint64) error { w.tail.Add(1); return nil },
		func() (uint64, error) { w.head.Add(1); return 0, nil },
		nil)
}

// futexBurst is the burst group's limit: the producer puts each burst in a
// ring with TryPush (no waiter, so no wake from the ring) and then always
// bumps a word and calls FUTEX_WAKE; the consumer, on a locked thread,
// sleeps in FUTEX_WAIT whenever the ring is empty. No spin and no waiter
// flag: every burst pays one wake syscall and one kernel sleep.
type futexBurst struct {
	q    *knit.SPSC[uint64]
	word atomic.Uint32
	stop atomic.Bool
	cfg  harness.Config
	want uint64
	done chan struct{}
}

func startFutexBurst(cfg harness.Config) *futexBurst {
	f := &futexBurst{q: knit.NewSPSC[uint64](ringCap, knit.Park{}), cfg: cfg, done: make(chan struct{})}
	go f.produce()
	return f
}

func (f *futexBurst) produce() {
	defer close(f.done)
	q, _ := f.q.Ends()
	var next uint64
	for !f.stop.Load() {
		for range burstLen {
			for q.TryPush(next) != nil {
				if f.stop.Load() {
					return
				}
				runtime.Gosched()
			}
			next++
		}
		f.word.Add(1)
		knit.FutexWake(&f.word, 1)
		burstSleep(burstGap)
	}
}

func (f *futexBurst) Run(n int) error {
	release := f.cfg.LockThread(0)
	defer release()
	_, q := f.q.Ends()
	for got := 0; got < n; {
		v, err := q.TryPop()
		if err != nil {
			w := f.word.Load()
			if v, err = q.TryPop(); err != nil {
				if err = knit.FutexWait(&f.word, w, 0); err != nil {
					return err
				}
				continue
			}
		}
		if v != f.want {
			return outOfOrder("futex burst", v, f.want)
		}
		f.want++
		got++
	}
	return nil
}

func (f *futexBurst) Close() error {
	f.stop.Store(true)
	<-f.done
	return nil
}
