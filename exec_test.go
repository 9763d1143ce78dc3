package knit

import (
	"os"
	"os/exec"
	"strings"
)

// selfCommand re-executes the test binary with args. When the tests run
// under an emulator that the kernel does not know about (binfmt_misc not
// registered), KNIT_TEST_EXEC names the wrapper (for example
// "qemu-aarch64-static") so children run the same way as the parent.
func selfCommand(args ...string) *exec.Cmd {
	if w := strings.Fields(os.Getenv("KNIT_TEST_EXEC")); len(w) > 0 {
		return exec.Command(w[0], append(append(w[1:], os.Args[0]), args...)...)
	}
	return exec.Command(os.Args[0], args...)
}
