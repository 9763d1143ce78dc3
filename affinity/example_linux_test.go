package affinity_test

import (
	"fmt"
	"log"
	"slices"

	"github.com/knit-go/knit/affinity"
)

// Pin the calling goroutine's thread to one CPU, work there, and let the
// deferred release restore the thread's mask and unlock the goroutine.
// On darwin and other systems Pin returns an error wrapping
// errors.ErrUnsupported.
func ExamplePin() {
	avail, err := affinity.Available()
	if err != nil {
		log.Fatal(err)
	}
	cpu := slices.Collect(avail.All())[0]
	release, err := affinity.Pin(cpu) // cpu must be in Available()
	if err != nil {
		log.Fatal(err)
	}
	defer release() // on this goroutine

	// This goroutine now runs alone on a thread that runs only on cpu.
	now, err := affinity.Current()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("running on the pinned CPU:", now == cpu)
	// Output: running on the pinned CPU: true
}
