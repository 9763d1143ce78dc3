package shm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
)

// Region.Close while other goroutines are inside ring calls. A call that
// touched the mapping after the unmap would kill the process with a fault
// no recover can catch, so each case runs in a child process
// (closeWhileBlocked) and the parent checks that it exited cleanly.
func TestRegionCloseWhileBlocked(t *testing.T) {
	needProcesses(t)
	watchdog(t, 3*time.Minute)
	for _, tc := range []string{"recv", "send", "reserve", "peek", "spin", "stress"} {
		t.Run(tc, func(t *testing.T) {
			c := startChild(t, "close-while-blocked", nil, "KNIT_SHM_TEST_CASE="+tc,
				"KNIT_SHM_TEST_N="+strconv.Itoa(scale(300, 60)))
			out, err := c.wait(t, 2*time.Minute)
			if err != nil || !strings.Contains(out, "ok "+tc) {
				t.Fatalf("child: %v; stdout:\n%s", err, out)
			}
			t.Log(strings.TrimSpace(out))
		})
	}
}

// isClosed reports whether err is what a call on a closed end or region
// returns.
func isClosed(err error) bool { return errors.Is(err, ErrClosed) || errors.Is(err, ErrRegionClosed) }

// regionPair makes a region holding one ring, with both ends (the
// producer's with pp, the consumer's with cp), for a child: pair's region
// goes with the test that made it.
func regionPair(capacity int, pp, cp knit.Park) (*Region, *Ring, *Ring, error) {
	region, err := Create("close", RingSize(capacity))
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := CreateRing(region, 0, capacity, RoleProducer, pp)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := AttachRing(region, 0, RoleConsumer, cp)
	if err != nil {
		return nil, nil, nil, err
	}
	return region, p, c, nil
}

