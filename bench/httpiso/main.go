package httpiso

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/knit-go/knit/pool"
)

// SecretEnv names the environment variable holding the HS256 key. There
// is no default: a server that signs tokens with a key in its source is a
// server whose tokens anyone can forge.
const SecretEnv = "HTTPISO_JWT_SECRET"

// Main is the server's command line (cmd/httpiso-server, and the harness
// re-executing itself as "httpiso-bench serve"). It serves until SIGINT or
// SIGTERM, then shuts down gracefully: stop accepting, finish in-flight
// requests, close the pool. It returns the exit status: 2 for bad flags
// or environment, 1 for a failure to serve.
//
// Flags fall back to environment variables, the Knitting example's names where it
// has one: KNIT_THREADS for -workers, KNIT_SPIN for -spin.
func Main(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("httpiso-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr    = fs.String("addr", envOr(getenv, "HTTPISO_ADDR", "127.0.0.1:8080"), "listen address; the host must be 127.0.0.1 (port 0 picks one)")
		variant = fs.String("variant", envOr(getenv, "HTTPISO_VARIANT", Inline), "where heavy work runs: inline, knit, semaphore or ants")
		workers = fs.Int("workers", envInt(getenv, "KNIT_THREADS", 1), "pool size (knit, ants) or semaphore weight")
		spin    = fs.String("spin", envOr(getenv, "KNIT_SPIN", "default"), "knit spin budget: default, microseconds (0, 50) or a duration (50us)")
		procs   = fs.Int("gomaxprocs", envInt(getenv, "HTTPISO_GOMAXPROCS", 0), "GOMAXPROCS for the server (0 keeps the runtime's choice)")
		nonce   = fs.String("nonce", "", "echoed by GET /__id, so a harness can tell this process from another")
		maxBody = fs.Int64("max-body", DefaultMaxBody, "largest request body in bytes; larger is 413")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "httpiso-server: "+format+"\n", a...)
		return code
	}
	if fs.NArg() > 0 {
		return fail(2, "unexpected arguments %q", fs.Args())
	}
	secret := getenv(SecretEnv)
	if secret == "" {
		return fail(2, "%s is not set: refusing to start without a JWT secret", SecretEnv)
	}
	if err := checkLoopback(*addr); err != nil {
		return fail(2, "%v", err)
	}
	sp, err := ParseSpin(*spin)
	if err != nil {
		return fail(2, "%v", err)
	}
	if *procs < 0 {
		return fail(2, "-gomaxprocs %d: want >= 0", *procs)
	}
	if *procs > 0 {
		// Before the pool starts, so its workers never see another value.
		runtime.GOMAXPROCS(*procs)
	}

	srv, err := NewServer(Config{
		Variant: VariantConfig{Name: *variant, Workers: *workers, Spin: sp},
		Secret:  []byte(secret),
		MaxBody: *maxBody,
		Nonce:   *nonce,
	})
	if err != nil {
		return fail(2, "%v", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		srv.Close(context.Background())
		return fail(1, "%v", err)
	}
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       60 * time.Second,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	id := srv.ID()
	fmt.Fprintf(stdout, "httpiso-server: serving on %s pid=%d %s gomaxprocs=%d\n",
		ln.Addr(), id.PID, srv.cfg.Variant, id.GOMAXPROCS)

	code := 0
	select {
	case <-ctx.Done():
	case err := <-served:
		code = fail(1, "serve: %v", err)
	}
	stop() // a second signal kills at once

	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		code = fail(1, "shutdown: %v", err)
	}
	if k, ok := srv.exec.(*knitExec); ok {
		st := k.Stats()
		fmt.Fprintf(stderr, "httpiso-server: pool stats: %s\n", formatStats(st))
	}
	if err := srv.Close(sctx); err != nil {
		code = fail(1, "closing the %s variant: %v", *variant, err)
	}
	return code
}

// checkLoopback refuses any address but 127.0.0.1: this is a benchmark
// server with a toy secret policy, not something to expose.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %v", addr, err)
	}
	if host != "127.0.0.1" {
		return fmt.Errorf("-addr %q: only 127.0.0.1 is allowed", addr)
	}
	return nil
}

func formatStats(s pool.Stats) string {
	return fmt.Sprintf("workers=%d completed=%d panicked=%d stolen=%d parks=%d wakes=%d spinhits=%d",
		s.Workers, s.Completed, s.Panicked, s.Stolen, s.Parks, s.Wakes, s.SpinHits)
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func envInt(getenv func(string) string, key string, def int) int {
	if v := getenv(key); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}
