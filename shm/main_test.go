package shm_test

import (
	"flag"
	"os"
	"testing"

	"github.com/knit-go/knit/shm"
)

// TestMain is the test binary's main. Its children start here too: the
// tests' peers and workers (RunTestChild), the peer of Example, and the
// workers of ExampleStartWorkers, which serve upper. Only the parent runs
// the tests.
func TestMain(m *testing.M) {
	if code, ok := shm.RunTestChild(); ok {
		os.Exit(code)
	}
	if os.Getenv("SHM_EXAMPLE_PEER") == "1" {
		examplePeer()
		os.Exit(0)
	}
	shm.ServeIfChild(upper)

	// Under an emulator that the kernel does not know (KNIT_TEST_EXEC
	// names it), the examples, which start this program as a user's
	// program would, cannot: skip them. The tests' own children go
	// through the emulator.
	flag.Parse()
	if os.Getenv("KNIT_TEST_EXEC") != "" {
		if f := flag.Lookup("test.skip"); f != nil && f.Value.String() == "" {
			f.Value.Set("^Example$|^ExampleStartWorkers$")
		}
	}
	os.Exit(m.Run())
}
