// Command shmworkers runs a handler in two worker processes and calls it
// over shared memory: the smallest complete program built on shm.Workers.
//
// The same binary is parent and worker. StartWorkers starts copies of it
// with the shared memory as an inherited descriptor, and in those copies
// ServeIfChild, the first line of main, serves calls and never returns.
//
//	go run ./examples/shmworkers
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/knit-go/knit/shm"
)

// handle runs in a worker for each call. req is reused for the next call,
// and the result is copied to the parent before the next call: keep
// neither.
func handle(req []byte) []byte {
	return fmt.Appendf(nil, "pid %d: %s", os.Getpid(), strings.ToUpper(string(req)))
}

func main() {
	shm.ServeIfChild(handle) // in a worker: serves until the parent closes, then exits
	log.SetFlags(0)

	ws, err := shm.StartWorkers(shm.WorkerConfig{Workers: 2})
	if err != nil {
		log.Fatal(err)
	}
	// Interrupt stops the loop; Close then shuts the workers down.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	for _, req := range []string{"hello", "from", "the parent", "over", "shared memory"} {
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		out, err := ws.Call(callCtx, []byte(req))
		cancel()
		if ctx.Err() != nil {
			log.Print("interrupted")
			break
		}
		if err != nil {
			// ErrWorkerDied: the worker is restarted at its next call.
			log.Printf("%q: %v", req, err)
			continue
		}
		fmt.Printf("%-15q -> %s\n", req, out)
	}

	// Close ends the workers' rings; each worker's ServeIfChild returns
	// from its loop and exits 0. Close waits for them.
	if err := ws.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("workers stopped")
}
