package knit

import (
	"os/exec"

	"github.com/knit-go/knit/internal/testutil"
)

// selfCommand re-executes the test binary with args (testutil.SelfCommand).
func selfCommand(args ...string) *exec.Cmd { return testutil.SelfCommand(args...) }
