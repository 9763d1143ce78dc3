package shm_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/knit-go/knit/shm"
)

func TestMain(m *testing.M) {
	// A worker child serves and exits here; so do the examples' and the
	// tests' other children. Only the parent runs the tests.
	shm.ServeIfChild(shm.WorkerHandler)
	if os.Getenv("SHM_EXAMPLE_PEER") == "1" {
		examplePeer()
		os.Exit(0)
	}
	if code, ok := shm.RunTestChild(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// peerCommand re-executes this program as the example's peer; under an
// emulator that binfmt_misc does not cover, KNIT_TEST_EXEC names the
// wrapper to run it with.
func peerCommand(env ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if w := strings.Fields(os.Getenv("KNIT_TEST_EXEC")); len(w) > 0 {
		cmd = exec.Command(w[0], append(w[1:], os.Args[0])...)
	} else {
		cmd = exec.Command(os.Args[0])
	}
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// The child's side of Example: map the region it inherited as fd 3,
// take the consumer end of the request ring and the producer end of the
// reply ring, and answer each message in upper case until the parent
// closes.
func examplePeer() {
	region, err := shm.OpenFD(3)
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	req, err := shm.AttachRing(region, 0, shm.Consumer)
	if err != nil {
		log.Fatal(err)
	}
	reply, err := shm.AttachRing(region, shm.RingSize(4096), shm.Producer)
	if err != nil {
		log.Fatal(err)
	}
	defer reply.Close()
	buf := make([]byte, req.MaxMessage())
	for {
		n, err := req.Recv(context.Background(), buf)
		if err != nil { // shm.ErrClosed once the parent is done
			return
		}
		if err := reply.Send(context.Background(), bytes.ToUpper(buf[:n])); err != nil {
			return
		}
	}
}

// Two processes, two rings: the parent creates a region holding a
// request ring and a reply ring, starts a child with the region as an
// inherited descriptor, and exchanges messages with it. The child's side
// is examplePeer above.
func Example() {
	region, err := shm.Create("example", 2*shm.RingSize(4096))
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	req, err := shm.CreateRing(region, 0, 4096, shm.Producer)
	if err != nil {
		log.Fatal(err)
	}
	reply, err := shm.CreateRing(region, shm.RingSize(4096), 4096, shm.Consumer)
	if err != nil {
		log.Fatal(err)
	}

	cmd := peerCommand("SHM_EXAMPLE_PEER=1")
	cmd.ExtraFiles = []*os.File{region.File()} // fd 3 in the child
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	buf := make([]byte, reply.MaxMessage())
	for _, m := range []string{"hello", "from", "the parent"} {
		if err := req.Send(ctx, []byte(m)); err != nil {
			log.Fatal(err)
		}
		n, err := reply.Recv(ctx, buf)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s -> %s\n", m, buf[:n])
	}
	req.Close() // the child's Recv returns ErrClosed
	if err := cmd.Wait(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// hello -> HELLO
	// from -> FROM
	// the parent -> THE PARENT
}

// Process workers: the same program runs as the parent and, with
// ServeIfChild at the top of main (here TestMain), as each worker.
func ExampleStartWorkers() {
	ws, err := shm.StartWorkers(shm.WorkerConfig{
		Workers: 2,
		Command: func() *exec.Cmd { return peerCommand() },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	out, err := ws.Call(context.Background(), []byte("stressed"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", out) // WorkerHandler reverses its request
	// Output: desserts
}

// Zero-copy: Reserve a message's bytes in the ring, fill them in place,
// Commit; Peek at the next message in place, Release it.
func ExampleRing_Reserve() {
	region, err := shm.Create("zero-copy", shm.RingSize(1024))
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	p, _ := shm.CreateRing(region, 0, 1024, shm.Producer)
	c, _ := shm.AttachRing(region, 0, shm.Consumer)
	ctx := context.Background()

	dst, _ := p.Reserve(ctx, 64)
	n := copy(dst, "built in place")
	p.Commit(n) // publish the first n bytes

	msg, _ := c.Peek(ctx)
	fmt.Printf("%q\n", msg)
	c.Release()
	// Output: "built in place"
}
