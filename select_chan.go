package knit

import (
	"reflect"
	"unsafe"
)

// Channel cases of a Select, and how a blocked Select sleeps on them.
//
// A Select sleeps on its own wake channel (which the rings' doorbells
// close in on), ctx.Done(), and the channels of its channel cases. Go's
// select statement needs the channels' types at compile time, so a Select
// over any channels would sleep in reflect.Select, which allocates a
// buffer for every receive on each call. The common shapes need no
// reflection: at most one channel whose element has a size (a timer, a
// results channel), or two of one element type (a timer and a ticker),
// beside at most one whose element has none (a quit channel of
// struct{}); or up to two of the latter. The sized case's own method,
// generic in its element type, holds the native select (for a pair, the
// first case's, once it has asserted the second to its own type); a
// channel of a zero-size element is viewed as a chan struct{}, which
// moves the same zero bytes. Other shapes take reflect.Select.

// RecvCase is a case that receives from ch into *dst (dropped if dst is
// nil); a closed ch fires it with ErrClosed, and a nil ch never fires.
func RecvCase[T any](ch <-chan T, dst *T) Case { return Case{&chanRecvCase[T]{ch, dst}} }

// SendCase is a case that sends *v on ch, reading *v as the Select tries
// it or goes to sleep; a nil ch never fires.
func SendCase[T any](ch chan<- T, v *T) Case {
	if v == nil {
		panic("knit: SendCase needs a value pointer")
	}
	return Case{&chanSendCase[T]{ch, v}}
}

// chanCase is what a sleeping Select needs of a channel case.
type chanCase interface {
	selectCase
	// zero views the channel as a chan struct{} (recv or send, nil if
	// the channel is), with ok true, when its element has no size.
	zero() (recv <-chan struct{}, send chan<- struct{}, ok bool)
	// sleepPair sleeps in one native select on this case's channel,
	// other's (nil for none; a case on a channel of the same element
	// type, else ok is false and nothing happened), wake, done, and zr
	// or zs (a zero-size case's view, or nil). It returns 0 when this
	// case fired, 1 when other did, 2 when the zero-size case did, -1 on
	// wake or done; err is ErrClosed for a receive from a closed channel.
	sleepPair(other chanCase, wake, done, zr <-chan struct{}, zs chan<- struct{}) (k int, err error, ok bool)
	// sleepCase is the case as reflect.Select takes it, built as the
	// Select goes to sleep (a send reads its value then).
	sleepCase() reflect.SelectCase
	// deliver completes a case that reflect.Select performed.
	deliver(v reflect.Value, ok bool) error
}

type chanRecvCase[T any] struct {
	ch  <-chan T
	dst *T
}

func (c *chanRecvCase[T]) try() (bool, error) {
	select {
	case v, ok := <-c.ch:
		return true, c.got(v, ok)
	default:
		return false, nil
	}
}

// got stores what a receive took: v, or ErrClosed for a closed channel.
func (c *chanRecvCase[T]) got(v T, ok bool) error {
	if !ok {
		return ErrClosed
	}
	if c.dst != nil {
		*c.dst = v
	}
	return nil
}

func (c *chanRecvCase[T]) waitOn() (*ringBell, uint64) { return nil, 0 }
func (c *chanRecvCase[T]) inFlight() bool              { return false }

func (c *chanRecvCase[T]) zero() (<-chan struct{}, chan<- struct{}, bool) {
	if sizeOf[T]() != 0 {
		return nil, nil, false
	}
	return *(*<-chan struct{})(unsafe.Pointer(&c.ch)), nil, true
}

func (c *chanRecvCase[T]) ends() chanEnds[T]        { return chanEnds[T]{recv: c.ch} }
func (c *chanRecvCase[T]) fired(v T, ok bool) error { return c.got(v, ok) }

func (c *chanRecvCase[T]) sleepPair(other chanCase, wake, done, zr <-chan struct{}, zs chan<- struct{}) (int, error, bool) {
	return sleepPair[T](c, other, wake, done, zr, zs)
}

func (c *chanRecvCase[T]) sleepCase() reflect.SelectCase {
	return reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.ch)}
}

func (c *chanRecvCase[T]) deliver(v reflect.Value, ok bool) error {
	if !ok {
		return ErrClosed
	}
	if c.dst != nil {
		reflect.ValueOf(c.dst).Elem().Set(v)
	}
	return nil
}

type chanSendCase[T any] struct {
	ch chan<- T
	v  *T
}

func (c *chanSendCase[T]) try() (bool, error) {
	select {
	case c.ch <- *c.v:
		return true, nil
	default:
		return false, nil
	}
}

func (c *chanSendCase[T]) waitOn() (*ringBell, uint64) { return nil, 0 }
func (c *chanSendCase[T]) inFlight() bool              { return false }

func (c *chanSendCase[T]) zero() (<-chan struct{}, chan<- struct{}, bool) {
	if sizeOf[T]() != 0 {
		return nil, nil, false
	}
	return nil, *(*chan<- struct{})(unsafe.Pointer(&c.ch)), true
}

func (c *chanSendCase[T]) ends() chanEnds[T]   { return chanEnds[T]{send: c.ch, val: *c.v} }
func (c *chanSendCase[T]) fired(T, bool) error { return nil }

func (c *chanSendCase[T]) sleepPair(other chanCase, wake, done, zr <-chan struct{}, zs chan<- struct{}) (int, error, bool) {
	return sleepPair[T](c, other, wake, done, zr, zs)
}

