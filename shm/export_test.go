package shm

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/knit-go/knit"
)

// RunTestChild runs the child mode named by KNIT_SHM_TEST_CHILD, if any,
// and reports its exit code; TestMain (main_test.go) calls it first.
// Children get the region as fd 3 and their parameters as KNIT_SHM_TEST_*
// variables; mode "worker" serves workerHandler for StartWorkers.
func RunTestChild() (code int, ok bool) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return 0, false
	}
	if mode == "exit-at-once" {
		return 3, true // a worker command that dies before it serves
	}
	if mode == "worker" {
		ServeIfChild(workerHandler)
		fmt.Fprintln(os.Stderr, "child worker: started without StartWorkers")
		return 1, true
	}
	if err := runChild(mode); err != nil {
		fmt.Fprintf(os.Stderr, "child %s (pid %d): %v\n", mode, os.Getpid(), err)
		return 1, true
	}
	return 0, true
}

// workerHandler is what the worker children of the tests serve.
//
//	"pid"            the child's pid
//	"sleep:D"        sleeps for duration D, answers "slept"
//	"panic"          panics (the worker dies)
//	"exit"           exits with status 7
//	"big"            a response larger than the ring
//	"print:TEXT"     writes TEXT and a newline to stdout, answers "printed"
//	"start-workers"  calls StartWorkers, answers "started" or the error
//	"count"          counts the call, answers the count so far
//	"count?"         answers the count without counting
//	"block:PATH"     waits until the file PATH exists (at most a minute),
//	                 answers "released"
//	anything else    the request reversed
func workerHandler(req []byte) []byte {
	s := string(req)
	switch {
	case s == "count":
		handled++
		return []byte(strconv.Itoa(handled))
	case s == "count?":
		return []byte(strconv.Itoa(handled))
	case strings.HasPrefix(s, "block:"):
		for range 60_000 {
			if _, err := os.Stat(s[6:]); err == nil {
				break
			}
			time.Sleep(time.Millisecond) // polls for the test's release
		}
		return []byte("released")
	case s == "pid":
		return []byte(strconv.Itoa(os.Getpid()))
	case strings.HasPrefix(s, "sleep:"):
		d, _ := time.ParseDuration(s[6:])
		time.Sleep(d)
		return []byte("slept")
	case s == "panic":
		panic("test handler asked to panic")
	case s == "exit":
		os.Exit(7)
	case s == "big":
		return make([]byte, 1<<21)
	case strings.HasPrefix(s, "print:"):
		fmt.Println(s[6:])
		return []byte("printed")
	case s == "start-workers":
		ws, err := StartWorkers(WorkerConfig{Workers: 1, Command: func() *exec.Cmd { return selfCommand(childEnv + "=worker") }})
		if err != nil {
			return []byte(err.Error())
		}
		ws.Close()
		return []byte("started")
	}
	out := make([]byte, len(req))
	for i, b := range req {
		out[len(req)-1-i] = b
	}
	return out
}

// handled is what "count" counts, in a worker child: it serves one call
// at a time.
var handled int

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func runChild(mode string) error {
	off := envInt("KNIT_SHM_TEST_OFF", 0)
	off2 := envInt("KNIT_SHM_TEST_OFF2", 0)
	n := envInt("KNIT_SHM_TEST_N", 0)
	seed := uint64(envInt("KNIT_SHM_TEST_SEED", 1))
	maxLen := envInt("KNIT_SHM_TEST_MAX", 0)
	spin := time.Duration(envInt("KNIT_SHM_TEST_SPIN", 0))
	ctx := context.Background()

	switch mode {
	case "bench-echo-fd", "bench-sink-fd":
		return fdChild(mode)
	case "close-while-blocked":
		return closeWhileBlocked(os.Getenv("KNIT_SHM_TEST_CASE"))
	case "forgot-serve":
		return forgotServe()
	case "workers-print":
		return workersPrint()
	}
	region, err := OpenFD(3)
	if err != nil {
		return err
	}
	defer region.Close()
	attach := func(off int, role Role) (*Ring, error) {
		return AttachRing(region, off, role, knit.Park{Spin: spin})
	}

	switch mode {
	case "consume":
		r, err := attach(off, RoleConsumer)
		if err != nil {
			return err
		}
		buf := make([]byte, r.MaxMessage())
		scratch := make([]byte, r.MaxMessage())
		crc := crc32.NewIEEE()
		for i := range uint64(n) {
			m, err := r.Recv(ctx, buf)
			if err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			if d := checkMsg(buf[:m], scratch, seed, i, maxLen); d != "" {
				return errors.New(d)
			}
			crc.Write(buf[:m])
		}
		if _, err := r.Recv(ctx, buf); !errors.Is(err, ErrClosed) {
			return fmt.Errorf("after %d messages: %v, want ErrClosed", n, err)
		}
		fmt.Printf("ok %d %08x\n", n, crc.Sum32())
		return nil

	case "produce", "produce-forever":
		r, err := attach(off, RoleProducer)
		if err != nil {
			return err
		}
		buf := make([]byte, r.MaxMessage())
		crc := crc32.NewIEEE()
		for i := uint64(0); mode == "produce-forever" || i < uint64(n); i++ {
			m := msgLen(seed, i, maxLen)
			fillMsg(buf[:m], seed, i)
			if err := r.Send(ctx, buf[:m]); err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			crc.Write(buf[:m])
		}
		r.Close()
		fmt.Printf("ok %d %08x\n", n, crc.Sum32())
		return nil

	case "echo", "bench-echo-shm", "bench-sink-shm":
		in, err := attach(off, RoleConsumer)
		if err != nil {
			return err
		}
		out, err := attach(off2, RoleProducer)
		if err != nil {
			return err
		}
		defer out.Close()
		for {
			p, err := in.Peek(ctx)
			if errors.Is(err, ErrClosed) {
				return nil
			}
			if err != nil {
				return err
			}
			if mode != "bench-sink-shm" || len(p) == 0 {
				if err := out.Send(ctx, p); err != nil {
					return err
				}
			}
			if err := in.Release(); err != nil {
				return err
			}
		}

	case "stall":
		role := Role(envInt("KNIT_SHM_TEST_ROLE", int(RoleConsumer)))
		r, err := attach(off, role)
		if err != nil {
			return err
		}
		if role == RoleProducer {
			for i := range 3 {
				if err := r.Send(ctx, []byte{byte(i)}); err != nil {
					return err
				}
			}
		}
		// Hold the ring until killed, or until the parent is gone (a
		// crashed test must not leave this behind).
		ppid := os.Getppid()
		for range 30_000 {
			if os.Getppid() != ppid {
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	}
	return fmt.Errorf("unknown child mode %q", mode)
}

// fdChild echoes (or sinks, acknowledging zero-length frames) frames of
// [length uint32][payload] read from fd 3 and written to fd 4.
func fdChild(mode string) error {
	in := os.NewFile(3, "in")
	out := os.NewFile(4, "out")
	br := bufio.NewReaderSize(in, 1<<17)
	buf := make([]byte, 4+1<<17)
	for {
		if _, err := io.ReadFull(br, buf[:4]); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		n := binary.LittleEndian.Uint32(buf)
		if int(n) > len(buf)-4 {
			return fmt.Errorf("frame of %d bytes", n)
		}
		if _, err := io.ReadFull(br, buf[4:4+n]); err != nil {
			return err
		}
		if mode == "bench-echo-fd" || n == 0 {
			if _, err := out.Write(buf[:4+n]); err != nil {
				return err
			}
		}
	}
}
