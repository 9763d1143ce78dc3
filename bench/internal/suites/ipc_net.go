package suites

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/knit-go/knit/bench/internal/harness"
)

// The socket rows carry the same int64 messages as 8-byte little-endian
// frames, to an echo goroutine in this process: the cost of a kernel
// transport without a process boundary.

// udsIPC pipelines a batch over a unix-domain stream socket: the caller
// writes every frame then reads every reply; the server flushes whenever
// it has no more buffered input, so one batch costs a few syscalls.
type udsIPC struct {
	dir  string
	ln   net.Listener
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	done chan struct{}
}

func startUDSIPC(_ harness.Config, _ int) (ipcTransport, error) {
	dir, err := os.MkdirTemp("", "knitbench-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "echo.sock"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	u := &udsIPC{dir: dir, ln: ln, done: make(chan struct{})}
	go u.serve()
	conn, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		u.close()
		return nil, err
	}
	u.conn, u.r, u.w = conn, bufio.NewReader(conn), bufio.NewWriter(conn)
	return u, nil
}

func (u *udsIPC) serve() {
	defer close(u.done)
	c, err := u.ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	var b [8]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return
		}
		binary.LittleEndian.PutUint64(b[:], binary.LittleEndian.Uint64(b[:])+1)
		w.Write(b[:])
		if r.Buffered() == 0 && w.Flush() != nil {
			return
		}
	}
}

func (u *udsIPC) roundTrip(msgs, replies []int64) error {
	var b [8]byte
	for _, m := range msgs {
		binary.LittleEndian.PutUint64(b[:], uint64(m))
		u.w.Write(b[:])
	}
	if err := u.w.Flush(); err != nil {
		return err
	}
	for j := range replies {
		if _, err := io.ReadFull(u.r, b[:]); err != nil {
			return err
		}
		replies[j] = int64(binary.LittleEndian.Uint64(b[:]))
	}
	return nil
}

func (u *udsIPC) close() error {
	if u.conn != nil {
		u.conn.Close()
	}
	u.ln.Close()
	<-u.done
	return os.RemoveAll(u.dir)
}

// httpIPC sends each message as its own POST over one keep-alive
// connection to a net/http server on 127.0.0.1. The client does not
// pipeline, so a batch is that many sequential requests: the cost of
// putting HTTP between caller and worker, as the seed's HTTP row does.
type httpIPC struct {
	srv    *http.Server
	ln     net.Listener
	client *http.Client
	tr     *http.Transport
	url    string
	wg     sync.WaitGroup
}

func startHTTPIPC(_ harness.Config, _ int) (ipcTransport, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &httpIPC{ln: ln, url: "http://" + ln.Addr().String() + "/"}
	h.srv = &http.Server{Handler: http.HandlerFunc(echoHandler)}
	h.wg.Go(func() { h.srv.Serve(ln) })
	// Proxy stays nil: the request must go to loopback, never through an
	// environment proxy.
	h.tr = &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
	h.client = &http.Client{Transport: h.tr}
	return h, nil
}

func echoHandler(w http.ResponseWriter, r *http.Request) {
	var b [8]byte
	if _, err := io.ReadFull(r.Body, b[:]); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	binary.LittleEndian.PutUint64(b[:], binary.LittleEndian.Uint64(b[:])+1)
	w.Write(b[:])
}

func (h *httpIPC) roundTrip(msgs, replies []int64) error {
	var b [8]byte
	for j, m := range msgs {
		binary.LittleEndian.PutUint64(b[:], uint64(m))
		resp, err := h.client.Post(h.url, "application/octet-stream", bytes.NewReader(b[:]))
		if err != nil {
			return err
		}
		_, err = io.ReadFull(resp.Body, b[:])
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("http reply: %w (status %s)", err, resp.Status)
		}
		replies[j] = int64(binary.LittleEndian.Uint64(b[:]))
	}
	return nil
}

func (h *httpIPC) close() error {
	h.tr.CloseIdleConnections()
	err := h.srv.Close()
	h.wg.Wait()
	return err
}
