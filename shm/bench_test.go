//go:build linux || darwin

package shm

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/cputime"
)

// Benchmarks: a round trip (send a message, get it echoed back) and
// one-way throughput for 64 B, 4 KiB and 64 KiB messages, over
//
//	shm         two processes, two rings, the default spin (none below
//	            four Ps or CPUs, knit.DefaultWorkerSpin otherwise)
//	shm-spin    the same with knit.Park{Spin: knit.DefaultWorkerSpin}
//	            on both sides
//	unix        a unix-domain stream socket pair (net.Conn in the parent)
//	pipe        two pipes
//	tcp         loopback TCP, 127.0.0.1
//	inproc      both ring ends in this process, two goroutines: the limit
//
// Sub-benchmarks, so -count interleaves the transports. Frames on the byte
// streams are [length uint32][payload]; the peer reads them through a
// 128 KiB bufio.Reader. cpu-ns/op is the CPU time of both processes;
// p50-ns and p99-ns are round-trip percentiles.

var benchSizes = []int{64, 4 << 10, 64 << 10}

var benchTransports = []string{"shm", "shm-spin", "unix", "pipe", "tcp", "inproc"}

const benchCap = 1 << 20

func BenchmarkRoundTrip(b *testing.B) {
	for _, size := range benchSizes {
		for _, tr := range benchTransports {
			b.Run("size="+strconv.Itoa(size)+"/"+tr, func(b *testing.B) {
				runBench(b, tr, size, true)
			})
		}
	}
}

func BenchmarkThroughput(b *testing.B) {
	for _, size := range benchSizes {
		for _, tr := range benchTransports {
			b.Run("size="+strconv.Itoa(size)+"/"+tr, func(b *testing.B) {
				runBench(b, tr, size, false)
			})
		}
	}
}

// link is one transport's parent side: send one message, receive one,
// and sync (send an empty message; the peer, which sinks everything
// else in throughput mode, echoes it).
type link struct {
	send  func(p []byte)
	recv  func(buf []byte) int
	close func() (childCPU time.Duration)
}

func runBench(b *testing.B, tr string, size int, roundTrip bool) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		b.Skip("no regions on", runtime.GOOS)
	}
	mode := "echo"
	if !roundTrip {
		mode = "sink"
	}
	var l link
	switch tr {
	case "shm":
		l = shmLink(b, mode, 0)
	case "shm-spin":
		l = shmLink(b, mode, knit.DefaultWorkerSpin)
	case "inproc":
		l = inprocLink(b, mode)
	default:
		l = fdLink(b, tr, mode)
	}
	msg := make([]byte, size)
	buf := make([]byte, size)
	b.SetBytes(int64(size))
	var lat []time.Duration
	if roundTrip {
		lat = make([]time.Duration, 0, b.N)
	}
	cpu0 := selfCPU()
	b.ResetTimer()
	for range b.N {
		if roundTrip {
			t0 := time.Now()
			l.send(msg)
			if n := l.recv(buf); n != size {
				b.Fatalf("echo of %d bytes, want %d", n, size)
			}
			lat = append(lat, time.Since(t0))
		} else {
			l.send(msg)
		}
	}
	if !roundTrip {
		l.send(nil) // everything before it has been consumed once it comes back
		l.recv(buf)
	}
	b.StopTimer()
	cpu := selfCPU() - cpu0 + l.close()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	if len(lat) > 0 {
		// The median round trip: on a noisy machine the mean (ns/op) is
		// the scheduler's tail; the median is the mechanism.
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	}
}

func selfCPU() time.Duration {
	d, _ := cputime.Process()
	return d
}

func childCPU(c *child) time.Duration {
	if c.cmd.ProcessState == nil {
		return 0
	}
	return c.cmd.ProcessState.UserTime() + c.cmd.ProcessState.SystemTime()
}