func (c *chanSendCase[T]) sleepCase() reflect.SelectCase {
	return reflect.SelectCase{Dir: reflect.SelectSend, Chan: reflect.ValueOf(c.ch), Send: reflect.ValueOf(c.v).Elem()}
}

func (c *chanSendCase[T]) deliver(reflect.Value, bool) error { return nil }

// chanEnds is a case's channel as one select takes it: recv for a
// receive, send and the value to send for a send; the other end nil,
// which never fires.
type chanEnds[T any] struct {
	recv <-chan T
	send chan<- T
	val  T
}

// typedCase is a channel case of element type T.
type typedCase[T any] interface {
	chanCase
	ends() chanEnds[T]
	// fired completes the case once its channel fired with v, ok.
	fired(v T, ok bool) error
}

// sleepPair is chanCase.sleepPair, written once for both directions and
// both cases: a case's unused end is a nil channel, and so is a missing
// other case's.
func sleepPair[T any](c typedCase[T], other chanCase, wake, done, zr <-chan struct{}, zs chan<- struct{}) (int, error, bool) {
	var b chanEnds[T]
	var o typedCase[T]
	if other != nil {
		var ok bool
		if o, ok = other.(typedCase[T]); !ok {
			return 0, nil, false
		}
		b = o.ends()
	}
	a := c.ends()
	select {
	case v, ok := <-a.recv:
		return 0, c.fired(v, ok), true
	case a.send <- a.val:
		return 0, nil, true
	case v, ok := <-b.recv:
		return 1, o.fired(v, ok), true
	case b.send <- b.val:
		return 1, nil, true
	case <-wake:
	case <-done:
	case _, ok := <-zr:
		return 2, recvErr(ok), true
	case zs <- struct{}{}:
		return 2, nil, true
	}
	return -1, nil, true
}

// recvErr is a receive's error: ErrClosed when the channel was closed.
func recvErr(ok bool) error {
	if !ok {
		return ErrClosed
	}
	return nil
}

// sleepChans sleeps until the Selector is woken, done is closed or one of
// its enabled channel cases fires, and returns that case's index and
// error, or -1.
func (s *Selector) sleepChans(done <-chan struct{}) (int, error) {
	sized, sized2, zeros, nz := -1, -1, [2]int{-1, -1}, 0
	native := true
	for j, cc := range s.chanCases {
		if s.off[s.chans[j]] {
			continue
		}
		if _, _, ok := cc.zero(); ok && nz < len(zeros) {
			zeros[nz] = j
			nz++
		} else if !ok && sized < 0 {
			sized = j
		} else if !ok && sized2 < 0 {
			sized2 = j
		} else {
			native = false
		}
	}
	switch {
	case native && sized2 >= 0 && nz <= 1:
		zr, zs := s.zeroChan(zeros[0])
		k, err, ok := s.chanCases[sized].sleepPair(s.chanCases[sized2], s.wake, done, zr, zs)
		if !ok {
			break // two element types: reflect.Select below
		}
		switch k {
		case 0:
			return s.chans[sized], err
		case 1:
			return s.chans[sized2], err
		case 2:
			return s.chans[zeros[0]], err
		}
		return -1, nil
	case native && sized >= 0 && sized2 < 0 && nz <= 1:
		zr, zs := s.zeroChan(zeros[0])
		k, err, _ := s.chanCases[sized].sleepPair(nil, s.wake, done, zr, zs)
		switch k {
		case 0:
			return s.chans[sized], err
		case 2:
			return s.chans[zeros[0]], err
		}
		return -1, nil
	case native && sized < 0:
		zr1, zs1 := s.zeroChan(zeros[0])
		zr2, zs2 := s.zeroChan(zeros[1])
		select {
		case <-s.wake:
		case <-done:
		case _, ok := <-zr1:
			return s.chans[zeros[0]], recvErr(ok)
		case zs1 <- struct{}{}:
			return s.chans[zeros[0]], nil
		case _, ok := <-zr2:
			return s.chans[zeros[1]], recvErr(ok)
		case zs2 <- struct{}{}:
			return s.chans[zeros[1]], nil
		}
		return -1, nil
	}
	return s.sleepReflect(done)
}

// zeroChan is the chan struct{} view of channel case j, or nils for -1.
func (s *Selector) zeroChan(j int) (<-chan struct{}, chan<- struct{}) {
	if j < 0 {
		return nil, nil
	}
	r, w, _ := s.chanCases[j].zero()
	return r, w
}

// sleepReflect is sleepChans for the shapes a native select does not
// cover: reflect.Select over wake, done and the enabled channel cases.
func (s *Selector) sleepReflect(done <-chan struct{}) (int, error) {
	if s.sleep == nil {
		s.sleep = make([]reflect.SelectCase, 2+len(s.chans))
		s.sleep[0] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(s.wake)}
		s.sleep[1].Dir = reflect.SelectRecv
	}
	s.sleep[1].Chan = reflect.Value{}
	if done != nil {
		s.sleep[1].Chan = reflect.ValueOf(done)
	}
	for j, cc := range s.chanCases {
		if s.off[s.chans[j]] {
			s.sleep[2+j] = reflect.SelectCase{Dir: reflect.SelectRecv} // a zero Chan: ignored
		} else {
			s.sleep[2+j] = cc.sleepCase()
		}
	}
	k, v, ok := reflect.Select(s.sleep)
	if k < 2 {
		return -1, nil
	}
	return s.chans[k-2], s.chanCases[k-2].deliver(v, ok)
}
