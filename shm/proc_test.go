package shm

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knit-go/knit"
)

// Tests with real processes: the test binary re-executed as the peer
// (RunTestChild), the region passed as fd 3.

func needProcesses(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no regions on", runtime.GOOS)
	}
}

func streamEnv(off, n int, seed uint64, maxLen int) []string {
	return []string{
		"KNIT_SHM_TEST_OFF=" + strconv.Itoa(off),
		"KNIT_SHM_TEST_N=" + strconv.Itoa(n),
		"KNIT_SHM_TEST_SEED=" + strconv.FormatUint(seed, 10),
		"KNIT_SHM_TEST_MAX=" + strconv.Itoa(maxLen),
	}
}

// parseOK reads a child's "ok N CRC" line.
func parseOK(t *testing.T, out string) (int, uint32) {
	t.Helper()
	var n int
	var crc uint32
	if _, err := fmt.Sscanf(strings.TrimSpace(out), "ok %d %x", &n, &crc); err != nil {
		t.Fatalf("child output %q: %v", out, err)
	}
	return n, crc
}

// Parent sends, child receives and checks every byte, sizes random from
// 0 to the ring's maximum across many wraps; the counts and CRCs match.
func TestProcessStreamToChild(t *testing.T) {
	needProcesses(t)
	watchdog(t, 90*time.Second)
	const capacity, seed, maxLen = 1 << 16, 11, 4096
	n := scale(1_000_000, 30_000)
	region := newRegion(t, RingSize(capacity))
	p, err := CreateRing(region, 0, capacity, RoleProducer, knit.Park{})
	if err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "consume", region, streamEnv(0, n, seed, maxLen)...)
	defer logStats(t, time.Now(), n)()
	buf := make([]byte, maxLen)
	crc := crc32.NewIEEE()
	ctx := context.Background()
	for i := range uint64(n) {
		m := msgLen(seed, i, maxLen)
		fillMsg(buf[:m], seed, i)
		if err := p.Send(ctx, buf[:m]); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
		crc.Write(buf[:m])
	}
	p.Close()
	out, err := c.wait(t, 60*time.Second)
	if err != nil {
		t.Fatalf("child: %v (stdout %q)", err, out)
	}
	if gotN, gotCRC := parseOK(t, out); gotN != n || gotCRC != crc.Sum32() {
		t.Fatalf("child received %d messages, crc %08x; sent %d, crc %08x", gotN, gotCRC, n, crc.Sum32())
	}
	if pid := p.PeerPid(); pid != c.cmd.Process.Pid {
		t.Errorf("PeerPid %d, child pid %d", pid, c.cmd.Process.Pid)
	}
}