func shmLink(b *testing.B, mode string, s time.Duration) link {
	region := newRegion(b, 2*RingSize(benchCap))
	park := knit.Park{Spin: s}
	out, err := CreateRing(region, 0, benchCap, RoleProducer, park)
	if err != nil {
		b.Fatal(err)
	}
	in, err := CreateRing(region, RingSize(benchCap), benchCap, RoleConsumer, park)
	if err != nil {
		b.Fatal(err)
	}
	c := startChild(b, "bench-"+mode+"-shm", region, "KNIT_SHM_TEST_OFF=0",
		"KNIT_SHM_TEST_OFF2="+strconv.Itoa(RingSize(benchCap)), "KNIT_SHM_TEST_SPIN="+strconv.Itoa(int(s)))
	ctx := context.Background()
	return link{
		send: func(p []byte) {
			if err := out.Send(ctx, p); err != nil {
				b.Fatal(err)
			}
		},
		recv: func(buf []byte) int {
			n, err := in.Recv(ctx, buf)
			if err != nil {
				b.Fatal(err)
			}
			return n
		},
		close: func() time.Duration {
			out.Close()
			if _, err := c.wait(b, 10*time.Second); err != nil {
				b.Fatal(err)
			}
			return childCPU(c)
		},
	}
}

func inprocLink(b *testing.B, mode string) link {
	out, peerIn := pair(b, benchCap, knit.Park{})
	peerOut, in := pair(b, benchCap, knit.Park{})
	var wg sync.WaitGroup
	wg.Go(func() {
		ctx := context.Background()
		for {
			p, err := peerIn.Peek(ctx)
			if err != nil {
				peerOut.Close()
				return
			}
			if mode == "echo" || len(p) == 0 {
				peerOut.Send(ctx, p)
			}
			peerIn.Release()
		}
	})
	ctx := context.Background()
	return link{
		send: func(p []byte) { out.Send(ctx, p) },
		recv: func(buf []byte) int {
			n, _ := in.Recv(ctx, buf)
			return n
		},
		close: func() time.Duration {
			out.Close()
			wg.Wait()
			return 0
		},
	}
}

// fdLink starts the fd child with the peer ends of the transport as fds
// 3 (it reads) and 4 (it writes).
func fdLink(b *testing.B, tr, mode string) link {
	var w io.Writer
	var r io.Reader
	var peer []*os.File
	var closers []io.Closer
	switch tr {
	case "unix":
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			b.Fatal(err)
		}
		mine := os.NewFile(uintptr(fds[0]), "unix")
		conn, err := net.FileConn(mine)
		mine.Close()
		if err != nil {
			b.Fatal(err)
		}
		theirs := os.NewFile(uintptr(fds[1]), "unix-peer")
		peer = []*os.File{theirs, theirs}
		w, r = conn, conn
		closers = []io.Closer{conn}
	case "pipe":
		r1, w1, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		r2, w2, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		peer = []*os.File{r1, w2}
		w, r = w1, r2
		closers = []io.Closer{w1, r2}
	case "tcp":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		acc, err := ln.Accept()
		ln.Close()
		if err != nil {
			b.Fatal(err)
		}
		theirs, err := acc.(*net.TCPConn).File()
		acc.Close()
		if err != nil {
			b.Fatal(err)
		}
		peer = []*os.File{theirs, theirs}
		w, r = conn, conn
		closers = []io.Closer{conn}
	}
	c := startChildFiles(b, "bench-"+mode+"-fd", peer)
	for _, f := range peer {
		f.Close() // the child has its copies; EOF must reach it when we close ours
	}
	br := bufio.NewReaderSize(r, 1<<17)
	frame := make([]byte, 4+64<<10)
	return link{
		send: func(p []byte) {
			binary.LittleEndian.PutUint32(frame, uint32(len(p)))
			copy(frame[4:], p)
			if _, err := w.Write(frame[:4+len(p)]); err != nil {
				b.Fatal(err)
			}
		},
		recv: func(buf []byte) int {
			if _, err := io.ReadFull(br, frame[:4]); err != nil {
				b.Fatal(err)
			}
			n := int(binary.LittleEndian.Uint32(frame))
			if _, err := io.ReadFull(br, buf[:n]); err != nil {
				b.Fatal(err)
			}
			return n
		},
		close: func() time.Duration {
			for _, c := range closers {
				c.Close()
			}
			if _, err := c.wait(b, 10*time.Second); err != nil {
				b.Fatal(err)
			}
			return childCPU(c)
		},
	}
}
