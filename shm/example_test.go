package shm_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/shm"
)

// examplePeer is the child's side of Example: map the region inherited as
// fd 3, take the consumer end of the request ring and the producer end of
// the reply ring, and answer each message in upper case until the parent
// closes. A program calls it first thing in main when SHM_EXAMPLE_PEER is
// set; in this test binary TestMain does.
func examplePeer() {
	region, err := shm.OpenFD(3)
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	req, err := shm.AttachRing(region, 0, shm.RoleConsumer, knit.Park{})
	if err != nil {
		log.Fatal(err)
	}
	reply, err := shm.AttachRing(region, shm.RingSize(4096), shm.RoleProducer, knit.Park{})
	if err != nil {
		log.Fatal(err)
	}
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
// request ring and a reply ring, starts a copy of itself with the region
// as an inherited descriptor, and exchanges messages with it. The child
// runs examplePeer above.
func Example() {
	region, err := shm.Create("example", 2*shm.RingSize(4096))
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	req, err := shm.CreateRing(region, 0, 4096, shm.RoleProducer, knit.Park{})
	if err != nil {
		log.Fatal(err)
	}
	reply, err := shm.CreateRing(region, shm.RingSize(4096), 4096, shm.RoleConsumer, knit.Park{})
	if err != nil {
		log.Fatal(err)
	}

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SHM_EXAMPLE_PEER=1")
	cmd.ExtraFiles = []*os.File{region.File()} // fd 3 in the child
	cmd.Stderr = os.Stderr
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

// upper is the workers' handler in ExampleStartWorkers.
func upper(req []byte) []byte { return bytes.ToUpper(req) }

// Process workers: the same program runs as the parent and, started by
// StartWorkers, as each worker. ServeIfChild comes first in main: in a
// worker it serves calls with upper and never returns; in the parent it
// returns at once. (This test binary's main is TestMain, which makes the
// same call.)
func ExampleStartWorkers() {
	shm.ServeIfChild(upper) // the first line of main

	ws, err := shm.StartWorkers(shm.WorkerConfig{Workers: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close() // the workers exit once their rings close
	for _, req := range []string{"knit", "shared memory"} {
		out, err := ws.Call(context.Background(), []byte(req))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s -> %s\n", req, out)
	}
	// Output:
	// knit -> KNIT
	// shared memory -> SHARED MEMORY
}

// Zero-copy: Reserve a message's bytes in the ring, fill them in place,
// Commit; Peek at the next message in place, Release it.
func ExampleRing_Reserve() {
	region, err := shm.Create("zero-copy", shm.RingSize(1024))
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	p, err := shm.CreateRing(region, 0, 1024, shm.RoleProducer, knit.Park{})
	if err != nil {
		log.Fatal(err)
	}
	c, err := shm.AttachRing(region, 0, shm.RoleConsumer, knit.Park{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	dst, err := p.Reserve(ctx, 64)
	if err != nil {
		log.Fatal(err)
	}
	n := copy(dst, "built in place")
	if err := p.Commit(n); err != nil { // publish the first n bytes
		log.Fatal(err)
	}

	msg, err := c.Peek(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", msg)
	if err := c.Release(); err != nil {
		log.Fatal(err)
	}
	// Output: "built in place"
}
