package harness

import (
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knit-go/knit/bench/httpiso"
)

func knitConfig(t *testing.T) Config {
	t.Helper()
	cfgs, err := ParseConfigs("inline,knit:2:0@2", 1)
	if err != nil {
		t.Fatal(err)
	}
	return cfgs[1]
}

// startTestServer starts a real server child from this test binary.
func startTestServer(t *testing.T, cfg Config, cpus CPUList, nice int) *server {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s, err := testLauncher(t).startServer(cfg, port, cpus, nice, newSecret())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			s.kill()
		}
	})
	return s
}

// TestIdentityAssertion: the assertion passes for the child the harness
// started and fails, naming the mismatch, when pointed at the wrong
// server: another nonce, another pid, another configuration.
func TestIdentityAssertion(t *testing.T) {
	cfg := knitConfig(t)
	avail, err := availableCPUs()
	if err != nil {
		t.Skip(err)
	}
	cpus := avail[:1]
	s := startTestServer(t, cfg, cpus, 5) // startServer has asserted once already
	good := Expect{PID: s.pid, Nonce: s.nonce, Config: cfg, CPUs: cpus, Nice: 5}
	if err := AssertIdentity(s.addr(), good); err != nil {
		t.Fatalf("the right server failed its identity: %v", err)
	}

	wrongNonce := good
	wrongNonce.Nonce = "0123456789abcdef"
	wrongPID := good
	wrongPID.PID = os.Getpid() // a live process that is not the server
	wrongCfg := good
	wrongCfg.Config.Variant.Workers = 3
	wrongCfg.Config.GOMAXPROCS = 1
	wrongNice := good
	wrongNice.Nice = 0
	for _, tc := range []struct {
		name string
		want Expect
		errs []string
	}{
		{"nonce", wrongNonce, []string{"nonce: server says " + s.nonce, "was not started with -nonce"}},
		{"pid", wrongPID, []string{"pid: server says", "does not own the socket", "was not started with -nonce"}},
		{"config", wrongCfg, []string{"workers: server says 2, harness expects 3", "gomaxprocs: server says 2, harness expects 1"}},
		{"nice", wrongNice, []string{"nice (/proc/PID/stat): server says 5, harness expects 0"}},
	} {
		err := AssertIdentity(s.addr(), tc.want)
		if err == nil {
			t.Errorf("wrong %s: assertion passed", tc.name)
			continue
		}
		for _, e := range tc.errs {
			if !strings.Contains(err.Error(), e) {
				t.Errorf("wrong %s: error lacks %q:\n%v", tc.name, e, err)
			}
		}
	}
	if len(avail) > 1 {
		wrongCPUs := good
		wrongCPUs.CPUs = avail[1:2]
		if err := AssertIdentity(s.addr(), wrongCPUs); err == nil || !strings.Contains(err.Error(), "affinity") {
			t.Errorf("wrong affinity: %v", err)
		}
	}

	// A stale server on the port: the next configuration must refuse to
	// start rather than measure it.
	if _, err := testLauncher(t).startServer(cfg, s.port, nil, 0, newSecret()); err == nil || !strings.Contains(err.Error(), "not free before start") {
		t.Errorf("starting over a live server: %v", err)
	}

	// Graceful stop by PID frees the port, and the server exits 0.
	if err := s.stop(10 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := portFree(s.port); err != nil {
		t.Errorf("after stop: %v", err)
	}
}

// TestIdentityImpostor: an in-process server that claims the right pid
// and nonce in /__id is still caught by what /proc says about the pid.
func TestIdentityImpostor(t *testing.T) {
	cfg := knitConfig(t)
	srv, err := httpiso.NewServer(httpiso.Config{Variant: cfg.Variant, Secret: []byte("s"), Nonce: "liar"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(t.Context())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	defer hs.Close()
	addr := ln.Addr().String()

	// A child started elsewhere: its pid is what the harness holds.
	child := startTestServer(t, cfg, nil, 0)
	err = AssertIdentity(addr, Expect{PID: child.pid, Nonce: "liar", Config: cfg})
	if err == nil {
		t.Fatal("an impostor passed")
	}
	for _, e := range []string{"pid: server says " + strconv.Itoa(os.Getpid()), "was not started with -nonce liar", "does not own the socket"} {
		if !strings.Contains(err.Error(), e) {
			t.Errorf("error lacks %q:\n%v", e, err)
		}
	}
}

// TestFreePortBelowEphemeral: the run's port is out of the range the
// kernel hands to outgoing connections, so none can take it between
// configurations.
func TestFreePortBelowEphemeral(t *testing.T) {
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if lo := ephemeralLow(); lo > 10000 && (p < 10000 || p >= lo) {
		t.Errorf("port %d is not in [10000, %d)", p, lo)
	}
	if err := portFree(p); err != nil {
		t.Errorf("picked port is not free: %v", err)
	}
}
