package harness

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/knit-go/knit/bench/httpiso"
)

// Launcher says how to start the processes the harness drives.
type Launcher struct {
	// Exe is an executable that runs the server when its first argument
	// is "serve" and the load generator when it is "load": the harness
	// binary itself, or a test binary that dispatches the same way.
	Exe string
	// ServerExe, if set, is a separate server binary (cmd/httpiso-server)
	// started without the "serve" argument.
	ServerExe string
	// Env is added to the children's environment.
	Env []string
}

// server is one running server child.
type server struct {
	cfg    Config
	cmd    *exec.Cmd
	pid    int
	port   int
	nonce  string
	out    *syncBuffer
	exited chan struct{} // closed when the child has been reaped
	err    error         // cmd.Wait's result, valid after exited
}

// startServer checks that port is free, starts a server for cfg pinned
// to cpus at the given nice value, waits until it answers, and asserts that what answers is the
// child it started, configured as asked. The secret reaches the child in
// its environment only.
func (l Launcher) startServer(cfg Config, port int, cpus CPUList, nice int, secret string) (*server, error) {
	if err := portFree(port); err != nil {
		return nil, err
	}
	nonce := newNonce()
	args := []string{
		"-addr", "127.0.0.1:" + strconv.Itoa(port),
		"-variant", cfg.Variant.Name,
		"-workers", strconv.Itoa(max(cfg.Variant.Workers, 1)),
		"-spin", cfg.Variant.Spin.String(),
		"-gomaxprocs", strconv.Itoa(cfg.GOMAXPROCS),
		"-nonce", nonce,
	}
	exe := l.ServerExe
	if exe == "" {
		exe, args = l.Exe, append([]string{"serve"}, args...)
	}
	cmd := exec.Command(exe, args...)
	// No shell, no setsid: cmd.Process.Pid is the server itself, which is
	// the first of the Knitting example's harness pitfalls avoided by construction.
	cmd.Env = append(append(os.Environ(), l.Env...), httpiso.SecretEnv+"="+secret)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := startPinned(cmd, cpus, nice); err != nil {
		return nil, fmt.Errorf("starting %s: %v", cfg, err)
	}
	s := &server{cfg: cfg, cmd: cmd, pid: cmd.Process.Pid, port: port, nonce: nonce, out: out, exited: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.exited) }()

	want := Expect{PID: s.pid, Nonce: nonce, Config: cfg, CPUs: cpus, Nice: nice}
	if err := s.waitReady(10 * time.Second); err != nil {
		s.kill()
		return nil, err
	}
	if err := AssertIdentity(s.addr(), want); err != nil {
		s.kill()
		return nil, fmt.Errorf("identity of %s (pid %d): %v", cfg, s.pid, err)
	}
	return s, nil
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// waitReady polls /__id until the child answers, exits, or d passes.
func (s *server) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("server %s exited at start: %v\n%s", s.cfg, s.err, s.out.String())
		default:
		}
		if _, err := fetchIdentity(s.addr(), 200*time.Millisecond); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server %s did not answer on %s within %v\n%s", s.cfg, s.addr(), d, s.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM to the child's PID (never a pattern: the Knitting example's
// second pitfall), waits for it to exit, escalates to SIGKILL after
// grace, and then requires the port to be free again. A server that
// needed SIGKILL or exited non-zero is an error: its graceful shutdown,
// pool close included, is part of what is tested.
func (s *server) stop(grace time.Duration) error {
	var errs []error
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		errs = append(errs, fmt.Errorf("SIGTERM pid %d: %v", s.pid, err))
	}
	select {
	case <-s.exited:
		if s.err != nil {
			errs = append(errs, fmt.Errorf("server %s pid %d exited with %v\n%s", s.cfg, s.pid, s.err, s.out.String()))
		}
	case <-time.After(grace):
		s.kill()
		errs = append(errs, fmt.Errorf("server %s pid %d ignored SIGTERM for %v; killed", s.cfg, s.pid, grace))
	}
	if err := waitPortFree(s.port, 5*time.Second); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// kill ends the child by PID and reaps it.
func (s *server) kill() {
	s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
	}
}

// portFree reports an error when something already listens on
// 127.0.0.1:port. Binding is the test: a stale server from an earlier
// configuration would answer the readiness probe and be measured in the
// new one's name (the Knitting example's first pitfall).
func portFree(port int) error {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("port %d is not free before start: %v", port, err)
	}
	return ln.Close()
}

func waitPortFree(port int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		err := portFree(port)
		if err == nil || time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("port %d still held %v after the server exited: %v", port, d, err)
			}
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort picks a free loopback port for the whole run, so that a
// server outliving its configuration is caught by portFree instead of
// answering for the next one. It picks below the kernel's ephemeral range
// (ip_local_port_range): a port inside it can be taken between two
// configurations by any process's outgoing connection, which would stop
// the run for nothing.
func freePort() (int, error) {
	lo := ephemeralLow()
	if lo > 10000 {
		start := 10000 + int(time.Now().UnixNano()%int64(lo-10000))
		for i := range 200 {
			p := 10000 + (start-10000+i*97)%(lo-10000)
			if portFree(p) == nil {
				return p, nil
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow is the bottom of the kernel's ephemeral port range, or 0
// where it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

func newNonce() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newSecret is a fresh random HS256 key for one run.
func newSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// syncBuffer collects a child's output for error messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() > 64<<10 { // keep the head: the start-up errors
		return len(p), nil
	}
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