// Child sends, parent receives: the parent is the consumer this time,
// with zero-copy Peek/Release.
func TestProcessStreamFromChild(t *testing.T) {
	needProcesses(t)
	watchdog(t, 90*time.Second)
	const capacity, seed = 1024, 12
	n := scale(300_000, 20_000)
	region := newRegion(t, RingSize(capacity))
	r, err := CreateRing(region, 0, capacity, RoleConsumer, knit.Park{})
	if err != nil {
		t.Fatal(err)
	}
	maxLen := r.MaxMessage()
	c := startChild(t, "produce", region, streamEnv(0, n, seed, maxLen)...)
	scratch := make([]byte, maxLen)
	crc := crc32.NewIEEE()
	ctx := context.Background()
	for i := range uint64(n) {
		p, err := r.Peek(ctx)
		if err != nil {
			t.Fatalf("Peek %d: %v", i, err)
		}
		if d := checkMsg(p, scratch, seed, i, maxLen); d != "" {
			t.Fatal(d)
		}
		crc.Write(p)
		if err := r.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Peek(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("after %d messages: %v, want ErrClosed", n, err)
	}
	out, err := c.wait(t, 30*time.Second)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if gotN, gotCRC := parseOK(t, out); gotN != n || gotCRC != crc.Sum32() {
		t.Fatalf("child sent %d messages, crc %08x; received %d, crc %08x", gotN, gotCRC, n, crc.Sum32())
	}
}

// Three children, six rings in one region: each child echoes its own
// stream back while the parent sends and receives on all three at once.
func TestProcessEchoThreeChildren(t *testing.T) {
	needProcesses(t)
	watchdog(t, 90*time.Second)
	const children, capacity = 3, 2048
	n := scale(60_000, 5_000)
	size := RingSize(capacity)
	region := newRegion(t, 2*children*size)
	var wg sync.WaitGroup
	for k := range children {
		out, err := CreateRing(region, 2*k*size, capacity, RoleProducer, knit.Park{})
		if err != nil {
			t.Fatal(err)
		}
		in, err := CreateRing(region, (2*k+1)*size, capacity, RoleConsumer, knit.Park{})
		if err != nil {
			t.Fatal(err)
		}
		// Both ends, and the child's, take the default budget: no spin
		// below four Ps or CPUs, where more processes than cores would
		// make spinning only steal.
		maxLen := out.MaxMessage()
		seed := uint64(100 + k)
		c := startChild(t, "echo", region, "KNIT_SHM_TEST_OFF="+strconv.Itoa(2*k*size),
			"KNIT_SHM_TEST_OFF2="+strconv.Itoa((2*k+1)*size), "KNIT_SHM_TEST_SPIN=0")
		wg.Go(func() {
			buf := make([]byte, maxLen)
			for i := range uint64(n) {
				m := msgLen(seed, i, maxLen)
				fillMsg(buf[:m], seed, i)
				if err := out.Send(context.Background(), buf[:m]); err != nil {
					t.Errorf("child %d: Send %d: %v", k, i, err)
					return
				}
			}
			out.Close()
		})
		wg.Go(func() {
			buf, scratch := make([]byte, maxLen), make([]byte, maxLen)
			for i := range uint64(n) {
				m, err := in.Recv(context.Background(), buf)
				if err != nil {
					t.Errorf("child %d: Recv %d: %v", k, i, err)
					return
				}
				if d := checkMsg(buf[:m], scratch, seed, i, maxLen); d != "" {
					t.Errorf("child %d: %s", k, d)
					return
				}
			}
			if _, err := in.Recv(context.Background(), buf); !errors.Is(err, ErrClosed) {
				t.Errorf("child %d: after the stream: %v, want ErrClosed", k, err)
			}
			if _, err := c.wait(t, 30*time.Second); err != nil {
				t.Errorf("child %d: %v", k, err)
			}
		})
	}
	wg.Wait()
}

// The peer is SIGKILLed: a blocked Recv, and a blocked Send, return
// ErrPeerDead within a bounded time.
func TestPeerKilled(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	const bound = 5 * time.Second // parkSlice plus a noisy machine's delays

	t.Run("Recv, mid-transfer", func(t *testing.T) {
		const capacity, seed = 4096, 21
		region := newRegion(t, RingSize(capacity))
		r, err := CreateRing(region, 0, capacity, RoleConsumer, knit.Park{})
		if err != nil {
			t.Fatal(err)
		}
		maxLen := r.MaxMessage()
		c := startChild(t, "produce-forever", region, streamEnv(0, 0, seed, maxLen)...)
		buf, scratch := make([]byte, maxLen), make([]byte, maxLen)
		ctx := context.Background()
		var i uint64
		recv := func() error {
			m, err := r.Recv(ctx, buf)
			if err != nil {
				return err
			}
			if d := checkMsg(buf[:m], scratch, seed, i, maxLen); d != "" {
				t.Fatal(d)
			}
			i++
			return nil
		}
		for i < 2000 {
			if err := recv(); err != nil {
				t.Fatal(err)
			}
		}
		c.kill(t)
		t0 := time.Now()
		err = nil
		for err == nil && i < 1<<40 {
			err = recv() // drains what was sent, every record intact
		}
		if !errors.Is(err, ErrPeerDead) {
			t.Fatalf("after the kill: %v, want ErrPeerDead", err)
		}
		if d := time.Since(t0); d > bound {
			t.Errorf("ErrPeerDead after %v, want within %v", d, bound)
		}
		t.Logf("%d messages, then %v after %v", i, err, time.Since(t0))
	})

	t.Run("Send, ring full", func(t *testing.T) {
		region := newRegion(t, RingSize(1024))
		p, err := CreateRing(region, 0, 1024, RoleProducer, knit.Park{})
		if err != nil {
			t.Fatal(err)
		}
		c := startChild(t, "stall", region, "KNIT_SHM_TEST_ROLE="+strconv.Itoa(int(RoleConsumer)))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			for {
				if err := p.Send(ctx, make([]byte, 100)); err != nil {
					errc <- err
					return
				}
			}
		}()
		waitFor(t, "the consumer attached and the ring full", func() bool { return p.PeerPid() != 0 && p.LenBytes() > 1024-120 }, p.debugState)
		waitAsleep(t, p, p.spaceWait)
		c.kill(t)
		t0 := time.Now()
		if err := <-errc; !errors.Is(err, ErrPeerDead) {
			t.Fatalf("blocked Send: %v, want ErrPeerDead", err)
		}
		if d := time.Since(t0); d > bound {
			t.Errorf("ErrPeerDead after %v, want within %v", d, bound)
		}
	})

	t.Run("Recv, peer never attached", func(t *testing.T) {
		region := newRegion(t, RingSize(1024))
		r, err := CreateRing(region, 0, 1024, RoleConsumer, knit.Park{})
		if err != nil {
			t.Fatal(err)
		}
		c := startChild(t, "stall", nil) // fails at once: no fd 3
		c.wait(t, 30*time.Second)
		r.setPeer(c.cmd.Process.Pid)
		t0 := time.Now()
		if _, err := r.Recv(context.Background(), nil); !errors.Is(err, ErrPeerDead) {
			t.Fatalf("Recv: %v, want ErrPeerDead", err)
		}
		if d := time.Since(t0); d > bound {
			t.Errorf("ErrPeerDead after %v, want within %v", d, bound)
		}
	})
}

