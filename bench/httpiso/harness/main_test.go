package harness

import (
	"os"
	"testing"
)

// childEnv marks a re-executed test binary: with it set and "serve" or
// "load" as the first argument, the binary is that child, as the real
// httpiso-bench binary is.
const childEnv = "HTTPISO_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" && len(os.Args) > 1 && (os.Args[1] == "serve" || os.Args[1] == "load") {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Children inherit it; this process's own arguments are test flags,
	// so it stays the test.
	os.Setenv(childEnv, "1")
	os.Exit(m.Run())
}

// testLauncher starts children from this test binary.
func testLauncher(t *testing.T) Launcher {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Launcher{Exe: exe}
}