// closeWhileBlocked is the child side of TestRegionCloseWhileBlocked.
func closeWhileBlocked(tc string) error {
	if tc == "stress" {
		return closeStress()
	}
	noSpin, cp := knit.Park{Spin: knit.NoSpin}, knit.Park{Spin: knit.NoSpin}
	if tc == "spin" {
		// Blocked in the spin phase, which sleeps on nothing a bell
		// could ring: Close must still end it promptly.
		cp.Spin = time.Hour
	}
	region, p, c, err := regionPair(1024, noSpin, cp)
	if err != nil {
		return err
	}
	ctx := context.Background()
	fill := func() {
		for p.TrySend(make([]byte, 100)) == nil {
		}
	}
	var call func() error
	switch tc {
	case "recv":
		call = func() error { _, err := c.Recv(ctx, make([]byte, 8)); return err }
	case "peek":
		call = func() error { _, err := c.Peek(ctx); return err }
	case "spin":
		call = func() error { _, err := c.Recv(ctx, make([]byte, 8)); return err }
	case "send":
		fill()
		call = func() error { return p.Send(ctx, make([]byte, 100)) }
	case "reserve":
		fill()
		call = func() error { _, err := p.Reserve(ctx, 100); return err }
	default:
		return fmt.Errorf("unknown case %q", tc)
	}
	// Close once the call is blocked: asleep on its doorbell, or (spin)
	// inside the mapping, spinning.
	end, blocked := c, func() bool { return c.dataWait.Load() != 0 }
	switch tc {
	case "send", "reserve":
		end, blocked = p, func() bool { return p.spaceWait.Load() != 0 }
	case "spin":
		blocked = func() bool { return c.state.Load() >= stateCall }
	}
	errc := make(chan error, 1)
	go func() { errc <- call() }()
	if err := waitCond("the call to block", waitDeadline, blocked, end.debugState); err != nil {
		return err
	}
	t0 := time.Now()
	if err := region.Close(); err != nil {
		return fmt.Errorf("Close: %v", err)
	}
	took := time.Since(t0)
	select {
	case err := <-errc:
		if !isClosed(err) {
			return fmt.Errorf("blocked call: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		return errors.New("blocked call still blocked 10 s after Close")
	}
	if tc == "spin" && took > 5*time.Second {
		return fmt.Errorf("Close waited %v for a spinning call", took)
	}
	// Every call after Close fails, touching nothing.
	buf := make([]byte, 8)
	if _, err := c.Recv(ctx, buf); !errors.Is(err, ErrRegionClosed) || !errors.Is(err, ErrClosed) {
		return fmt.Errorf("Recv after Close: %v, want ErrRegionClosed and ErrClosed", err)
	}
	if _, err := c.TryRecv(buf); !errors.Is(err, ErrRegionClosed) {
		return fmt.Errorf("TryRecv after Close: %v", err)
	}
	if _, err := c.Peek(ctx); !errors.Is(err, ErrRegionClosed) {
		return fmt.Errorf("Peek after Close: %v", err)
	}
	if err := c.Release(); !errors.Is(err, ErrRegionClosed) {
		return fmt.Errorf("Release after Close: %v", err)
	}
	if err := p.TrySend(buf); !errors.Is(err, ErrRegionClosed) {
		return fmt.Errorf("TrySend after Close: %v", err)
	}
	if err := p.Send(ctx, buf); !errors.Is(err, ErrRegionClosed) {
		return fmt.Errorf("Send after Close: %v", err)
	}
	if _, err := p.Reserve(ctx, 8); !errors.Is(err, ErrRegionClosed) {
		return fmt.Errorf("Reserve after Close: %v", err)
	}
	if err := p.Commit(0); !errors.Is(err, ErrRegionClosed) {
		return fmt.Errorf("Commit after Close: %v", err)
	}
	if p.LenBytes() != 0 || c.PeerPid() != 0 {
		return fmt.Errorf("after Close: Len %d, PeerPid %d; want 0 0", p.LenBytes(), c.PeerPid())
	}
	if p.Close() != nil || c.Close() != nil {
		return errors.New("Ring.Close after Region.Close failed")
	}
	if _, err := AttachRing(region, 0, RoleConsumer, knit.Park{}); !errors.Is(err, ErrRegionClosed) {
		return fmt.Errorf("AttachRing after Close: %v", err)
	}
	fmt.Printf("ok %s: Close took %v\n", tc, took.Round(time.Microsecond))
	return nil
}

// closeStress closes a region at a random moment while a producer, a
// consumer and an observer hammer its ring with every kind of call. No
// call may fault; each ends with an error matching ErrClosed; what was
// received is exactly a prefix of what was sent, in order, intact. The
// slices of Reserve and Peek are shared memory that a concurrent Close
// may unmap, so those paths are exercised without touching them: their
// messages are checked by length only.
func closeStress() error {
	rounds := envInt("KNIT_SHM_TEST_N", 60)
	rng := rand.New(rand.NewPCG(3, 4))
	var received int
	for round := range rounds {
		park := knit.Park{Spin: []time.Duration{knit.NoSpin, 0, 5 * time.Microsecond}[round%3]}
		region, p, c, err := regionPair(256, park, park)
		if err != nil {
			return err
		}
		ctx := context.Background()
		var sent atomic.Uint64
		errs := make(chan error, 3)
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Go(func() { // producer: every call kind, message i carries i
			var msg [24]byte
			for i := uint64(0); ; i++ {
				binary.LittleEndian.PutUint64(msg[:], i)
				n := 8 + int(i%17)
				var err error
				switch i % 3 {
				case 0:
					err = p.Send(ctx, msg[:n])
				case 1:
					for err = knit.ErrFull; err == knit.ErrFull; {
						err = p.TrySend(msg[:n])
					}
				case 2:
					if _, err = p.Reserve(ctx, n); err == nil {
						err = p.Commit(n)
					}
				}
				if err != nil {
					errs <- err
					return
				}
				sent.Store(i + 1)
			}
		})
		var got uint64
		wg.Go(func() { // consumer
			buf := make([]byte, 64)
			for ; ; got++ {
				var m []byte
				var err error
				switch got % 3 {
				case 0:
					var n int
					n, err = c.Recv(ctx, buf)
					m = buf[:n]
				case 1:
					var n int
					for err = knit.ErrEmpty; err == knit.ErrEmpty; {
						n, err = c.TryRecv(buf)
					}
					m = buf[:n]
				case 2:
					if m, err = c.Peek(ctx); err == nil {
						err = c.Release()
					}
				}
				if err != nil {
					errs <- err
					return
				}
				if len(m) != 8+int(got%17) || got%3 != 2 && binary.LittleEndian.Uint64(m) != got {
					errs <- fmt.Errorf("round %d: message %d: %d bytes %x", round, got, len(m), m)
					return
				}
			}
		})
		wg.Go(func() { // observer
			for !stop.Load() {
				p.LenBytes()
				c.PeerPid()
				runtime.Gosched()
			}
		})
		// A random moment to close at, not a wait for a state: every
		// moment is correct, and the check after the rounds asks only
		// that the ring ran at all.
		time.Sleep(time.Duration(rng.IntN(10000)) * time.Microsecond)
		if round%5 == 0 {
			c.Close() // an end closed first, then its region
		}
		if err := region.Close(); err != nil {
			return fmt.Errorf("round %d: Close: %v", round, err)
		}
		stop.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			if !isClosed(err) {
				return fmt.Errorf("round %d: %v, want ErrClosed", round, err)
			}
		}
		if got > sent.Load() {
			return fmt.Errorf("round %d: received %d messages, %d sent", round, got, sent.Load())
		}
		received += int(got)
	}
	if received < rounds {
		return fmt.Errorf("%d messages in %d rounds: the ring hardly ran before Close", received, rounds)
	}
	fmt.Printf("ok stress: %d rounds, %d messages\n", rounds, received)
	return nil
}