// logStats logs this process's slow-path counters over a test.
func logStats(t *testing.T, t0 time.Time, n int) func() {
	r0, s0, l0 := statRings.Load(), statTimeouts.Load(), statLate.Load()
	return func() {
		t.Logf("%d messages in %v (%v each); this process rang %d bells, slept out %d slices (%d with the index moved)",
			n, time.Since(t0).Round(time.Millisecond), time.Since(t0)/time.Duration(n),
			statRings.Load()-r0, statTimeouts.Load()-s0, statLate.Load()-l0)
	}
}

// The peer's pid as the header gives it: a consumer whose producer's
// process is gone (here: a child that exited, its pid written into the
// producer's slot) gets ErrPeerDead instead of waiting forever.
func TestPeerPidFromHeader(t *testing.T) {
	needProcesses(t)
	watchdog(t, 30*time.Second)
	region := newRegion(t, RingSize(1024))
	if _, err := CreateRing(region, 0, 1024, RoleProducer, knit.Park{}); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "stall", nil) // fails at once: no fd 3
	c.wait(t, 20*time.Second)
	word(region.Bytes(), offProdPid).Store(uint32(c.cmd.Process.Pid))
	r, err := AttachRing(region, 0, RoleConsumer, knit.Park{})
	if err != nil {
		t.Fatal(err)
	}
	if r.PeerPid() != c.cmd.Process.Pid {
		t.Fatalf("PeerPid %d, want %d", r.PeerPid(), c.cmd.Process.Pid)
	}
	if _, err := r.Recv(context.Background(), nil); !errors.Is(err, ErrPeerDead) {
		t.Fatalf("Recv: %v, want ErrPeerDead", err)
	}
}

// An end whose holder has exited can be attached again; one whose holder
// lives cannot.
func TestAttachEndOfDeadHolder(t *testing.T) {
	needProcesses(t)
	watchdog(t, 60*time.Second)
	region := newRegion(t, RingSize(1024))
	p, err := CreateRing(region, 0, 1024, RoleProducer, knit.Park{Spin: knit.NoSpin})
	if err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "stall", region, "KNIT_SHM_TEST_ROLE="+strconv.Itoa(int(RoleConsumer)))
	waitFor(t, "the child attached", func() bool { return p.PeerPid() == c.cmd.Process.Pid }, p.debugState)
	if err := p.Send(context.Background(), []byte("kept")); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(c.cmd.Process.Pid)
	if _, err := AttachRing(region, 0, RoleConsumer, knit.Park{}); !errors.Is(err, ErrWrongSide) || !strings.Contains(err.Error(), pid) {
		t.Fatalf("attach while pid %s holds the end: %v, want ErrWrongSide naming it", pid, err)
	}
	c.kill(t)
	c.wait(t, 30*time.Second)
	r, err := AttachRing(region, 0, RoleConsumer, knit.Park{})
	if err != nil {
		t.Fatalf("attach after the holder died: %v", err)
	}
	if r.PeerPid() != os.Getpid() || p.PeerPid() != os.Getpid() {
		t.Errorf("PeerPid %d/%d after taking over, want %d", r.PeerPid(), p.PeerPid(), os.Getpid())
	}
	// The new holder starts where the dead one left off.
	buf := make([]byte, 8)
	if n, err := r.Recv(context.Background(), buf); err != nil || string(buf[:n]) != "kept" {
		t.Errorf("Recv after taking over: %q, %v", buf[:n], err)
	}
	if _, err := AttachRing(region, 0, RoleConsumer, knit.Park{}); !errors.Is(err, ErrWrongSide) {
		t.Errorf("attach while this process holds the end: %v, want ErrWrongSide", err)
	}
}
